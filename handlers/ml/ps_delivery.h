// Delivers parallelism decisions to KubeML's parameter server: POST /start
// with the whole TrainTask once per job, then POST /update/{id} with the job
// state. One call per job in flight; a newer update replaces a queued older
// one (only the latest decision matters); a failed call (transport error or
// any non-2xx) is retried with exponential backoff. KubeML ignored failures
// and left retries as a TODO.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "handlers/ml/kubeml_types.h"
#include "handlers/ops/metrics_registry.h"
#include "reactor/clock.h"
#include "reactor/http_client.h"

namespace uvsched {

class PsDelivery {
 public:
  struct Options {
    uint64_t timeout_ms = 5'000;
    uint64_t backoff_min_ms = 100;
    uint64_t backoff_max_ms = 30'000;
  };

  struct JobStatus {
    bool start_pending = false;
    std::optional<JobState> update_pending;
    bool in_flight = false;
    uint64_t delivered = 0;
    uint64_t failures = 0;  // since the last success
    std::string last_error;
  };

  PsDelivery(HttpClient& client, Clock& clock, MetricsRegistry& metrics, std::string ps_url, Options options);

  // Queues the job's /start; on_started runs once the PS accepted it.
  void start(const std::string& job_id, std::string task_json, std::function<void()> on_started);
  void update(const std::string& job_id, JobState state);
  void forget(const std::string& job_id);
  const JobStatus* status(const std::string& job_id) const;

 private:
  struct Job {
    JobStatus status;
    std::string start_body;
    std::function<void()> on_started;
    std::unique_ptr<Timer> retry;
    uint64_t backoff_ms = 0;
    HttpClient::RequestId request = 0;
  };

  void pump(const std::string& job_id);
  void failed(const std::string& job_id, const std::string& op, const std::string& why);

  HttpClient& client_;
  Clock& clock_;
  std::string ps_url_;
  Options options_;
  CounterFamily& calls_;
  std::map<std::string, Job> jobs_;
};

}  // namespace uvsched
