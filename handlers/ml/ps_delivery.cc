#include "handlers/ml/ps_delivery.h"

#include <algorithm>

#include "reactor/log.h"

namespace uvsched {

PsDelivery::PsDelivery(HttpClient& client, Clock& clock, MetricsRegistry& metrics, std::string ps_url,
                       Options options)
    : client_(client),
      clock_(clock),
      ps_url_(std::move(ps_url)),
      options_(options),
      calls_(metrics.counter("uvsched_ps_calls_total", "Calls to the parameter server by operation and result.")) {
  while (!ps_url_.empty() && ps_url_.back() == '/') ps_url_.pop_back();
}

void PsDelivery::start(const std::string& job_id, std::string task_json, std::function<void()> on_started) {
  Job& job = jobs_[job_id];
  job.status.start_pending = true;
  job.start_body = std::move(task_json);
  job.on_started = std::move(on_started);
  pump(job_id);
}

void PsDelivery::update(const std::string& job_id, JobState state) {
  jobs_[job_id].status.update_pending = state;  // replaces an older one still waiting
  pump(job_id);
}

void PsDelivery::forget(const std::string& job_id) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  if (it->second.status.in_flight) client_.cancel(it->second.request);
  jobs_.erase(it);
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

  ClientRequest req;
  req.method = "POST";
  req.headers = {{"Content-Type", "application/json"}};
  req.timeout_ms = options_.timeout_ms;
  std::string op;
  std::optional<JobState> sent_update;
  if (job.status.start_pending) {
    op = "start";
    req.url = ps_url_ + "/start";
    req.body = job.start_body;
  } else if (job.status.update_pending) {
    op = "update";
    req.url = ps_url_ + "/update/" + job_id;
    JsonWriter w;
    write_job_state(w, *job.status.update_pending);
    req.body = w.take();
    sent_update = job.status.update_pending;
    job.status.update_pending.reset();
  } else {
    return;
  }
  job.status.in_flight = true;
  job.request = client_.request(std::move(req), [this, job_id, op, sent_update](ClientResponse&& r) {
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return;
    Job& job = it->second;
    job.status.in_flight = false;
    if (!r.ok()) {
      // Put the update back unless a newer decision has arrived meanwhile.
      if (sent_update && !job.status.update_pending) job.status.update_pending = sent_update;
      failed(job_id, op, r.error != 0 ? r.error_text : "PS answered " + std::to_string(r.status));
      return;
    }
    calls_.add(labels({{"op", op}, {"result", "ok"}}));
    job.status.delivered += 1;
    job.status.failures = 0;
    job.status.last_error.clear();
    job.backoff_ms = 0;
    if (op == "start") {
      job.status.start_pending = false;
      job.start_body.clear();
      if (auto cb = std::move(job.on_started)) cb();
    }
    pump(job_id);
  });
}

void PsDelivery::failed(const std::string& job_id, const std::string& op, const std::string& why) {
  Job& job = jobs_[job_id];
  calls_.add(labels({{"op", op}, {"result", "error"}}));
  job.status.failures += 1;
  job.status.last_error = why;
  job.backoff_ms = std::clamp(job.backoff_ms * 2, options_.backoff_min_ms, options_.backoff_max_ms);
  log_warn("ps_call_failed").kv("job", job_id).kv("op", op).kv("error", why).kv("retry_ms", job.backoff_ms);
  if (!job.retry) job.retry = clock_.new_timer();
  job.retry->start(job.backoff_ms, [this, job_id] {
    calls_.add(labels({{"op", "retry"}, {"result", "scheduled"}}));
    pump(job_id);
  });
}

}  // namespace uvsched
