#include "app/config.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "policy/parallelism_policy.h"
#include "reactor/url.h"

namespace uvsched {
namespace {

// A flag's setter returns an error message, or "" when the value was taken.
using Setter = std::function<std::string(Config&, const std::string&)>;

struct Flag {
  const char* name;
  const char* arg;  // nullptr: a boolean flag that takes no value
  const char* help;
  Setter set;
};

bool parse_double(const std::string& s, double* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool parse_int(const std::string& s, int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

Setter seconds(uint64_t Config::*field) {
  return [field](Config& c, const std::string& v) -> std::string {
    double secs;
    if (!parse_double(v, &secs) || secs < 0 || secs > 1e9) return "expects a number of seconds >= 0";
    c.*field = static_cast<uint64_t>(std::llround(secs * 1000));
    return "";
  };
}

Setter path(std::string Config::*field) {
  return [field](Config& c, const std::string& v) -> std::string {
    if (v.empty()) return "expects a path";
    c.*field = v;
    return "";
  };
}

Setter limit_seconds(uint64_t ServerLimits::*field) {
  return [field](Config& c, const std::string& v) -> std::string {
    double secs;
    if (!parse_double(v, &secs) || secs <= 0 || secs > 1e9) return "expects a number of seconds > 0";
    c.limits.*field = static_cast<uint64_t>(std::llround(secs * 1000));
    return "";
  };
}

Setter limit_count(size_t ServerLimits::*field, int64_t min = 1) {
  return [field, min](Config& c, const std::string& v) -> std::string {
    int64_t n;
    if (!parse_int(v, &n) || n < min) return "expects a whole number >= " + std::to_string(min);
    c.limits.*field = static_cast<size_t>(n);
    return "";
  };
}

// A whole number of requests a second (or at once) per client.
Setter rate(double Config::*field, int64_t min) {
  return [field, min](Config& c, const std::string& v) -> std::string {
    int64_t n;
    if (!parse_int(v, &n) || n < min || n > 10'000'000) {
      return "expects a whole number from " + std::to_string(min) + " to 10000000";
    }
    c.*field = static_cast<double>(n);
    return "";
  };
}

Setter http_url(std::string Config::*field) {
  return [field](Config& c, const std::string& v) -> std::string {
    if (!parse_url(v)) return "expects an http://HOST:PORT URL";
    c.*field = v;
    return "";
  };
}

const std::vector<Flag>& flags() {
  static const std::vector<Flag> kFlags = {
      {"listen", "HOST:PORT", "address to serve HTTP on (default 127.0.0.1:10200)",
       [](Config& c, const std::string& v) -> std::string {
         auto hp = parse_host_port(v);
         if (!hp) return "expects HOST:PORT";
         c.listen_host = hp->first;
         c.listen_port = hp->second;
         return "";
       }},
      {"advertise-url", "URL", "where standbys redirect clients to this daemon when it leads (default: from --listen)",
       http_url(&Config::advertise_url)},
      {"ml-listen", "HOST:PORT",
       "also serve KubeML's calls (POST /train, /job, /infer, DELETE /finish/ID) here, plain HTTP and without a token, "
       "which KubeML's components do not send; every other path is refused there (default off)",
       [](Config& c, const std::string& v) -> std::string {
         auto hp = parse_host_port(v);
         if (!hp) return "expects HOST:PORT";
         c.ml_listen_host = hp->first;
         c.ml_listen_port = hp->second;
         return "";
       }},
      {"store", "embedded:DIR|etcd:URLS", "state store (default embedded:./data)",
       [](Config& c, const std::string& v) -> std::string {
         if (v.rfind("embedded:", 0) == 0 && v.size() > 9) {
           c.store = v;
           return "";
         }
         if (v.rfind("etcd:", 0) == 0 && v.size() > 5) {
           std::string_view rest = std::string_view(v).substr(5);
           while (!rest.empty()) {
             size_t comma = rest.find(',');
             if (!parse_url(rest.substr(0, comma))) return "etcd endpoints must be http://HOST:PORT, comma separated";
             rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
           }
           c.store = v;
           return "";
         }
         return "expects embedded:DIR or etcd:http://H:P[,http://H2:P2]";
       }},
      {"ps-url", "URL", "parameter server (default http://127.0.0.1:10300)", http_url(&Config::ps_url)},
      {"ps-metrics-url", "URL", "the PS's Prometheus metrics (default: the PS's host, port 8080, /metrics)",
       http_url(&Config::ps_metrics_url)},
      {"ps-start-timeout", "SECONDS",
       "how long the PS may take to answer /start before it is asked /tasks (default 60)",
       seconds(&Config::ps_start_timeout_ms)},
      {"ps-check-interval", "SECONDS",
       "how often the PS is asked which jobs it holds; a started job it no longer holds, silent meanwhile, has "
       "ended and is no longer followed. 0 = off (default 30)",
       seconds(&Config::ps_check_interval_ms)},
      {"router-url", "URL", "function router for inference (default http://127.0.0.1:8888)",
       http_url(&Config::router_url)},
      {"max-parallelism", "N", "upper bound of any job's parallelism (default 32)",
       [](Config& c, const std::string& v) -> std::string {
         int64_t n;
         if (!parse_int(v, &n) || n < 1 || n > kMaxParallelism) {
           return "expects a whole number from 1 to " + std::to_string(kMaxParallelism);
         }
         c.max_parallelism = static_cast<int>(n);
         return "";
       }},
      {"parallelism-policy", "kubeml|speedup",
       "how a job's next parallelism is chosen: KubeML's throughput rule, or by each job's fitted speedup "
       "across the cluster (default kubeml)",
       [](Config& c, const std::string& v) -> std::string {
         if (v == "kubeml")
           c.parallelism_policy = ParallelismPolicyKind::kKubeml;
         else if (v == "speedup")
           c.parallelism_policy = ParallelismPolicyKind::kSpeedup;
         else
           return "expects kubeml or speedup";
         return "";
       }},
      {"metrics-poll-interval", "SECONDS", "PS metrics poll period, 0 = off (default 10)",
       seconds(&Config::metrics_poll_interval_ms)},
      {"recompute-interval", "SECONDS", "parallelism re-check period (default 5)",
       seconds(&Config::recompute_interval_ms)},
      {"function-size", "CPUS,MEM_MIB", "resources one parallel function needs (default off)",
       [](Config& c, const std::string& v) -> std::string {
         size_t comma = v.find(',');
         FunctionSize fs;
         if (comma == std::string::npos || !parse_double(v.substr(0, comma), &fs.cpus) ||
             !parse_double(v.substr(comma + 1), &fs.mem_mib) || fs.cpus < 0 || fs.mem_mib < 0 ||
             (fs.cpus == 0 && fs.mem_mib == 0))
           return "expects CPUS,MEM_MIB with at least one above 0";
         c.function_size = fs;
         return "";
       }},
      {"offer-ttl", "SECONDS", "how long an offer stays live (default 5)", seconds(&Config::offer_ttl_ms)},
      {"offer-linger-ttl", "SECONDS", "how long an expired offer is remembered (default 120)",
       seconds(&Config::offer_linger_ttl_ms)},
      {"reconcile-interval", "SECONDS", "implicit reconciliation period, 0 = off (default 300)",
       seconds(&Config::reconcile_interval_ms)},
      {"failover-timeout", "SECONDS", "framework id lifetime in the store (default 120)",
       seconds(&Config::failover_timeout_ms)},
      {"agent-timeout", "SECONDS", "an agent gone this long is lost (default 30)", seconds(&Config::agent_timeout_ms)},
      {"leader-ttl", "SECONDS", "etcd only: leader lease TTL; a standby takes over within it (default 10)",
       [](Config& c, const std::string& v) -> std::string {
         int64_t n;
         if (!parse_int(v, &n) || n < 1 || n > 3600) return "expects a whole number of seconds from 1 to 3600";
         c.leader_ttl_s = n;
         return "";
       }},
      {"token-file", "PATH", "bearer tokens, one token,name,role per line; re-read on SIGHUP (default none)",
       path(&Config::token_file)},
      {"insecure-allow-remote", nullptr, "listen beyond loopback without a token file",
       [](Config& c, const std::string& v) -> std::string {
         if (v == "true" || v == "1" || v.empty())
           c.insecure_allow_remote = true;
         else if (v == "false" || v == "0")
           c.insecure_allow_remote = false;
         else
           return "expects true or false";
         return "";
       }},
      {"tls-cert", "PATH", "serve HTTPS with this PEM certificate chain (needs --tls-key)", path(&Config::tls_cert)},
      {"tls-key", "PATH", "the PEM private key of --tls-cert", path(&Config::tls_key)},
      {"tls-client-ca", "PATH", "verify client certificates against these CAs; a verified agent needs no token",
       path(&Config::tls_client_ca)},
      {"tls-client-crl", "PATH",
       "refuse client certificates these CRLs revoke (PEM, one per client CA; re-read with the certificates on SIGHUP)",
       path(&Config::tls_client_crl)},
      {"etcd-ca", "PATH", "verify https:// etcd endpoints against these CAs (default: the system's)",
       path(&Config::etcd_ca)},
      {"etcd-values", "packed|plain",
       "how values go into etcd: packed with zstd (default, ~5x smaller) or "
       "plain JSON for etcdctl; either form is always read",
       [](Config& c, const std::string& v) -> std::string {
         if (v == "packed")
           c.pack_etcd_values = true;
         else if (v == "plain")
           c.pack_etcd_values = false;
         else
           return "expects packed or plain";
         return "";
       }},
      {"log-level", "debug|info|warn|error|off", "log threshold (default info)",
       [](Config& c, const std::string& v) -> std::string {
         return parse_log_level(v, &c.log_level) ? "" : "expects debug, info, warn, error or off";
       }},
      {"log-format", "text|json", "log line format (default text)",
       [](Config& c, const std::string& v) -> std::string {
         if (v == "text")
           c.log_format = LogFormat::kText;
         else if (v == "json")
           c.log_format = LogFormat::kJson;
         else
           return "expects text or json";
         return "";
       }},
      {"max-body-bytes", "N", "largest request body (default 1048576)", limit_count(&ServerLimits::max_body_bytes)},
      {"max-header-bytes", "N", "largest request line plus headers (default 16384)",
       limit_count(&ServerLimits::max_header_bytes)},
      {"max-connections", "N",
       "concurrent connections (default 10000; fewer when the open files limit, raised to its hard limit at start, "
       "cannot hold them)",
       limit_count(&ServerLimits::max_connections)},
      {"over-limit-reserve", "N",
       "connections past --max-connections held to read their request: KubeML's /job and /finish are served, "
       "the rest get the 503 (default 64; 0: 503 at once)",
       limit_count(&ServerLimits::over_limit_reserve, 0)},
      {"max-unauthenticated-connections", "N",
       "with tokens: of those, connections that have not shown valid credentials (default 1000)",
       limit_count(&ServerLimits::max_unauthenticated_connections)},
      {"rate-limit", "N",
       "requests a second per client (token, agent certificate, or address without either); over it 429 with "
       "Retry-After (default 0: none)",
       rate(&Config::rate_limit, 0)},
      {"rate-burst", "N", "requests a client may send at once above --rate-limit (default twice the rate)",
       rate(&Config::rate_burst, 1)},
      {"max-buffered-output", "MIB",
       "response bytes waiting for readers, all connections together; past it the one holding the most is closed "
       "(default 256)",
       [](Config& c, const std::string& v) -> std::string {
         int64_t n;
         if (!parse_int(v, &n) || n < 1 || n > 1'048'576) return "expects a whole number of MiB from 1 to 1048576";
         c.limits.max_buffered_output = static_cast<size_t>(n) * 1024 * 1024;
         return "";
       }},
      {"idle-timeout", "SECONDS", "close idle keep-alive connections after (default 60)",
       limit_seconds(&ServerLimits::idle_timeout_ms)},
      {"request-timeout", "SECONDS", "a request must arrive whole within (default 10)",
       limit_seconds(&ServerLimits::request_timeout_ms)},
      {"shutdown-grace", "SECONDS", "in-flight requests get this long on SIGTERM (default 5)",
       limit_seconds(&ServerLimits::shutdown_grace_ms)},
  };
  return kFlags;
}

std::string env_name(const char* flag) {
  std::string out = "UVSCHED_";
  for (const char* p = flag; *p; ++p) out += *p == '-' ? '_' : static_cast<char>(std::toupper(*p));
  return out;
}

const Flag* find_flag(std::string_view name) {
  for (const Flag& f : flags()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::string help_text() {
  std::string out =
      "usage: uvsched [flags]\n"
      "A single-loop scheduler for ML training jobs (KubeML-compatible) and pods on offer-based agents.\n\n";
  for (const Flag& f : flags()) {
    std::string left = std::string("  --") + f.name + (f.arg ? std::string(" ") + f.arg : "");
    if (left.size() < 40) left.resize(40, ' ');
    out += left + " " + f.help + "  [" + env_name(f.name) + "]\n";
  }
  out +=
      "  --help                                   this text\n  --version                                print the "
      "version\n";
  return out;
}

}  // namespace

std::string ps_metrics_url(const Config& c) {
  if (!c.ps_metrics_url.empty()) return c.ps_metrics_url;
  auto u = parse_url(c.ps_url);
  if (!u) return "";
  bool v6 = u->host.find(':') != std::string::npos;
  return u->scheme + "://" + (v6 ? "[" + u->host + "]" : u->host) + ":8080/metrics";
}

std::string_view uvsched_version() { return "0.1.0"; }

ConfigResult parse_config(const std::vector<std::string>& args, const EnvLookup& env_in) {
  EnvLookup env = env_in ? env_in : [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  ConfigResult result;
  auto fail = [&](std::string message) {
    result.action = ConfigResult::Action::kError;
    result.message = std::move(message);
    return result;
  };

  for (const Flag& f : flags()) {
    if (auto v = env(env_name(f.name))) {
      std::string err = f.set(result.config, *v);
      if (!err.empty()) return fail(env_name(f.name) + "=" + *v + ": " + err);
    }
  }

  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      result.action = ConfigResult::Action::kHelp;
      result.message = help_text();
      return result;
    }
    if (arg == "--version") {
      result.action = ConfigResult::Action::kVersion;
      result.message = "uvsched " + std::string(uvsched_version()) + "\n";
      return result;
    }
    if (arg.substr(0, 2) != "--") return fail("unexpected argument '" + std::string(arg) + "' (see --help)");
    std::string_view body = arg.substr(2);
    std::string value;
    size_t eq = body.find('=');
    std::string_view name = body.substr(0, eq);
    const Flag* f = find_flag(name);
    if (f == nullptr) return fail("unknown flag --" + std::string(name) + " (see --help)");
    if (eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
    } else if (f->arg == nullptr) {
      value = "true";  // a boolean flag on its own
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return fail("--" + std::string(name) + " needs a value " + f->arg);
    }
    std::string err = f->set(result.config, value);
    if (!err.empty()) return fail("--" + std::string(name) + " " + value + ": " + err);
  }
  const Config& c = result.config;
  if (c.tls_cert.empty() != c.tls_key.empty()) return fail("--tls-cert and --tls-key go together");
  if (!c.tls_client_ca.empty() && c.tls_cert.empty()) return fail("--tls-client-ca needs --tls-cert and --tls-key");
  if (!c.tls_client_crl.empty() && c.tls_client_ca.empty()) return fail("--tls-client-crl needs --tls-client-ca");
  return result;
}

}  // namespace uvsched
