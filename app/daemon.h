// uvsched as a library: everything the daemon does, on a uv_loop_t that the
// embedding program owns. The program runs the loop; the Daemon only adds
// handles to it, and stop() removes them all again.
//
//   uv_loop_t* loop = uv_default_loop();
//   uvsched::Daemon d(loop, config);
//   if (d.start() != 0) ...;
//   ... uv_run(loop, UV_RUN_DEFAULT) ...
//   d.stop([] { /* every handle of the daemon is closed */ });
#pragma once

#include <uv.h>

#include <functional>
#include <memory>

#include "app/config.h"
#include "handlers/agents/agent_hub.h"
#include "handlers/auth_gate.h"
#include "handlers/ml/ml_scheduler.h"
#include "handlers/ops/http_metrics.h"
#include "handlers/ops/metrics_registry.h"
#include "handlers/ops/readiness.h"
#include "handlers/ops/standby_redirect.h"
#include "handlers/pods/disruption_budgets.h"
#include "handlers/pods/node_leases.h"
#include "handlers/pods/object_registry.h"
#include "handlers/pods/pod_registry.h"
#include "handlers/pods/pod_scheduler.h"
#include "handlers/pods/resource_version_check.h"
#include "handlers/pods/scheduling_objects.h"
#include "handlers/router.h"
#include "reactor/clock.h"
#include "reactor/http_client.h"
#include "reactor/http_server.h"
#include "reactor/tls.h"
#include "storage/leader_election.h"
#include "storage/store.h"

namespace uvsched {

class Daemon {
 public:
  // clock: nullptr means the loop's own clock.
  Daemon(uv_loop_t* loop, Config config, Clock* clock = nullptr);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Opens the store (recovering it) and binds the listener. 0, or a libuv
  // error code (uv_strerror tells); the log line says what failed.
  int start();
  // Graceful: stop accepting, finish in-flight requests, close every handle.
  void stop(std::function<void()> done);
  // SIGHUP: re-read --token-file, and the TLS certificate, key, client CAs
  // and CRL; each kept as it was when its new files are invalid.
  void reload();
  void reload_tokens();
  void reload_tls();

  uint16_t port() const { return server_->port(); }
  // --ml-listen's port (0 without one).
  uint16_t ml_port() const { return ml_server_ ? ml_server_->port() : 0; }
  size_t connection_count() const { return server_->connection_count(); }
  const Config& config() const { return config_; }
  // An embedding program may add its own routes before start().
  Router& router() { return router_; }
  MetricsRegistry& metrics() { return metrics_; }
  Store& store() { return *store_; }
  // With etcd, only the leader acts; with the embedded store (one process per
  // directory) this daemon always leads.
  bool is_leader() const { return !election_ || election_->is_leader(); }

 private:
  void fit_connections_to_open_files();  // in the constructor, before the servers are made
  // The steps of start(), in order.
  int check_access();
  int open_store_and_clients();
  void make_domains();
  void wire_domains();
  void start_election();
  void add_readiness_probes();
  std::string ml_url(const std::string& advertised) const;
  // A start that failed once the store was open: what it opened is closed.
  int abandon_start(int rc);
  uv_loop_t* loop_;
  Config config_;
  std::unique_ptr<Clock> own_clock_;
  Clock& clock_;
  MetricsRegistry metrics_;
  HttpMetrics http_metrics_;
  Readiness readiness_;
  Router router_;
  ResourceVersionCheck rv_check_{router_};  // a Kubernetes read from a revision the store has not reached: 504
  StandbyRedirect redirect_{rv_check_};
  AuthGate gate_{redirect_};
  // --ml-listen: KubeML's calls alone, no token asked; a standby redirects
  // them to the leader's ML listener.
  StandbyRedirect ml_redirect_{router_};
  AuthGate ml_gate_{ml_redirect_};
  std::unique_ptr<RateLimiter> rate_limiter_;  // with --rate-limit
  std::unique_ptr<TlsContext> server_tls_;     // outlives server_, whose connections use it
  // A context being built off the loop (files are read) at SIGHUP; null when none.
  struct TlsReload;
  TlsReload* tls_reload_ = nullptr;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<HttpServer> ml_server_;  // with --ml-listen
  std::unique_ptr<Store> store_;
  std::unique_ptr<LeaderElection> election_;
  std::unique_ptr<HttpClient> client_;  // parameter server, router
  std::unique_ptr<MlScheduler> ml_;
  std::unique_ptr<PodWriter> pod_writer_;  // the registry's and the scheduler's one way to update a pod
  std::unique_ptr<PodRegistry> pods_;
  std::unique_ptr<ObjectRegistry> objects_;        // PodGroups, PriorityClasses, PodDisruptionBudgets
  std::unique_ptr<DisruptionBudgets> budgets_;     // their statuses, and the evictions they hold back
  std::unique_ptr<PriorityClassBook> priorities_;  // a new pod's priority
  std::unique_ptr<AgentHub> hub_;
  std::unique_ptr<NodeLeases> node_leases_;  // the hub's heartbeats, as the nodes' Leases
  std::unique_ptr<PodScheduler> scheduler_;
  bool stopping_ = false;
};

}  // namespace uvsched
