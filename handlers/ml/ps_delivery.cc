#include "handlers/ml/ps_delivery.h"

#include <simdjson.h>
#include <uv.h>

#include <algorithm>

#include "reactor/log.h"

namespace uvsched {

std::optional<std::set<std::string>> tasks_list_ids(std::string_view body) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(body.data(), body.size()).get(doc)) return std::nullopt;
  std::set<std::string> ids;
  if (doc.is_null()) return ids;  // Go marshals an empty index as null
  simdjson::dom::array tasks;
  if (doc.get(tasks)) return std::nullopt;
  for (simdjson::dom::element t : tasks) {
    std::string_view id;
    if (!t["job"]["id"].get(id)) ids.emplace(id);
  }
  return ids;
}

std::optional<bool> tasks_list_holds(std::string_view body, std::string_view job_id) {
  auto ids = tasks_list_ids(body);
  if (!ids) return std::nullopt;
  return ids->count(std::string(job_id)) > 0;
}

PsDelivery::PsDelivery(HttpRequester& client, Clock& clock, MetricsRegistry& metrics, std::string ps_url,
                       Options options)
    : client_(client),
      clock_(clock),
      ps_url_(std::move(ps_url)),
      options_(options),
      calls_(metrics.counter("uvsched_ps_calls_total", "Calls to the parameter server by operation and result.")) {
  while (!ps_url_.empty() && ps_url_.back() == '/') ps_url_.pop_back();
}

const char* PsDelivery::phase_name(Phase p) {
  switch (p) {
    case Phase::kStarting:
      return "starting";
    case Phase::kStarted:
      return "started";
    case Phase::kStartRefused:
      return "start-refused";
    case Phase::kLost:
      return "lost";
  }
  return "?";
}

void PsDelivery::start(const std::string& job_id, std::string task_json, bool ask_first,
                       std::function<void()> on_started) {
  Job& job = jobs_[job_id];
  job.draining = false;
  job.status.phase = Phase::kStarting;
  job.start_body = std::move(task_json);
  job.ask_first = ask_first;
  job.on_started = std::move(on_started);
  pump(job_id);
}

void PsDelivery::update(const std::string& job_id, JobState state) {
  Job& job = jobs_[job_id];
  if (job.status.phase == Phase::kLost || job.status.phase == Phase::kStartRefused) return;
  job.status.update_pending = state;
  pump(job_id);
}

void PsDelivery::forget(const std::string& job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  if (it->second.status.in_flight) client_.cancel(it->second.request);
  jobs_.erase(it);
}

void PsDelivery::forget_all() {
  // An update is a train job's only answer to its /job, and the next leader
  // does not know it is owed. So a started job whose update is on its way,
  // waits behind one or waits for a retry stays until that update is
  // delivered (or surely cannot be): a refused one is retried, and a stop
  // waits for it. Other calls already sent are let finish; their answers
  // find no job.
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    Job& job = it->second;
    if (job.status.phase == Phase::kStarted && (job.status.update_pending || job.status.in_flight)) {
      job.draining = true;
      job.on_started = nullptr;
      ++it;
    } else {
      it = jobs_.erase(it);
    }
  }
}

void PsDelivery::held_jobs(std::function<void(std::optional<std::set<std::string>>)> done) {
  ClientRequest req;
  req.url = ps_url_ + "/tasks";
  req.timeout_ms = options_.tasks_timeout_ms;
  client_.request(std::move(req), [this, done = std::move(done)](ClientResponse&& r) {
    auto ids = r.ok() ? tasks_list_ids(r.body) : std::nullopt;
    calls_.add(labels({{"op", "tasks"}, {"result", ids ? "ok" : "error"}}));
    done(std::move(ids));
  });
}

const PsDelivery::JobStatus* PsDelivery::status(const std::string& job_id) const {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : &it->second.status;
}

void PsDelivery::pump(const std::string& job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  Job& job = it->second;
  if (job.status.in_flight || (job.retry && job.retry->active())) return;
  if (job.draining && !job.status.update_pending) {
    jobs_.erase(it);  // its last owed update is delivered
    return;
  }
  switch (job.status.phase) {
    case Phase::kStarting:
      return job.ask_first ? ask_tasks(job_id, job) : send_start(job_id, job);
    case Phase::kStarted:
      if (job.status.update_pending) send_update(job_id, job);
      return;
    case Phase::kStartRefused:
    case Phase::kLost:
      return;
  }
}

void PsDelivery::call(const std::string& job_id, Job& job, ClientRequest req,
                      std::function<void(Job&, ClientResponse&&)> answered) {
  job.status.in_flight = true;
  job.request = client_.request(std::move(req), [this, job_id, answered = std::move(answered)](ClientResponse&& r) {
    auto it = jobs_.find(job_id);
    if (it != jobs_.end()) {  // (else forgotten meanwhile)
      it->second.status.in_flight = false;
      answered(it->second, std::move(r));
    }
    check_delivered();
  });
}

void PsDelivery::send_start(const std::string& job_id, Job& job) {
  ClientRequest req;
  req.method = "POST";
  req.url = ps_url_ + "/start";
  req.headers = {{"Content-Type", "application/json"}};
  req.body = job.start_body;
  req.timeout_ms = options_.start_timeout_ms;
  call(job_id, job, std::move(req), [this, job_id](Job& job, ClientResponse&& r) {
    if (r.ok()) {
      succeeded("start", job);
      return started(job_id, job);
    }
    if (r.error == 0 && r.status >= 400 && r.status < 500) {
      calls_.add(labels({{"op", "start"}, {"result", "refused"}}));
      return gone(job_id, job, Phase::kStartRefused, "PS refused /start with " + std::to_string(r.status));
    }
    // It may hold the job all the same (a slow pod, an answer lost on the
    // way): ask before sending /start again.
    job.ask_first = true;
    retry_later(job_id, "start", r.error != 0 ? r.error_text : "PS answered " + std::to_string(r.status));
  });
}

void PsDelivery::ask_tasks(const std::string& job_id, Job& job) {
  ClientRequest req;
  req.url = ps_url_ + "/tasks";
  req.timeout_ms = options_.tasks_timeout_ms;
  call(job_id, job, std::move(req), [this, job_id](Job& job, ClientResponse&& r) {
    std::optional<bool> holds = r.ok() ? tasks_list_holds(r.body, job_id) : std::nullopt;
    if (!holds) {
      return retry_later(job_id, "tasks",
                         r.error != 0
                             ? r.error_text
                             : (r.ok() ? "PS's /tasks is not a task list" : "PS answered " + std::to_string(r.status)));
    }
    succeeded("tasks", job);
    if (*holds) {
      log_info("ps_already_holds_job").kv("job", job_id);
      return started(job_id, job);
    }
    log_info("ps_start_resent").kv("job", job_id).kv("why", "the PS does not hold the job");
    job.ask_first = false;
    send_start(job_id, job);
  });
}

void PsDelivery::send_update(const std::string& job_id, Job& job) {
  ClientRequest req;
  req.method = "POST";
  req.url = ps_url_ + "/update/" + job_id;
  req.headers = {{"Content-Type", "application/json"}};
  JsonWriter w;
  write_job_state(w, *job.status.update_pending);
  req.body = w.take();
  req.timeout_ms = options_.update_timeout_ms;
  JobState sent = *job.status.update_pending;
  job.status.update_pending.reset();
  call(job_id, job, std::move(req), [this, job_id, sent](Job& job, ClientResponse&& r) {
    if (r.ok()) {
      succeeded("update", job);
      return pump(job_id);
    }
    if (r.error == 0 && r.status == 400) {
      calls_.add(labels({{"op", "update"}, {"result", "lost"}}));
      return gone(job_id, job, Phase::kLost, "PS answered 400 to /update: it does not hold the job");
    }
    if (r.error == UV_ETIMEDOUT || (r.error != 0 && r.sent)) {
      // The PS reads the whole request before it hands the update to the job
      // and does so whatever becomes of our connection: a time-out or a
      // connection lost after sending may still reach the job, and a second
      // copy would answer a later epoch.
      calls_.add(labels({{"op", "update"}, {"result", "unconfirmed"}}));
      job.status.unconfirmed += 1;
      job.status.last_error =
          (r.error == UV_ETIMEDOUT ? std::string("update timed out") : "update sent, then " + r.error_text) +
          "; not sent again";
      log_warn("ps_update_unconfirmed").kv("job", job_id).kv("parallelism", sent.parallelism).kv("error", r.error_text);
      return pump(job_id);
    }
    // Refused, a connection lost before the request was written, or a 5xx:
    // the job did not get it.
    if (!job.status.update_pending) job.status.update_pending = sent;
    retry_later(job_id, "update", r.error != 0 ? r.error_text : "PS answered " + std::to_string(r.status));
  });
}

void PsDelivery::started(const std::string& job_id, Job& job) {
  job.status.phase = Phase::kStarted;
  job.start_body.clear();
  job.start_body.shrink_to_fit();
  if (auto cb = std::move(job.on_started)) cb();
  pump(job_id);
}

void PsDelivery::gone(const std::string& job_id, Job& job, Phase phase, const std::string& why) {
  job.status.phase = phase;
  job.status.update_pending.reset();
  job.status.last_error = why;
  job.start_body.clear();
  log_warn("ps_job_lost").kv("job", job_id).kv("phase", phase_name(phase)).kv("error", why);
  if (job.draining) {
    jobs_.erase(job_id);  // (the caller returns at once)
    return;
  }
  if (on_lost_) on_lost_(job_id, why);
}

void PsDelivery::succeeded(const std::string& op, Job& job) {
  calls_.add(labels({{"op", op}, {"result", "ok"}}));
  job.status.delivered += op == "update" ? 1 : 0;
  job.status.failures = 0;
  job.status.last_error.clear();
  job.backoff_ms = 0;
}

void PsDelivery::retry_later(const std::string& job_id, const std::string& op, const std::string& why) {
  Job& job = jobs_[job_id];
  calls_.add(labels({{"op", op}, {"result", "error"}}));
  job.status.failures += 1;
  job.status.last_error = why;
  job.backoff_ms = std::clamp(job.backoff_ms * 2, options_.backoff_min_ms, options_.backoff_max_ms);
  log_warn("ps_call_failed").kv("job", job_id).kv("op", op).kv("error", why).kv("retry_ms", job.backoff_ms);
  if (!job.retry) job.retry = clock_.new_timer();
  job.retry->start(job.backoff_ms, [this, job_id] { pump(job_id); });
}

uint64_t PsDelivery::updates_owed() const {
  uint64_t owed = 0;
  for (const auto& [id, job] : jobs_) {
    owed += job.status.phase == Phase::kStarted && (job.status.in_flight || job.status.update_pending) ? 1 : 0;
  }
  return owed;
}

void PsDelivery::when_updates_delivered(uint64_t timeout_ms, std::function<void()> done) {
  delivered_ = std::move(done);
  if (!delivered_timer_) delivered_timer_ = clock_.new_timer();
  if (updates_owed() == 0) return delivered_timer_->start(0, [this] { fire_delivered(); });
  delivered_timer_->start(timeout_ms, [this] {
    log_warn("ps_updates_undelivered").kv("jobs", updates_owed());
    fire_delivered();
  });
}

void PsDelivery::check_delivered() {
  if (delivered_ && updates_owed() == 0) delivered_timer_->start(0, [this] { fire_delivered(); });
}

void PsDelivery::fire_delivered() {
  if (auto done = std::move(delivered_)) {
    delivered_ = nullptr;
    done();
  }
}

}  // namespace uvsched
