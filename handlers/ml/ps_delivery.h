// Delivers the scheduler's calls to KubeML's parameter server (PS) the way the
// real PS needs them (SPEC §8):
//  - POST /start once per job. It blocks while the PS makes the job's pod
//    (tens of seconds), and a second /start for a job the PS holds makes it
//    drop the job. So after a time-out, a 5xx or a broken connection the PS is
//    asked (GET /tasks) whether it holds the job, and /start is sent again only
//    if it does not. A job resumed after a restart is asked about first.
//  - POST /update/{id}, exactly once per update() (one per /job). The PS hands
//    it to the job over an unbuffered channel, so a second copy would be taken
//    as the answer to a later epoch: an update whose call timed out, or whose
//    connection was lost after it was written, is never sent again. One that
//    surely did not reach the job (refused connection, 5xx) is retried with
//    backoff. A 400 means the PS does not hold the job:
//    it is lost, and nothing more is sent for it.
// One call per job in flight.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "handlers/ml/kubeml_types.h"
#include "handlers/ops/metrics_registry.h"
#include "reactor/clock.h"
#include "reactor/http_requester.h"

namespace uvsched {

class PsDelivery {
 public:
  struct Options {
    uint64_t start_timeout_ms = 60'000;   // --ps-start-timeout
    uint64_t update_timeout_ms = 60'000;  // the PS answers once the job has read it
    uint64_t tasks_timeout_ms = 10'000;
    uint64_t backoff_min_ms = 100;
    uint64_t backoff_max_ms = 30'000;
  };

  enum class Phase {
    kStarting,      // /start (or the /tasks question before it) not yet answered
    kStarted,       // the PS holds the job
    kStartRefused,  // the PS answered 4xx to /start: the task itself is wrong
    kLost,          // the PS answered 400 to /update: it no longer holds the job
  };

  struct JobStatus {
    Phase phase = Phase::kStarted;
    std::optional<JobState> update_pending;
    bool in_flight = false;
    uint64_t delivered = 0;
    uint64_t unconfirmed = 0;  // updates whose call timed out (not sent again)
    uint64_t failures = 0;     // since the last success
    std::string last_error;
  };

  // Told once when a job becomes kLost or kStartRefused.
  using LostCallback = std::function<void(const std::string& job_id, const std::string& why)>;

  PsDelivery(HttpRequester& client, Clock& clock, MetricsRegistry& metrics, std::string ps_url, Options options);

  void on_lost(LostCallback cb) { on_lost_ = std::move(cb); }
  // Starts the job on the PS; on_started runs once the PS holds it. With
  // ask_first (a job resumed from the store) /tasks is asked before any /start.
  void start(const std::string& job_id, std::string task_json, bool ask_first, std::function<void()> on_started);
  // Sends one update; a job never start()ed here counts as started.
  void update(const std::string& job_id, JobState state);
  void forget(const std::string& job_id);
  // Leadership lost: every job is forgotten; calls already sent are not
  // cancelled, and updates owed (on their way, waiting or to be retried) are
  // still delivered first.
  void forget_all();
  // GET /tasks once, for no job in particular: the ids of the jobs the PS
  // holds, or nullopt when it cannot say (unreachable, an error status, a
  // body that is not a task list).
  void held_jobs(std::function<void(std::optional<std::set<std::string>>)> done);
  const JobStatus* status(const std::string& job_id) const;
  static const char* phase_name(Phase p);
  // Runs `done` (from a timer, never from within a call) once no started job
  // is owed an update (none in flight, waiting or to be retried), or after
  // `timeout_ms` whatever is still owed. A stopping daemon waits for this
  // before it closes its client: an /update cancelled there is one that a
  // train job, which has its /job answer, waits for without a time-out, and
  // the next daemon does not know it is owed. A later call replaces `done`.
  void when_updates_delivered(uint64_t timeout_ms, std::function<void()> done);

 private:
  struct Job {
    JobStatus status;
    std::string start_body;
    bool ask_first = false;
    std::function<void()> on_started;
    std::unique_ptr<Timer> retry;
    uint64_t backoff_ms = 0;
    HttpRequester::RequestId request = 0;
    bool draining = false;  // forgotten but for the update it still owes
  };

  void pump(const std::string& job_id);
  // Sends `req` as the job's one call in flight; `answered` runs unless the job was forgotten meanwhile.
  void call(const std::string& job_id, Job& job, ClientRequest req,
            std::function<void(Job&, ClientResponse&&)> answered);
  void send_start(const std::string& job_id, Job& job);
  void ask_tasks(const std::string& job_id, Job& job);
  void send_update(const std::string& job_id, Job& job);
  void started(const std::string& job_id, Job& job);
  void gone(const std::string& job_id, Job& job, Phase phase, const std::string& why);
  void succeeded(const std::string& op, Job& job);
  void retry_later(const std::string& job_id, const std::string& op, const std::string& why);
  // How many started jobs are owed an update (in flight, waiting or to be retried).
  uint64_t updates_owed() const;
  // Fires the when_updates_delivered callback if one waits and nothing is owed.
  void check_delivered();
  void fire_delivered();

  HttpRequester& client_;
  Clock& clock_;
  std::string ps_url_;
  Options options_;
  CounterFamily& calls_;
  LostCallback on_lost_;
  std::map<std::string, Job> jobs_;
  std::function<void()> delivered_;  // when_updates_delivered's, until it runs
  std::unique_ptr<Timer> delivered_timer_;
};

// True when GET /tasks's body (a JSON array of TrainTasks, or null) lists job_id.
// nullopt when the body is not such a list.
std::optional<bool> tasks_list_holds(std::string_view body, std::string_view job_id);
// Every job id such a body lists; nullopt when it is not such a list.
std::optional<std::set<std::string>> tasks_list_ids(std::string_view body);

}  // namespace uvsched
