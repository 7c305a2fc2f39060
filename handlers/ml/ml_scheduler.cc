#include "handlers/ml/ml_scheduler.h"

#include <uv.h>

#include <algorithm>
#include <cassert>
#include <random>
#include <string>
#include <unordered_set>

#include "handlers/json_body.h"
#include "handlers/json_response.h"
#include "handlers/ml/prom_text.h"
#include "policy/fair_share.h"
#include "policy/speedup_policy.h"
#include "reactor/log.h"
#include "storage/unwaited.h"

namespace uvsched {
namespace {

constexpr size_t kHistoryKept = 100;
constexpr size_t kHistoryStored = 5;
constexpr size_t kSpeedPoints = 64;  // epochs a job's speed model is fitted to

// The gauges of the PS's /metrics kept per job (SPEC §3).
constexpr const char* kJobGauges[] = {
    "kubeml_job_validation_loss", "kubeml_job_validation_accuracy",    "kubeml_job_train_loss",
    "kubeml_job_parallelism",     "kubeml_job_epoch_duration_seconds",
};

HttpResponse unavailable(std::string_view why) {
  HttpResponse r = json_error(503, why);
  r.headers.push_back({"Retry-After", "1"});
  return r;
}

// {"error": the first problem, "field": its field, "errors": [every problem]}.
HttpResponse bad_request(const JsonError& e) {
  if (e.all.empty()) return json_error(400, e.message, e.field);
  JsonWriter w;
  w.begin_object().key("error").value(e.message);
  if (!e.field.empty()) w.key("field").value(e.field);
  w.key("errors").begin_array();
  for (const auto& [field, message] : e.all)
    w.begin_object().key("field").value(field).key("message").value(message).end_object();
  w.end_array().end_object();
  return json_response(400, w.take());
}

}  // namespace

MlScheduler::MlScheduler(Clock& clock, Store& store, HttpRequester& client, MetricsRegistry& metrics, Settings settings,
                         std::function<bool()> is_leader)
    : clock_(clock),
      store_(store),
      client_(client),
      settings_(std::move(settings)),
      is_leader_(std::move(is_leader)),
      ps_(client, clock, metrics, settings_.ps_url,
          PsDelivery::Options{.start_timeout_ms = settings_.ps_start_timeout_ms}),
      drain_turn_(clock, [this] { drain(); }),
      recompute_timer_(clock.new_timer()),
      poll_timer_(clock.new_timer()),
      answer_timer_(clock.new_timer()),
      flush_timer_(clock.new_timer()),
      ps_check_timer_(clock.new_timer()),
      decisions_(metrics.counter("uvsched_ml_decisions_total", "Parallelism decisions by reason.")),
      polls_(metrics.counter("uvsched_ps_metrics_polls_total", "Polls of the PS's /metrics by result.")),
      held_(metrics.counter(
          "uvsched_ml_answers_held_total",
          "Answers to /job that kept the job's parallelism because the decision was not stored, by cause.")),
      lost_(metrics.counter("uvsched_ml_jobs_lost_total", "Jobs the parameter server no longer holds, by phase.")),
      withheld_(metrics.counter("uvsched_ml_updates_withheld_total",
                                "Updates not sent because the job's /job answer never reached it.")) {
  ps_.on_lost([this](const std::string& id, const std::string& why) {
    auto it = jobs_.find(id);
    const PsDelivery::JobStatus* st = ps_.status(id);
    lost_.add(labels({{"phase", st ? PsDelivery::phase_name(st->phase) : "lost"}}));
    if (it == jobs_.end()) return;
    it->second.ps_lost = true;
    it->second.ps_lost_reason = why;
  });
  metrics.gauge("uvsched_job_parallelism", "Current parallelism of each training job.", [this](const GaugeEmit& emit) {
    for (const auto& [id, job] : jobs_) emit(labels({{"jobid", id}}), job.parallelism);
  });
  metrics.gauge("uvsched_ml_jobs", "Training jobs the scheduler follows.",
                [this](const GaugeEmit& emit) { emit("", static_cast<double>(jobs_.size())); });
  metrics.gauge("uvsched_ml_queue_depth", "Training requests waiting for the loop.",
                [this](const GaugeEmit& emit) { emit("", static_cast<double>(queue_.size())); });
}

MlScheduler::~MlScheduler() = default;

void MlScheduler::add_routes(Router& router) {
  router.add("POST", "/train", [this](RequestContext& ctx) { handle_train(ctx); });
  router.add("POST", "/job", [this](RequestContext& ctx) { handle_job(ctx); });
  router.add("DELETE", "/finish/{id}", [this](RequestContext& ctx) { handle_finish(ctx); });
  router.add("POST", "/infer", [this](RequestContext& ctx) { handle_infer(ctx); });
  router.add("GET", "/v1/jobs", [this](RequestContext& ctx) { handle_list(ctx); });
  router.add("GET", "/v1/jobs/{id}", [this](RequestContext& ctx) { handle_get(ctx); });
}

// ---- start-up: jobs come back from the store -----------------------------------

void MlScheduler::start() {
  RangeOptions all;
  all.prefix = true;
  store_.get(kRequestPrefix, all, [this](RangeResult&& requests) {
    if (!requests.status.ok()) {
      // The store is not there yet (etcd down at start-up): try again shortly.
      log_warn("ml_load_failed").kv("error", requests.status.message);
      recompute_timer_->start(1000, [this] { start(); });
      return;
    }
    std::map<std::string, std::string> by_id;
    for (auto& kv : requests.kvs) by_id[kv.key.substr(std::string_view(kRequestPrefix).size())] = std::move(kv.value);
    load_jobs(std::move(by_id));
  });
}

void MlScheduler::load_jobs(std::map<std::string, std::string> requests) {
  RangeOptions all;
  all.prefix = true;
  store_.get(kJobPrefix, all, [this, requests = std::move(requests)](RangeResult&& r) {
    if (!r.status.ok()) {
      log_warn("ml_load_failed").kv("error", r.status.message);
      recompute_timer_->start(1000, [this] { start(); });
      return;
    }
    for (const auto& kv : r.kvs) {
      auto job = decode(kv.value);
      auto req = job ? requests.find(job->id) : requests.end();
      simdjson::dom::object obj;
      if (!job || req == requests.end() || parse_json_object(parser_, req->second, &obj) ||
          parse_train_request(obj, "request", &job->request, false)) {
        log_warn("ml_job_record_unreadable").kv("key", kv.key);
        continue;
      }
      job->order = next_order_++;
      job->last_report_mono_ms = clock_.now_ms();
      std::string id = job->id;
      auto& placed = jobs_[id] = std::move(*job);
      placed.request_stored = true;
      // A started job hears from us only in answer to its next /job: an update
      // it did not ask for would be taken as a later epoch's answer. One whose
      // /start may be under way (or done) is asked about before it is sent.
      if (!placed.start_delivered) send_start(placed, /*ask_first=*/true);
    }
    loaded_ = true;
    ++loads_;
    jobs_changed();
    log_info("ml_jobs_loaded").kv("jobs", static_cast<uint64_t>(jobs_.size()));
    check_what_the_ps_holds();
    if (settings_.recompute_interval_ms > 0) {
      recompute_timer_->start(settings_.recompute_interval_ms, [this] { recompute(); });
    }
    if (settings_.metrics_poll_interval_ms > 0) {
      poll_timer_->start(settings_.metrics_poll_interval_ms, [this] { poll_metrics(); });
    }
    if (!queue_.empty()) drain_turn_.schedule();
  });
}

void MlScheduler::stop() {
  recompute_timer_->stop();
  poll_timer_->stop();
  answer_timer_->stop();
  flush_timer_->stop();
  ps_check_timer_->stop();
  ps_check_in_flight_ = false;  // an answer still on its way is about an earlier load: dropped
}

void MlScheduler::leadership_changed(bool leading) {
  for (auto& p : answers_) {
    if (!p->answered) answer(*p, "leadership-lost", "leadership lost");
  }
  answers_.clear();
  // Requests not yet drained: a job's epoch keeps its parallelism; a new job
  // is not created (its caller hears so and may submit it again).
  std::deque<Queued> queued;
  queued.swap(queue_);
  for (auto& q : queued) {
    if (q.op == Queued::Op::kUpdate) {
      hold_here(q.task, q.responder, "leadership-lost");
    } else {
      q.responder.send(unavailable("leadership changed before the job was created; submit it again"));
    }
  }
  stop();
  ps_.forget_all();
  jobs_.clear();
  dirty_.clear();
  deletes_pending_.clear();
  jobs_changed();
  loaded_ = false;
  log_info(leading ? "ml_taking_over" : "ml_standing_by");
  if (leading) start();
}

bool MlScheduler::refuse_unless_leader(RequestContext& ctx) {
  if (is_leader_()) return false;
  ctx.reply(unavailable("this uvsched is a standby; ask the leader"));
  return true;
}

bool MlScheduler::refuse_unless_serving(RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return true;
  if (auto why = store_.unavailable_reason()) {
    ctx.reply(unavailable("store unavailable: " + *why));
    return true;
  }
  return false;
}

// ---- routes ----------------------------------------------------------------------

void MlScheduler::handle_train(RequestContext& ctx) {
  simdjson::dom::object obj;
  TrainRequest req;
  if (auto e = parse_json_object(parser_, ctx.request.body, &obj)) return ctx.reply(bad_request(*e));
  if (auto e = parse_train_request(obj, "", &req)) return ctx.reply(bad_request(*e));
  if (refuse_unless_serving(ctx)) return;
  queue_.push_back(Queued{Queued::Op::kCreate, std::move(req), {}, ctx.responder});
  if (loaded_) drain_turn_.schedule();
}

void MlScheduler::handle_job(RequestContext& ctx) {
  simdjson::dom::object obj;
  TrainTask task;
  if (auto e = parse_json_object(parser_, ctx.request.body, &obj)) return ctx.reply(bad_request(*e));
  if (auto e = parse_train_task(obj, &task)) return ctx.reply(bad_request(*e));
  // Never refused, not even when the store is down or no one leads: KubeML
  // ignores the status, and its job would wait for an update forever.
  if (!is_leader_()) return hold_here(task, ctx.responder, "no-leader");
  if (!loaded_) return hold_here(task, ctx.responder, "not-loaded");
  queue_.push_back(Queued{Queued::Op::kUpdate, {}, std::move(task), ctx.responder});
  drain_turn_.schedule();
}

// A /job this daemon cannot decide on: no one led for as long as it waited
// (StandbyRedirect), or the jobs' records are not loaded yet (the store was
// down at start). The job keeps the parallelism it reported for this epoch
// and gets that as its update, rather than wait.
void MlScheduler::hold_here(const TrainTask& task, Responder& responder, const char* cause) {
  held_.add(labels({{"cause", cause}}));
  const std::string& id = task.job.id;
  int parallelism = static_cast<int>(std::max<int64_t>(task.job.state.parallelism, 1));
  log_warn("ml_decision_held").kv("job", id).kv("parallelism", parallelism).kv("why", cause);
  auto it = jobs_.find(id);
  std::optional<JobState> update;
  if (it == jobs_.end() || !it->second.ps_lost) update = JobState{parallelism, task.job.state.elapsed_time};
  answer_then_update(responder, id, update);
}

// A train job takes the next update it reads as the answer to its last
// /job. One sent to a job whose POST failed (its connection broke, or this
// daemon died between the update and the answer) is taken as the next
// epoch's answer, and every answer after it comes an epoch late. So the
// update goes to the PS only once the answer is handed to the socket. A
// daemon killed between the two leaves the job waiting for ever, but that
// window is one write, not the batch of answers a turn writes together.
void MlScheduler::answer_then_update(Responder& responder, const std::string& job_id,
                                     std::optional<JobState> update) {
  if (!update) return responder.send(text_response(200, ""));
  responder.send(text_response(200, ""), [this, job_id, update = *update](bool handed) {
    if (handed) return ps_.update(job_id, update);
    withheld_.add("");
    log_warn("ml_update_withheld").kv("job", job_id).kv("why", "its /job answer never reached it");
  });
}

void MlScheduler::handle_finish(RequestContext& ctx) {
  // The PS calls this when a job is done and ignores what it hears (KubeML
  // logs it and goes on), so it is answered even when the store is down: the
  // job is forgotten now and its records are deleted once the store is back.
  if (refuse_unless_leader(ctx)) return;
  const std::string& id = ctx.param("id");
  if (jobs_.count(id)) log_info("ml_job_finished").kv("job", id);
  forget_job(id);
  ctx.reply(text_response(200, ""));  // KubeML answers 200 whether or not it knew the job
}

void MlScheduler::forget_job(const std::string& id) {
  jobs_.erase(id);
  jobs_changed();
  dirty_.erase(id);
  ps_.forget(id);
  delete_records(id);
}

// A job whose /finish nobody heard is followed for ever, and takes a share
// of the cluster from the live ones, unless the daemon finds out otherwise.
// The PS sends /finish once, logs a failure and goes on: a train job that
// ended while no daemon listened, a connection refused or reset, a 503. And a
// job the PS dropped (kLost: 400 to /update; a PS that restarted lost its
// index, and its threads) never finishes at all. So the PS is asked
// (GET /tasks) which jobs it holds, once the jobs are loaded and then every
// ps_check_interval_ms. It adds a job to its index before it answers /start
// and drops it once its /finish call is over, so a started job it does not
// list, and that has not reported since the question, has ended: it is
// forgotten with its records. Should it still run, its next /job makes it
// followed again, as any job this daemon did not know. When the PS cannot
// say, nothing is forgotten.
void MlScheduler::check_what_the_ps_holds() {
  if (settings_.ps_check_interval_ms > 0) {
    ps_check_timer_->start(settings_.ps_check_interval_ms, [this] { check_what_the_ps_holds(); });
  }
  if (ps_check_in_flight_) return;       // a PS slower than the interval is asked once at a time
  std::map<std::string, int64_t> asked;  // started jobs, and the epochs they had reported
  for (const auto& [id, job] : jobs_) {
    if (job.start_delivered) asked.emplace(id, job.epochs_reported);
  }
  if (asked.empty()) return;
  ps_check_in_flight_ = true;
  ps_.held_jobs([this, load = loads_, asked = std::move(asked)](std::optional<std::set<std::string>> held) {
    if (load != loads_) return;  // leadership went (and maybe came back) meanwhile; that load asks afresh
    ps_check_in_flight_ = false;
    if (!loaded_) return;
    if (!held) {
      log_warn("ml_ps_tasks_unknown").kv("why", "GET /tasks failed; every job is kept");
      return;
    }
    for (const auto& [id, epochs] : asked) {
      auto it = jobs_.find(id);
      if (it == jobs_.end() || held->count(id) || it->second.epochs_reported != epochs) continue;
      log_info("ml_job_ended_unheard").kv("job", id).kv("why", "the PS no longer holds it");
      lost_.add(labels({{"phase", "ended-unheard"}}));
      forget_job(id);
    }
  });
}

void MlScheduler::delete_records(const std::string& id) {
  if (store_.unavailable_reason()) {
    deletes_pending_.insert(id);
    if (!flush_timer_->active()) flush_timer_->start(1000, [this] { flush_dirty(); });
    return;
  }
  store_.del(kRequestPrefix + id, false,
             unwaited<WriteResult>("ml_request_delete", kRequestPrefix + id));  // same commit as the one below
  store_.del(kJobPrefix + id, false, [this, id](WriteResult&& r) {
    if (r.status.ok()) return;
    log_warn("ml_job_delete_failed").kv("job", id).kv("error", r.status.message);
    if (!jobs_.count(id)) {
      deletes_pending_.insert(id);
      if (!flush_timer_->active()) flush_timer_->start(1000, [this] { flush_dirty(); });
    }
  });
}

void MlScheduler::handle_infer(RequestContext& ctx) {
  simdjson::dom::object obj;
  InferRequest req;
  if (auto e = parse_json_object(parser_, ctx.request.body, &obj)) return ctx.reply(bad_request(*e));
  if (auto e = parse_infer_request(obj, &req)) return ctx.reply(bad_request(*e));
  std::string fn = req.function_name.empty() ? "network" : req.function_name;
  ClientRequest fwd;
  fwd.method = "POST";
  fwd.url = settings_.router_url + "/" + percent_encode(fn) + "?task=infer&jobId=" + percent_encode(req.model_id) +
            "&N=1&K=-1&funcId=0&batchSize=0&lr=1&epoch=1";
  fwd.headers = {{"Content-Type", "application/json"}};
  fwd.body = ctx.request.body;
  fwd.timeout_ms = 30'000;
  Responder res = ctx.responder;
  client_.request(std::move(fwd), [res](ClientResponse&& r) mutable {
    if (r.error == UV_ETIMEDOUT) return res.send(json_error(504, "function router timed out"));
    if (r.error != 0) return res.send(json_error(502, "function router unreachable: " + r.error_text));
    HttpResponse out;
    out.status = r.status;
    const std::string* ct = r.header("Content-Type");
    out.content_type = ct ? *ct : "";
    out.body = std::move(r.body);
    res.send(std::move(out));
  });
}

void MlScheduler::handle_list(RequestContext& ctx) {
  JsonWriter w;
  w.begin_object().key("jobs").begin_array();
  for (const auto& [id, job] : jobs_) write_job(w, job, false);
  w.end_array().key("queue_depth").value(static_cast<uint64_t>(queue_.size()));
  w.key("running_by_type").begin_object();
  for (const auto& [type, n] : running_by_type_) w.key(type).value(n);
  w.end_object().end_object();
  ctx.reply(json_response(200, w.take()));
}

void MlScheduler::handle_get(RequestContext& ctx) {
  auto it = jobs_.find(ctx.param("id"));
  if (it == jobs_.end()) return ctx.reply(json_error(404, "no job " + ctx.param("id"), "id"));
  JsonWriter w;
  write_job(w, it->second, true);
  ctx.reply(json_response(200, w.take()));
}

// ---- the queue ---------------------------------------------------------------------

void MlScheduler::drain() {
  std::deque<Queued> batch;
  batch.swap(queue_);
  // Read once a turn: nothing changes it within one, and it sums every
  // agent's offers (with 750 agents, reading it for each report was 6% of
  // the daemon's time under the speedup policy).
  const std::optional<long> capacity = capacity_now();
  bool decides_in_rounds = settings_.policy == ParallelismPolicyKind::kSpeedup && capacity;
  std::vector<Reported> round;
  std::unordered_set<std::string> in_round;
  auto decide_all = [&] {
    if (round.empty()) return;
    decide_round(round, *capacity);  // known: update_job adds to a round only then
    round.clear();
    in_round.clear();
  };
  for (auto& q : batch) {
    if (q.op == Queued::Op::kCreate) {
      create_job(q, capacity);
      continue;
    }
    // A job that reports twice in a turn has its first report decided before
    // the second is taken in, as if they had come in turns of their own.
    if (decides_in_rounds && !in_round.insert(q.task.job.id).second) {
      decide_all();
      in_round.insert(q.task.job.id);
    }
    update_job(q, capacity, round);
  }
  decide_all();
}

std::string MlScheduler::new_job_id() {
  static std::mt19937_64 rng{std::random_device{}()};
  for (;;) {
    char buf[9];
    snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rng() & 0xffffffffu));
    if (!jobs_.count(buf)) return buf;
  }
}

void MlScheduler::create_job(Queued& q, std::optional<long> capacity) {
  Job job;
  job.id = new_job_id();
  job.request = std::move(q.request);
  job.created_unix_ms = clock_.unix_ms();
  job.last_report_mono_ms = clock_.now_ms();
  job.order = next_order_++;
  std::string id = job.id;
  jobs_[id] = std::move(job);
  jobs_changed();
  PolicyInput in;
  in.op = PolicyInput::Op::kCreate;
  in.default_parallelism = static_cast<int>(jobs_[id].request.options.default_parallelism);
  // Both policies start a job at its default within its fair share: starting
  // it with only the free workers, or (speedup) at its share by its kind's
  // model, did worse in tools/ml_trace_sim (bench/RESULTS.md).
  in.cap = cap_for(id, capacity);
  record_create(jobs_[id], policy_.decide(PolicyState{}, in), q.responder);
}

void MlScheduler::update_job(Queued& q, std::optional<long> capacity, std::vector<Reported>& round) {
  const std::string& id = q.task.job.id;
  bool created = false;
  if (!jobs_.count(id)) {
    // A job we never saw start (started elsewhere, or its record was lost):
    // follow it from here with the request it carries.
    Job job;
    job.id = id;
    job.request = q.task.request;
    job.created_unix_ms = clock_.unix_ms();
    job.order = next_order_++;
    job.parallelism = static_cast<int>(std::max<int64_t>(q.task.job.state.parallelism, 1));
    job.start_delivered = true;  // the PS already runs it, or it would not report epochs
    jobs_[id] = std::move(job);
    jobs_changed();
    created = true;
  }
  Job& job = jobs_[id];
  PolicyInput in;
  in.op = PolicyInput::Op::kUpdate;
  in.default_parallelism = static_cast<int>(job.request.options.default_parallelism);
  in.static_parallelism = job.request.options.static_parallelism;
  in.parallelism = q.task.job.state.parallelism > 0 ? static_cast<int>(q.task.job.state.parallelism) : job.parallelism;
  in.elapsed_seconds = q.task.job.state.elapsed_time;
  in.cap = cap_for(id, capacity);
  job.epochs_reported += 1;
  job.last_elapsed = in.elapsed_seconds;
  job.last_report_unix_ms = clock_.unix_ms();
  job.last_report_mono_ms = clock_.now_ms();
  job.parallelism = in.parallelism;  // what it runs now: kept if this decision cannot be stored
  bool speedup = settings_.policy == ParallelismPolicyKind::kSpeedup;
  if (speedup && in.elapsed_seconds > 0) {
    EpochPoint point{in.parallelism, in.elapsed_seconds};
    job.epochs.push_back(point);
    trim_points(job.epochs, kSpeedPoints);
    job.epoch_groups = group_points(job.epochs);
    job.model_stale = true;
    speeds_.add(kind_of(job), point);  // a static job's epochs teach its kind too
  }
  if (speedup && !in.static_parallelism && capacity) {
    round.push_back(Reported{&job, in.elapsed_seconds, q.responder, created});
    return;
  }
  record_update(job, decide_alone(job, in), in.elapsed_seconds, q.responder, created);
}

Decision MlScheduler::decide_alone(Job& job, const PolicyInput& in) {
  if (settings_.policy == ParallelismPolicyKind::kKubeml || in.static_parallelism) {
    return policy_.decide(job.policy, in);
  }
  // With the capacity unknown every job may have up to --max-parallelism, so
  // no job takes a worker from another and a job's decision is the one it
  // gets alone, with its own maximum (SpeedupPolicyTest checks that): only
  // its own model is needed. Building and refitting every job's for each
  // /job made a decision's cost grow with the number of jobs
  // (bench/RESULTS.md).
  std::vector<SpeedupJob> alone(1);
  uint64_t fits = kNoFits;
  refresh_view(alone[0], fits, job, /*reporting=*/true);
  Decision d = decide_by_speedup(alone, 0, settings_.max_parallelism, settings_.max_parallelism);
  d.state = job.policy;
  return d;
}

const std::string& MlScheduler::kind_of(Job& job) {
  if (job.kind.empty()) job.kind = SpeedHistory::kind_of(job.request);
  return job.kind;
}

void MlScheduler::decide_round(std::vector<Reported>& round, long capacity) {
  // Every job in arrival order, as the allocation sees it.
  if (!by_arrival_valid_) {
    by_arrival_.clear();
    for (auto& [id, j] : jobs_) by_arrival_.push_back(&j);
    std::sort(by_arrival_.begin(), by_arrival_.end(), [](const Job* a, const Job* b) { return a->order < b->order; });
    speedup_view_.assign(by_arrival_.size(), SpeedupJob{});
    view_fits_.assign(by_arrival_.size(), kNoFits);
    by_arrival_valid_ = true;
  }
  std::vector<size_t> which;  // round[r]'s place in by_arrival_
  std::vector<bool> reporting(by_arrival_.size(), false);
  for (const Reported& r : round) {
    auto at = std::lower_bound(by_arrival_.begin(), by_arrival_.end(), r.job,
                               [](const Job* a, const Job* b) { return a->order < b->order; });
    assert(at != by_arrival_.end() && *at == r.job);  // every job in jobs_ is in by_arrival_
    which.push_back(static_cast<size_t>(at - by_arrival_.begin()));
    reporting[which.back()] = true;
  }
  for (size_t k = 0; k < by_arrival_.size(); ++k) {
    refresh_view(speedup_view_[k], view_fits_[k], *by_arrival_[k], reporting[k]);
  }
  std::vector<Decision> decisions;
  decisions.reserve(round.size());
  {
    SpeedupRound division(speedup_view_, which, capacity, settings_.max_parallelism);
    for (size_t r = 0; r < round.size(); ++r) {
      decisions.push_back(division.decide(which[r]));
      decisions.back().state = round[r].job->policy;
    }
  }
  for (size_t r = 0; r < round.size(); ++r) {
    record_update(*round[r].job, decisions[r], round[r].elapsed, round[r].responder, round[r].created);
  }
}

void MlScheduler::refresh_view(SpeedupJob& view, uint64_t& view_fits, Job& j, bool reporting) {
  int left = static_cast<int>(std::max<int64_t>(j.request.epochs - j.epochs_reported, 0));
  const std::string& kind = kind_of(j);
  bool known = !j.epochs.empty() || speeds_.knows(kind);
  // Refitted when what it is fitted to changed: its own epochs, or its
  // kind's where it has none.
  if (known && (j.model_stale || speeds_.changed_for(kind, j.model_version, j.epoch_groups))) {
    j.model = SpeedModel::fit_grouped(speeds_.groups_for(kind, j.epoch_groups));
    j.model_stale = false;
    ++j.model_fits;
  }
  j.model_version = speeds_.version(kind);
  if (view_fits != j.model_fits) {  // copied only when it changed: a copy is a shared_ptr's count
    view.model = j.model;
    view_fits = j.model_fits;
  }
  double next_report_in = 0;  // a job reporting now, and one not yet reporting, are due now
  if (!reporting && !j.epochs.empty()) {
    double since = static_cast<double>(clock_.now_ms() - j.last_report_mono_ms) / 1000;
    next_report_in = std::max(0.0, j.model.seconds(j.parallelism) - since);
  }
  view.measured = known;
  view.parallelism = j.parallelism;
  view.remaining_epochs = left;
  view.next_report_in = next_report_in;
}

void MlScheduler::apply(Job& job, const Decision& d, double elapsed) {
  job.parallelism = d.parallelism;
  job.policy = d.state;
  job.version += 1;
  job.history.push_back({job.epochs_reported, elapsed, d.parallelism, d.reason(), clock_.unix_ms()});
  while (job.history.size() > kHistoryKept) job.history.pop_front();
  decisions_.add(labels({{"reason", job.history.back().reason}}));
}

// A new job is stored (request and state, one commit) before its id is
// acknowledged; when that fails it is forgotten and the caller hears 503.
void MlScheduler::record_create(Job& job, const Decision& d, Responder responder) {
  apply(job, d, 0);
  std::string id = job.id;
  persist(
      job,
      [this, id, responder](const StoreStatus& st) mutable {
        auto it = jobs_.find(id);
        if (!st.ok()) {
          log_warn("ml_job_not_created").kv("job", id).kv("error", st.message);
          if (it != jobs_.end()) {
            jobs_.erase(it);
            jobs_changed();
          }
          return responder.send(unavailable("store unavailable: " + st.message));
        }
        if (it != jobs_.end()) {
          it->second.request_stored = true;
          send_start(it->second, /*ask_first=*/false);
        }
        responder.send(text_response(200, id));
      },
      /*with_request=*/true);
}

// An epoch's decision is stored, then answered and sent to the PS. A train job
// waits for that update with no time-out, so when the write fails or is not
// done by the deadline the job keeps its parallelism for this epoch, gets
// that as its update all the same, and its state is stored later.
void MlScheduler::record_update(Job& job, const Decision& d, double elapsed, Responder responder, bool created) {
  auto p = std::make_shared<PendingAnswer>();
  p->job_id = job.id;
  p->prev_parallelism = job.parallelism;
  p->prev_policy = job.policy;
  p->elapsed = elapsed;
  p->responder = std::move(responder);
  apply(job, d, elapsed);
  p->version = job.version;
  if (auto why = store_.unavailable_reason()) return answer(*p, "store-unavailable", "store unavailable: " + *why);
  p->deadline_ms = clock_.now_ms() + settings_.decision_store_deadline_ms;
  answers_.push_back(p);
  arm_answer_deadline();
  persist(
      job,
      [this, p](const StoreStatus& st) {
        auto it = jobs_.find(p->job_id);
        if (st.ok() && it != jobs_.end()) it->second.request_stored = true;
        if (!p->answered) return st.ok() ? answer(*p) : answer(*p, "store-failed-or-slow", st.message);
        // Answered at the deadline: memory went back to the kept parallelism, which
        // is not what this wrote (or the write failed). Store what memory holds.
        if (it != jobs_.end()) mark_dirty(p->job_id);
      },
      created);
}

void MlScheduler::answer(PendingAnswer& p, const char* held_cause, const std::string& why) {
  p.answered = true;
  auto it = jobs_.find(p.job_id);
  if (it == jobs_.end()) return p.responder.send(text_response(200, ""));  // finished meanwhile
  Job& job = it->second;
  if (held_cause) {
    if (job.version == p.version) {
      job.parallelism = p.prev_parallelism;
      job.policy = p.prev_policy;
      if (!job.history.empty()) {
        job.history.back().parallelism = p.prev_parallelism;
        job.history.back().reason = "held";
      }
    }
    held_.add(labels({{"cause", held_cause}}));
    log_warn("ml_decision_held").kv("job", p.job_id).kv("parallelism", job.parallelism).kv("why", why);
    mark_dirty(p.job_id);
  }
  std::optional<JobState> update;
  if (!job.ps_lost) update = JobState{job.parallelism, p.elapsed};
  answer_then_update(p.responder, p.job_id, update);
}

void MlScheduler::arm_answer_deadline() {
  if (answer_timer_->active() || answers_.empty()) return;
  uint64_t now = clock_.now_ms();
  uint64_t at = answers_.front()->deadline_ms;
  answer_timer_->start(at > now ? at - now : 0, [this] { answer_overdue(); });
}

void MlScheduler::answer_overdue() {
  uint64_t now = clock_.now_ms();
  while (!answers_.empty() && (answers_.front()->answered || answers_.front()->deadline_ms <= now)) {
    std::shared_ptr<PendingAnswer> p = std::move(answers_.front());
    answers_.pop_front();
    if (!p->answered) {
      answer(*p, "store-failed-or-slow",
             "decision not stored within " + std::to_string(settings_.decision_store_deadline_ms) + " ms");
    }
  }
  arm_answer_deadline();
}

void MlScheduler::mark_dirty(const std::string& id) {
  dirty_.insert(id);
  if (!flush_timer_->active()) flush_timer_->start(1000, [this] { flush_dirty(); });
}

// Stores the jobs whose state in memory the store does not have yet.
void MlScheduler::flush_dirty() {
  if (dirty_.empty() && deletes_pending_.empty()) return;
  if (store_.unavailable_reason()) {
    flush_timer_->start(1000, [this] { flush_dirty(); });
    return;
  }
  std::set<std::string> deletes;
  deletes.swap(deletes_pending_);
  for (const auto& id : deletes) {
    if (!jobs_.count(id)) delete_records(id);  // a job of that id since: its records stay
  }
  std::set<std::string> ids;
  ids.swap(dirty_);
  for (const auto& id : ids) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;
    persist(
        it->second,
        [this, id](const StoreStatus& st) {
          if (st.ok()) {
            auto it = jobs_.find(id);
            if (it != jobs_.end()) it->second.request_stored = true;
            return;
          }
          log_warn("ml_job_store_failed").kv("job", id).kv("error", st.message);
          if (jobs_.count(id)) mark_dirty(id);
        },
        !it->second.request_stored);
  }
}

void MlScheduler::send_start(const Job& job, bool ask_first) {
  JsonWriter w;
  write_train_task(w, job.request, job.id, JobState{job.parallelism, 0});
  std::string id = job.id;
  ps_.start(id, w.take(), ask_first, [this, id] {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return;
    it->second.start_delivered = true;
    // So a restart does not ask again; if this write is lost, a restart asks /tasks.
    persist(it->second, [id](const StoreStatus& st) {
      if (!st.ok()) log_warn("ml_job_store_failed").kv("job", id).kv("error", st.message);
    });
  });
}

void MlScheduler::persist(const Job& job, std::function<void(const StoreStatus&)> done, bool with_request) {
  if (with_request) {
    // Same loop turn, so the same commit as the state record acknowledged below.
    JsonWriter w;
    write_train_request(w, job.request);
    store_.put(kRequestPrefix + job.id, w.take(), 0, unwaited<WriteResult>("ml_request_put", kRequestPrefix + job.id));
  }
  store_.put(kJobPrefix + job.id, encode(job), 0, [done = std::move(done)](WriteResult&& r) { done(r.status); });
}

// ---- capacity -------------------------------------------------------------------------

std::map<std::string, int> MlScheduler::caps(std::optional<long> capacity) const {
  std::vector<const Job*> ordered;
  for (const auto& [id, job] : jobs_) ordered.push_back(&job);
  std::sort(ordered.begin(), ordered.end(), [](const Job* a, const Job* b) { return a->order < b->order; });
  auto shares = fair_shares(capacity, ordered.size(), settings_.max_parallelism);
  std::map<std::string, int> out;
  for (size_t i = 0; i < ordered.size(); ++i) out[ordered[i]->id] = shares[i];
  return out;
}

int MlScheduler::cap_for(const std::string& job_id) const { return cap_for(job_id, capacity_now()); }

int MlScheduler::cap_for(const std::string& job_id, std::optional<long> capacity) const {
  if (!capacity_) return settings_.max_parallelism;  // unlimited: no share to compute
  // Capacity that rose since the shares were computed counts at once: jobs
  // that arrived before the agents offered would otherwise keep a share of
  // nothing until the tick (KubeML's emulator submits as soon as the daemon
  // answers). A drop waits for the tick, so an agent's re-offer (its offer
  // rescinded, then made again) does not shrink every share.
  if (!caps_cache_ || capacity.value_or(0) > caps_capacity_) refresh_caps(capacity);
  auto it = caps_cache_->find(job_id);
  return it == caps_cache_->end() ? settings_.max_parallelism : it->second;
}

void MlScheduler::recompute() {
  recompute_timer_->start(settings_.recompute_interval_ms, [this] { recompute(); });
  // Capacity may have moved since the last tick. A job over its new share is
  // not told now (it would take an update it did not ask for as a later
  // epoch's answer): its next /job is answered within the share.
  if (capacity_) refresh_caps(capacity_());
}

void MlScheduler::refresh_caps(std::optional<long> capacity) const {
  caps_cache_ = caps(capacity);
  caps_capacity_ = capacity.value_or(0);
}

// ---- PS metrics --------------------------------------------------------------------------

void MlScheduler::poll_metrics() {
  ClientRequest req;
  req.url = settings_.ps_metrics_url;
  req.timeout_ms = std::max<uint64_t>(1000, settings_.metrics_poll_interval_ms / 2);
  client_.request(std::move(req), [this](ClientResponse&& r) {
    poll_timer_->start(settings_.metrics_poll_interval_ms, [this] { poll_metrics(); });
    if (!r.ok()) {
      polls_.add(labels({{"result", "error"}}));
      return;
    }
    polls_.add(labels({{"result", "ok"}}));
    for (const auto& s : parse_prometheus_text(r.body)) {
      if (s.name == "kubeml_job_running_total") {
        if (const std::string* type = s.label("type")) running_by_type_[*type] = s.value;
        continue;
      }
      const std::string* jobid = s.label("jobid");
      if (jobid == nullptr) continue;
      auto it = jobs_.find(*jobid);
      if (it == jobs_.end()) continue;
      for (const char* g : kJobGauges) {
        if (s.name == g) it->second.ps_metrics[s.name] = s.value;
      }
    }
  });
}

// ---- records ---------------------------------------------------------------------------------

void MlScheduler::write_job(JsonWriter& w, const Job& job, bool full) const {
  w.begin_object();
  w.key("id").value(job.id);
  w.key("parallelism").value(job.parallelism);
  w.key("reference_epoch_seconds").value(job.policy.reference_epoch_seconds);
  w.key("epochs_reported").value(job.epochs_reported);
  w.key("last_elapsed_time").value(job.last_elapsed);
  w.key("created_unix_ms").value(job.created_unix_ms);
  w.key("last_report_unix_ms").value(job.last_report_unix_ms);
  // Stale: silent for more than ten of its own epochs.
  bool stale = job.last_elapsed > 0 &&
               clock_.now_ms() - job.last_report_mono_ms > static_cast<uint64_t>(job.last_elapsed * 10'000);
  w.key("stale").value(stale);
  w.key("cap").value(cap_for(job.id));
  w.key("request");
  write_train_request(w, job.request);
  w.key("ps").begin_object();
  w.key("start_delivered").value(job.start_delivered);
  w.key("lost").value(job.ps_lost);
  if (const auto* st = ps_.status(job.id)) {
    using Phase = PsDelivery::Phase;
    const char* state = st->phase != Phase::kStarted && st->phase != Phase::kStarting
                            ? PsDelivery::phase_name(st->phase)
                        : st->in_flight                                       ? "sending"
                        : st->failures > 0                                    ? "retrying"
                        : st->update_pending || st->phase == Phase::kStarting ? "queued"
                                                                              : "delivered";
    w.key("state").value(state);
    w.key("delivered").value(st->delivered).key("failures").value(st->failures);
    w.key("unconfirmed").value(st->unconfirmed);
    if (!st->last_error.empty()) w.key("last_error").value(st->last_error);
  } else if (job.ps_lost) {
    w.key("state").value("lost");
  }
  w.end_object();
  w.key("metrics").begin_object();
  for (const auto& [name, v] : job.ps_metrics) w.key(name).value(v);
  w.end_object();
  if (full) {
    w.key("history").begin_array();
    for (const auto& h : job.history) {
      w.begin_object().key("epoch").value(h.epoch).key("elapsed_time").value(h.elapsed_time);
      w.key("parallelism").value(h.parallelism).key("reason").value(h.reason).key("at_unix_ms").value(h.at_unix_ms);
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
}

std::string MlScheduler::encode(const Job& job) const {
  JsonWriter w;
  w.begin_object();
  w.key("id").value(job.id);
  w.key("parallelism").value(job.parallelism);
  w.key("reference").value(job.policy.reference_epoch_seconds);
  w.key("epochs_reported").value(job.epochs_reported);
  w.key("last_elapsed").value(job.last_elapsed);
  w.key("created_unix_ms").value(job.created_unix_ms);
  w.key("last_report_unix_ms").value(job.last_report_unix_ms);
  w.key("start_delivered").value(job.start_delivered);
  w.key("history").begin_array();
  // The store keeps the latest few decisions; memory keeps kHistoryKept.
  size_t skip = job.history.size() > kHistoryStored ? job.history.size() - kHistoryStored : 0;
  for (const auto& h : job.history) {
    if (skip > 0) {
      --skip;
      continue;
    }
    w.begin_array().value(h.epoch).value(h.elapsed_time).value(h.parallelism).value(h.reason).value(h.at_unix_ms);
    w.end_array();
  }
  w.end_array().end_object();
  return w.take();
}

std::optional<MlScheduler::Job> MlScheduler::decode(std::string_view json) {
  simdjson::dom::object obj;
  if (parse_json_object(parser_, json, &obj)) return std::nullopt;
  Job job;
  int64_t par = 1;
  if (read_string(obj, "id", "id", &job.id, true) || read_int(obj, "parallelism", "p", &par) ||
      read_number(obj, "reference", "r", &job.policy.reference_epoch_seconds) ||
      read_int(obj, "epochs_reported", "e", &job.epochs_reported) ||
      read_number(obj, "last_elapsed", "l", &job.last_elapsed) ||
      read_int(obj, "created_unix_ms", "c", &job.created_unix_ms) ||
      read_int(obj, "last_report_unix_ms", "lr", &job.last_report_unix_ms) ||
      read_bool(obj, "start_delivered", "s", &job.start_delivered))
    return std::nullopt;
  job.parallelism = static_cast<int>(par);
  simdjson::dom::array history;
  if (obj["history"].get(history) == simdjson::SUCCESS) {
    for (simdjson::dom::element e : history) {
      simdjson::dom::array a;
      if (e.get(a) != simdjson::SUCCESS || a.size() != 5) continue;
      HistoryEntry h;
      int64_t p = 0;
      std::string_view reason;
      if (a.at(0).get(h.epoch) || a.at(1).get(h.elapsed_time) || a.at(2).get(p) || a.at(3).get(reason) ||
          a.at(4).get(h.at_unix_ms))
        continue;
      h.parallelism = static_cast<int>(p);
      h.reason = std::string(reason);
      job.history.push_back(std::move(h));
    }
  }
  return job;
}

}  // namespace uvsched
