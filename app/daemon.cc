#include "app/daemon.h"

#include "app/open_files.h"
#include "handlers/ml/kubeml_types.h"
#include "handlers/ops/ops_routes.h"
#include "handlers/ops/process_metrics.h"
#include "handlers/ops/status_routes.h"
#include "handlers/pods/discovery.h"
#include "handlers/pods/empty_services.h"
#include "handlers/pods/pod_dictionary.h"
#include "handlers/ui/ui_routes.h"
#include "policy/fair_share.h"
#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "reactor/url.h"
#include "storage/store_factory.h"

namespace uvsched {
namespace {

std::unique_ptr<Clock> make_clock(uv_loop_t* loop, Clock* given) {
  return given ? nullptr : std::make_unique<LoopClock>(loop);
}

// Calls to one PS are not queued behind each other: a train job waits for
// its /update, and an update waiting for a connection when the daemon dies
// is one the next daemon does not know it owes (each /update returns once
// the job reads it, so they are short; /start blocks for a pod).
constexpr size_t kConnectionsPerPeer = 1024;

}  // namespace

Daemon::Daemon(uv_loop_t* loop, Config config, Clock* clock)
    : loop_(loop),
      config_(std::move(config)),
      own_clock_(make_clock(loop, clock)),
      clock_(clock ? *clock : *own_clock_),
      http_metrics_(metrics_) {
  // Without tokens or client certificates there is nothing to show: no separate
  // budget (nor short time-outs) for connections that have not shown it.
  if (config_.token_file.empty() && config_.tls_client_ca.empty()) config_.limits.max_unauthenticated_connections = 0;
  if (config_.rate_limit > 0) {
    double burst = config_.rate_burst > 0 ? config_.rate_burst : 2 * config_.rate_limit;
    // KubeML's train jobs all run in the PS's pod, one client here: a 429 to
    // one's /job would leave it waiting for its update for ever.
    rate_limiter_ =
        std::make_unique<RateLimiter>(clock_, RateLimit{config_.rate_limit, burst}, is_kubeml_call_never_retried);
    gate_.limit_rate(rate_limiter_.get());
    metrics_.gauge("uvsched_http_rate_limited", "Requests answered 429 for their client's rate (--rate-limit).",
                   [this](const GaugeEmit& emit) { emit("", static_cast<double>(rate_limiter_->refused())); });
  }
  // Nor a 503 for a connection past --max-connections: KubeML takes that as
  // its /job's answer, too.
  gate_.serve_over_connection_limit(is_kubeml_call_never_retried);
  fit_connections_to_open_files();
  server_ = std::make_unique<HttpServer>(loop_, clock_, config_.limits, gate_);
  server_->set_observer([this](const ResponseRecord& r) { http_metrics_.record(r); });
  if (!config_.ml_listen_host.empty()) {
    ml_gate_.grant_without_token(Role::kMl,
                                 "--ml-listen serves only KubeML's calls (POST /train, POST /job, POST /infer, "
                                 "DELETE /finish/{id}) and the health probes");
    if (rate_limiter_) ml_gate_.limit_rate(rate_limiter_.get());
    ml_gate_.serve_over_connection_limit(is_kubeml_call_never_retried);
    ml_server_ = std::make_unique<HttpServer>(loop_, clock_, config_.limits, ml_gate_);
    ml_server_->set_observer([this](const ResponseRecord& r) { http_metrics_.record(r); });
  }
  metrics_.gauge("uvsched_http_connections", "Open HTTP connections.", [this](const GaugeEmit& emit) {
    emit("", static_cast<double>(server_->connection_count() + (ml_server_ ? ml_server_->connection_count() : 0)));
  });
  metrics_.gauge("uvsched_http_buffered_output_bytes", "Response bytes waiting for their readers, all connections.",
                 [this](const GaugeEmit& emit) { emit("", static_cast<double>(server_->buffered_output())); });
  metrics_.gauge("uvsched_http_max_connections",
                 "Connections a listener takes before it answers 503: --max-connections, or fewer when the open "
                 "files limit cannot hold them.",
                 [this](const GaugeEmit& emit) { emit("", static_cast<double>(config_.limits.max_connections)); });
  metrics_.counter_read(
      "uvsched_http_accept_failures_total",
      "Connections a listener could not take, out of file descriptors or refused by the kernel.",
      [this](const GaugeEmit& emit) {
        emit("", static_cast<double>(server_->accept_failures() + (ml_server_ ? ml_server_->accept_failures() : 0)));
      });
  add_process_metrics(metrics_, loop_, clock_);
  metrics_.gauge("uvsched_http_output_cap_closures",
                 "Connections closed for holding the most unread output when the total reached --max-buffered-output.",
                 [this](const GaugeEmit& emit) { emit("", static_cast<double>(server_->output_cap_closures())); });
  add_ops_routes(router_, metrics_, readiness_);
  add_discovery_routes(router_);
  add_empty_service_routes(router_);
  add_ui_routes(router_);
}

// Past the open-file limit a connection is closed unanswered before the
// server sees it (app/open_files.h): --max-connections must come first.
void Daemon::fit_connections_to_open_files() {
  OpenFilesLimit files = open_files_limit();
  if (files.soft == 0) return;
  size_t listeners = config_.ml_listen_host.empty() ? 1 : 2;
  // The PS, its metrics and the function router are three origins of one client.
  uint64_t calls_out = 3 * kConnectionsPerPeer + store_connections_at_most(config_.store);
  size_t fits = connections_within(files.soft, listeners, config_.limits, calls_out);
  if (fits >= config_.limits.max_connections) return;
  log_warn("max_connections_lowered")
      .kv("max_connections", static_cast<uint64_t>(config_.limits.max_connections))
      .kv("to", static_cast<uint64_t>(fits))
      .kv("open_files_limit", files.soft)
      .kv("hard_limit", files.hard)
      .kv("why",
          "each connection is a file descriptor: past the open files limit the kernel refuses them and they are "
          "closed unanswered; below it they get 503 with Retry-After (raise the hard limit, ulimit -Hn or "
          "LimitNOFILE=, to serve more)");
  config_.limits.max_connections = fits;
}

// The files are read on libuv's thread pool (a context's making touches
// nothing of the loop's); the new context is taken on the loop, for the
// connections accepted from then on. Sessions already open keep the old one:
// OpenSSL counts their references to it.
struct Daemon::TlsReload {
  uv_work_t work;
  Daemon* daemon;
  std::string cert, key, client_ca, client_crl;
  std::unique_ptr<TlsContext> made;
  std::string error;
  bool abandoned = false;  // the daemon stopped while it was being made
};

Daemon::~Daemon() {
  if (tls_reload_ != nullptr) tls_reload_->abandoned = true;  // its completion, later on the loop, only frees it
}

namespace {
bool is_loopback(const std::string& host) { return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0; }
}  // namespace

// Starting is a few steps, in order; each logs what stopped it.
int Daemon::start() {
  if (int rc = check_access(); rc != 0) return rc;
  if (int rc = open_store_and_clients(); rc != 0) return rc;
  make_domains();
  wire_domains();
  if (int rc = server_->listen(config_.listen_host, config_.listen_port); rc != 0) {
    log_error("listen_failed")
        .kv("host", config_.listen_host)
        .kv("port", static_cast<int>(config_.listen_port))
        .kv("error", uv_strerror(rc));
    return abandon_start(rc);
  }
  if (ml_server_) {
    if (int rc = ml_server_->listen(config_.ml_listen_host, config_.ml_listen_port); rc != 0) {
      log_error("ml_listen_failed")
          .kv("host", config_.ml_listen_host)
          .kv("port", static_cast<int>(config_.ml_listen_port))
          .kv("error", uv_strerror(rc));
      server_->shutdown([] {});
      return abandon_start(rc);
    }
  }
  const bool elected = config_.store.rfind("etcd:", 0) == 0;
  pods_->start();
  objects_->start();
  priorities_->start();
  if (!elected) {  // alone on its store: it leads from the start
    ml_->start();
    scheduler_->start();
    budgets_->start();
  }
  log_info("listening")
      .kv("addr", config_.listen_host + ":" + std::to_string(server_->port()))
      .kv("scheme", server_tls_ ? "https" : "http")
      .kv("store", config_.store);
  if (ml_server_) {
    log_info("listening_for_kubeml")
        .kv("addr", config_.ml_listen_host + ":" + std::to_string(ml_server_->port()))
        .kv("scheme", "http")
        .kv("serves", "POST /train, /job, /infer, DELETE /finish/{id}; no token");
  }
  if (elected) start_election();
  add_readiness_probes();
  return 0;
}

int Daemon::abandon_start(int rc) {
  client_->close([] {});
  store_->close([this] {
    ml_.reset();
    scheduler_.reset();
    node_leases_.reset();
    hub_.reset();
    priorities_.reset();
    budgets_.reset();
    objects_.reset();
    pods_.reset();
  });
  return rc;
}

// Tokens, the refusal to listen beyond loopback unprotected, and TLS.
int Daemon::check_access() {
  std::string error;
  if (!config_.token_file.empty() && !gate_.load(config_.token_file, &error)) {
    log_error("token_file_invalid").kv("error", error);
    return UV_EINVAL;
  }
  if (!gate_.enabled() && config_.tls_client_ca.empty() && !is_loopback(config_.listen_host) &&
      !config_.insecure_allow_remote) {
    log_error("refusing_remote_listen")
        .kv("host", config_.listen_host)
        .kv("why", "without --token-file anyone could call every endpoint; give one, or --insecure-allow-remote");
    return UV_EACCES;
  }
  if (!config_.tls_cert.empty()) {
    server_tls_ =
        TlsContext::server(config_.tls_cert, config_.tls_key, config_.tls_client_ca, &error, config_.tls_client_crl);
    if (!server_tls_) {
      log_error("tls_invalid").kv("error", error);
      return UV_EINVAL;
    }
    server_->use_tls(server_tls_.get());
    if (!config_.tls_client_ca.empty()) gate_.accept_client_certificates();
  }
  return 0;
}

// The store and the HTTP client the ML scheduler calls the PS with.
int Daemon::open_store_and_clients() {
  std::string error;
  store_ = open_store(loop_, clock_, config_.store,
                      {.etcd_ca = config_.etcd_ca,
                       .value_dictionary = pod_value_dictionary(),
                       .older_value_dictionaries = pod_value_dictionaries_before(),
                       .pack_etcd_values = config_.pack_etcd_values},
                      &error);
  if (!store_) {
    log_error("store_open_failed").kv("store", config_.store).kv("error", error);
    return UV_EINVAL;
  }
  readiness_.add("store", [this] { return store_->unavailable_reason(); });
  rv_check_.set_store(store_.get());
  client_ =
      std::make_unique<HttpClient>(loop_, clock_, ClientOptions{.max_connections_per_origin = kConnectionsPerPeer});
  if (config_.ps_url.rfind("https://", 0) == 0 || config_.router_url.rfind("https://", 0) == 0) {
    // Made while starting, not by the first request on the running loop:
    // loading OpenSSL and the system's CAs reads files.
    if (!client_->prepare_tls(&error)) {
      log_error("tls_invalid").kv("error", error);
      return UV_EINVAL;
    }
  }
  return 0;
}

// The four domains, each with its routes.
void Daemon::make_domains() {
  MlScheduler::Settings ml;
  ml.max_parallelism = config_.max_parallelism;
  ml.recompute_interval_ms = config_.recompute_interval_ms;
  ml.metrics_poll_interval_ms = config_.metrics_poll_interval_ms;
  ml.ps_url = config_.ps_url;
  ml.ps_metrics_url = ps_metrics_url(config_);
  ml.ps_start_timeout_ms = config_.ps_start_timeout_ms;
  ml.ps_check_interval_ms = config_.ps_check_interval_ms;
  ml.router_url = config_.router_url;
  ml.policy = config_.parallelism_policy;
  ml_ = std::make_unique<MlScheduler>(clock_, *store_, *client_, metrics_, ml, [this] { return is_leader(); });
  ml_->add_routes(router_);
  pod_writer_ = std::make_unique<PodWriter>(*store_);
  pods_ = std::make_unique<PodRegistry>(*store_, clock_, *pod_writer_, [this] { return is_leader(); });
  pods_->add_routes(router_);
  objects_ = std::make_unique<ObjectRegistry>(*store_, clock_, [this] { return is_leader(); });
  ObjectKind groups = pod_group_kind();
  groups.preview = [this](const JsonValue& group) { return scheduler_->preview_group(group); };
  objects_->add_kind(std::move(groups));
  priorities_ = std::make_unique<PriorityClassBook>(*store_, clock_);
  ObjectKind classes = priority_class_kind();
  classes.forbid = [this](const JsonValue& pc) { return priorities_->second_default(pc); };
  objects_->add_kind(std::move(classes));
  objects_->add_kind(pod_disruption_budget_kind());
  objects_->list_group(kCoordinationGroup, kCoordinationVersion);
  objects_->add_routes(router_);
  budgets_ = std::make_unique<DisruptionBudgets>(*store_, clock_, *pod_writer_);
  AgentHub::Settings agents;
  agents.offer_ttl_ms = config_.offer_ttl_ms;
  agents.offer_linger_ms = config_.offer_linger_ttl_ms;
  agents.agent_timeout_ms = config_.agent_timeout_ms;
  hub_ = std::make_unique<AgentHub>(clock_, metrics_, agents);
  hub_->add_routes(router_);
  node_leases_ = std::make_unique<NodeLeases>(
      clock_, [this] { return hub_->node_leases(); },
      [this](const std::string& node) { return hub_->node_lease(node); });
  node_leases_->add_routes(router_);
  PodScheduler::Settings sched;
  sched.reconcile_interval_ms = config_.reconcile_interval_ms;
  sched.failover_timeout_ms = config_.failover_timeout_ms;
  scheduler_ = std::make_unique<PodScheduler>(
      *store_, clock_, *hub_, *pod_writer_, metrics_, [this] { return is_leader(); }, sched);
  scheduler_->add_routes(router_);
  add_status_routes(router_, clock_, *store_, metrics_,
                    {.version = std::string(uvsched_version()),
                     .store = config_.store,
                     .role = [this] { return std::string(is_leader() ? "leader" : "standby"); },
                     .pending_pods = [this] { return scheduler_->pending(); },
                     .pod_tasks = [this] { return scheduler_->tasks(); },
                     .training_jobs = [this] { return ml_->job_count(); }});
}

// Who tells whom: the agents' events go to the pod scheduler; the registry
// asks the scheduler about creates and deletes and the hub for its nodes;
// the ML cap counts the functions the live offers hold.
void Daemon::wire_domains() {
  hub_->set_events(scheduler_.get());
  pods_->set_nodes([this] { return hub_->nodes(); }, [this] { return hub_->nodes_version(); });
  pods_->set_cordon_hook([this](const std::string& node, bool on) { scheduler_->cordon_changed(node, on); });
  pods_->set_taints_hook([this](const std::string& node, std::vector<Taint> taints) {
    scheduler_->taints_changed(node, std::move(taints));
  });
  pods_->set_node_labels_hook(
      [this](const std::string& node, LabelEdits edits) { scheduler_->node_labels_changed(node, std::move(edits)); });
  pods_->set_delete_hook(
      [this](const std::string& ns, const std::string& name, std::optional<int64_t> grace,
             PodRegistry::DeleteDone done) { return scheduler_->handle_delete(ns, name, grace, std::move(done)); });
  pods_->set_images_hook(
      [this](const std::string& ns, const std::string& name) { scheduler_->images_changed(ns, name); });
  pods_->set_deadline_hook([this](const std::string& ns, const std::string& name, std::optional<int64_t> deadline) {
    scheduler_->deadline_changed(ns, name, deadline);
  });
  pods_->set_admission({.ready = [this] { return priorities_->loaded(); },
                        .when_ready = [this](std::function<void()> cb) { priorities_->when_loaded(std::move(cb)); },
                        .admit = [this](JsonValue& pod) { return priorities_->admit(pod); }});
  pods_->set_eviction_check(
      [this](const std::string& ns, const JsonValue& pod, bool dry_run, PodRegistry::EvictionVerdict verdict) {
        budgets_->admit_eviction(ns, pod, dry_run, std::move(verdict));
      });
  pods_->set_preview_hook([this](const JsonValue& pod) { return scheduler_->preview_placement(pod); });
  pods_->set_create_hook([this](const std::string& ns, const std::string& name, JsonValue& pod) {
    return scheduler_->place_on_create(ns, name, pod);
  });
  if (config_.function_size) {
    FunctionSize fs = *config_.function_size;
    ml_->set_capacity([this, fs]() -> std::optional<long> {
      // A cordoned agent's room is not the ML jobs' either.
      Resources free = hub_->offers().free_total([this](const Offer& o) { return !hub_->cordoned(o.agent); });
      return functions_that_fit(free.cpus, free.mem_mib, fs.cpus, fs.mem_mib);
    });
  }
}

// Where a standby sends KubeML's calls when this daemon leads: its ML
// listener, on the host it advertises when that listener is on every address.
std::string Daemon::ml_url(const std::string& advertised) const {
  if (!ml_server_) return "";
  std::string host = config_.ml_listen_host;
  if (host == "0.0.0.0" || host == "::") {
    auto u = parse_url(advertised);
    host = u ? u->host : "127.0.0.1";
  }
  bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(ml_server_->port());
}

// With etcd: leadership decides who acts; a standby redirects to the leader.
void Daemon::start_election() {
  std::string identity =
      config_.listen_host + ":" + std::to_string(server_->port()) + "/" + std::to_string(uv_os_getpid());
  std::string url = config_.advertise_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.empty()) {
    bool v6 = config_.listen_host.find(':') != std::string::npos;
    url = std::string(server_tls_ ? "https" : "http") + "://" +
          (v6 ? "[" + config_.listen_host + "]" : config_.listen_host) + ":" + std::to_string(server_->port());
  }
  election_ = std::make_unique<LeaderElection>(*store_, clock_, leader_record(identity, url, ml_url(url)),
                                               config_.leader_ttl_s);
  redirect_.set_leader_view([this]() -> std::optional<std::optional<std::string>> {
    if (election_->is_leader()) return std::nullopt;
    return leader_record_url(election_->leader_identity());
  });
  // A leader without an ML listener is, to KubeML's callers here, none known:
  // its --listen asks a token they do not send.
  ml_redirect_.set_leader_view([this]() -> std::optional<std::optional<std::string>> {
    if (election_->is_leader()) return std::nullopt;
    return leader_record_ml_url(election_->leader_identity());
  });
  // KubeML's /job and /finish are never retried: while no one leads they wait
  // for a leader, up to two lease TTLs (a standby takes over within one).
  StandbyRedirect::WaitRule rule;
  rule.waits = is_kubeml_call_never_retried;
  rule.serving = [this] { return ml_->loaded(); };
  rule.wait_ms = static_cast<uint64_t>(config_.leader_ttl_s) * 2000;
  CounterFamily& waits = standby_waits_counter(metrics_);
  redirect_.wait_for_leader(clock_, waits, rule);
  if (ml_server_) ml_redirect_.wait_for_leader(clock_, waits, std::move(rule));
  // A daemon acts only while it leads, on what it loaded when it took over.
  election_->on_change([this](bool leading) {
    if (!leading) hub_->drop_all();
    scheduler_->leadership_changed(leading);
    ml_->leadership_changed(leading);
    if (leading) {
      budgets_->start();
    } else {
      budgets_->stop();
    }
    redirect_.leadership_changed();
    ml_redirect_.leadership_changed();
  });
  readiness_.add("leader", [this]() -> std::optional<std::string> {
    if (election_->is_leader()) return std::nullopt;
    return std::string("standby: another uvsched leads");
  });
  election_->start();
}

// Until the pods and jobs are loaded, /readyz says so (after the leader
// probe: a standby says that first). With 100k pods loading takes a while.
void Daemon::add_readiness_probes() {
  readiness_.add("scheduler", [this]() -> std::optional<std::string> {
    if (scheduler_->watching()) return std::nullopt;
    return std::string("loading pods");
  });
  readiness_.add("ml", [this]() -> std::optional<std::string> {
    if (ml_->loaded()) return std::nullopt;
    return std::string("loading training jobs");
  });
}

void Daemon::reload() {
  reload_tokens();
  reload_tls();
}

void Daemon::reload_tls() {
  if (!server_tls_ || tls_reload_ != nullptr) return;  // no TLS, or a reload already under way
  auto* r = new TlsReload;
  r->work.data = r;
  r->daemon = this;
  r->cert = config_.tls_cert;
  r->key = config_.tls_key;
  r->client_ca = config_.tls_client_ca;
  r->client_crl = config_.tls_client_crl;
  tls_reload_ = r;
  int rc = uv_queue_work(
      loop_, &r->work,
      [](uv_work_t* w) {
        auto* job = static_cast<TlsReload*>(w->data);
        job->made = TlsContext::server(job->cert, job->key, job->client_ca, &job->error, job->client_crl);
      },
      [](uv_work_t* w, int) {
        std::unique_ptr<TlsReload> job(static_cast<TlsReload*>(w->data));
        if (job->abandoned) return;
        Daemon* d = job->daemon;
        d->tls_reload_ = nullptr;
        if (!job->made) {
          log_error("tls_reload_failed").kv("error", job->error).kv("kept", "the certificates loaded before");
          return;
        }
        d->server_->use_tls(job->made.get());
        d->server_tls_ = std::move(job->made);
        // Open connections too: one whose client certificate is now revoked ends.
        size_t closed = d->server_->close_untrusted_peers();
        log_info("tls_reloaded")
            .kv("cert", job->cert)
            .kv("crl", job->client_crl.empty() ? "-" : job->client_crl)
            .kv("closed_untrusted", static_cast<uint64_t>(closed));
      });
  if (rc != 0) {
    tls_reload_ = nullptr;
    delete r;
    log_error("tls_reload_failed").kv("error", uv_strerror(rc));
  }
}

void Daemon::reload_tokens() {
  gate_.reload(loop_, [this](const std::string& error) {
    if (error.empty()) {
      log_info("tokens_reloaded").kv("tokens", static_cast<uint64_t>(gate_.size()));
    } else {
      log_error("tokens_reload_failed").kv("error", error).kv("kept", static_cast<uint64_t>(gate_.size()));
    }
  });
}

void Daemon::stop(std::function<void()> done) {
  if (stopping_) return;
  stopping_ = true;
  log_info("stopping").kv("connections", static_cast<uint64_t>(server_->connection_count()));
  // The store closes once the requests in flight are answered (they may
  // still write to it) and the leader's lease is revoked (so a standby takes
  // over at once rather than after the TTL).
  auto ready = std::make_shared<int>(1 + (election_ ? 1 : 0) + (ml_server_ ? 1 : 0));
  auto after = std::make_shared<std::function<void()>>();
  auto one_done = [ready, after] {
    if (--*ready == 0 && *after) (*after)();
  };
  if (election_) election_->stop(one_done);
  redirect_.hand_on_all();  // KubeML's /job and /finish waiting for a leader: answered now
  ml_redirect_.hand_on_all();
  if (ml_) ml_->stop();
  if (scheduler_) scheduler_->stop();
  if (budgets_) budgets_->stop();
  if (priorities_) priorities_->stop();
  if (hub_) hub_->stop();
  *after = [this, done = std::move(done)]() mutable {
    auto finish = [done = std::move(done)] {
      log_info("stopped");
      if (done) done();
    };
    // Undelivered PS calls are in the store already: they resume on restart.
    // The handlers outlive the store's close, which still answers their calls.
    auto close_store = [this, finish = std::move(finish)]() mutable {
      auto release = [this, finish = std::move(finish)]() mutable {
        ml_.reset();
        scheduler_.reset();
        hub_.reset();
        pods_.reset();
        finish();
      };
      if (store_) {
        store_->close(std::move(release));
      } else {
        release();
      }
    };
    auto close_client = [this, close_store = std::move(close_store)]() mutable {
      if (client_) {
        client_->close(std::move(close_store));
      } else {
        close_store();
      }
    };
    // Every /job is answered by now; the /update each train job waits for
    // may still be on its way to the PS, and closing the client would cancel
    // it (the job would wait forever, and the next daemon does not know it is
    // owed). So the updates go first, for as long as requests had.
    if (ml_) {
      ml_->when_updates_delivered(config_.limits.shutdown_grace_ms, std::move(close_client));
    } else {
      close_client();
    }
  };
  server_->shutdown(one_done);
  if (ml_server_) ml_server_->shutdown(one_done);
}

}  // namespace uvsched
