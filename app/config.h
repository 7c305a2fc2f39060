// The daemon's settings (SPEC §1): flags, each also UVSCHED_<NAME> in the
// environment; a flag beats its variable.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "policy/parallelism_policy.h"
#include "reactor/http_server.h"
#include "reactor/log.h"

namespace uvsched {

struct FunctionSize {
  double cpus = 0;
  double mem_mib = 0;
};

struct Config {
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 10200;  // KubeML's scheduler debug port
  std::string advertise_url;     // where standbys send clients; empty: scheme and address of --listen
  // --ml-listen: a second, plain-HTTP listener for KubeML's calls alone,
  // which asks no token (KubeML's components send none); empty host: none.
  std::string ml_listen_host;
  uint16_t ml_listen_port = 0;
  std::string store = "embedded:./data";
  std::string ps_url = "http://127.0.0.1:10300";
  std::string ps_metrics_url;  // empty: the PS URL's scheme and host, port 8080, /metrics
  uint64_t ps_start_timeout_ms = 60'000;
  uint64_t ps_check_interval_ms = 30'000;  // 0 = off
  std::string router_url = "http://127.0.0.1:8888";
  int max_parallelism = 32;
  ParallelismPolicyKind parallelism_policy = ParallelismPolicyKind::kKubeml;
  uint64_t metrics_poll_interval_ms = 10'000;  // 0 = off
  uint64_t recompute_interval_ms = 5'000;
  std::optional<FunctionSize> function_size;
  uint64_t offer_ttl_ms = 5'000;
  uint64_t offer_linger_ttl_ms = 120'000;
  uint64_t reconcile_interval_ms = 300'000;  // 0 = off
  uint64_t failover_timeout_ms = 120'000;
  uint64_t agent_timeout_ms = 30'000;
  int64_t leader_ttl_s = 10;  // etcd only: leader lease TTL
  std::string token_file;     // bearer tokens; empty: no authentication (loopback only)
  bool insecure_allow_remote = false;
  std::string tls_cert;  // PEM chain; with tls_key the server speaks only TLS
  std::string tls_key;
  std::string tls_client_ca;     // verifies client certificates (agents) when they send one
  std::string tls_client_crl;    // and refuses those these CRLs revoke
  std::string etcd_ca;           // verifies https etcd endpoints; empty: the system's CAs
  bool pack_etcd_values = true;  // values into etcd packed (zstd); false: plain
  LogLevel log_level = LogLevel::kInfo;
  LogFormat log_format = LogFormat::kText;
  ServerLimits limits;
  double rate_limit = 0;  // requests a second per client; 0 = none
  double rate_burst = 0;  // 0 = twice the rate
};

struct ConfigResult {
  enum class Action { kRun, kHelp, kVersion, kError };
  Action action = Action::kRun;
  Config config;
  std::string message;  // the error, or the help/version text
};

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// args excludes the program name. env defaults to the process environment.
// The PS's Prometheus listener: --ps-metrics-url, or KubeML's :8080/metrics on the PS's host.
std::string ps_metrics_url(const Config& c);

ConfigResult parse_config(const std::vector<std::string>& args, const EnvLookup& env = nullptr);

std::string_view uvsched_version();

}  // namespace uvsched
