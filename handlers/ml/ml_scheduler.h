// The ML training scheduler, wire-compatible with KubeML's: /train, /job,
// /infer, /finish/{id}, plus /v1/jobs. Requests wait in a FIFO queue (KubeML's
// SchedulerQueue) that the loop drains on its next turn; each decision comes
// from the ParallelismPolicy (under the speedup policy with a known capacity,
// the reports of one turn are decided together on one division of the
// cluster: SpeedupRound), is stored before it is acknowledged (so a
// restart keeps every job's reference epoch time) and then goes to the
// parameter server through PsDelivery.
// A train job waits for its update without a time-out, so every /job gets
// exactly one update and nothing else ever does (SPEC §8): when its decision
// cannot be stored in time the job keeps its parallelism for that epoch and
// its state is stored once the store is back. Capacity changes take effect in
// the next answer. Timers refresh the fair shares and poll the PS's metrics.
#pragma once

#include <simdjson.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "handlers/ml/kubeml_types.h"
#include "handlers/ml/ps_delivery.h"
#include "handlers/ml/speed_history.h"
#include "handlers/ops/metrics_registry.h"
#include "handlers/router.h"
#include "policy/parallelism_policy.h"
#include "policy/speed_model.h"
#include "policy/speedup_policy.h"
#include "reactor/clock.h"
#include "reactor/clock_turn.h"
#include "reactor/http_requester.h"
#include "reactor/url.h"
#include "storage/store.h"

namespace uvsched {

class MlScheduler {
 public:
  struct Settings {
    int max_parallelism = 32;
    uint64_t recompute_interval_ms = 5'000;
    uint64_t metrics_poll_interval_ms = 10'000;  // 0: off
    std::string ps_url = "http://127.0.0.1:10300";
    std::string ps_metrics_url = "http://127.0.0.1:8080/metrics";
    uint64_t ps_start_timeout_ms = 60'000;
    // How often the PS is asked which jobs it holds (check_what_the_ps_holds); 0: off.
    uint64_t ps_check_interval_ms = 30'000;
    // A /job whose decision is not stored within this is answered with the
    // job's parallelism unchanged (the job waits for nothing else).
    uint64_t decision_store_deadline_ms = 1'000;
    std::string router_url = "http://127.0.0.1:8888";
    ParallelismPolicyKind policy = ParallelismPolicyKind::kKubeml;
  };
  // How many parallel functions the cluster can hold now; nullopt: unlimited.
  using CapacityFn = std::function<std::optional<long>()>;
  // A job's decisions change its state record; its request is written once.
  static constexpr const char* kJobPrefix = "/uvsched/ml/jobs/";
  static constexpr const char* kRequestPrefix = "/uvsched/ml/requests/";

  MlScheduler(Clock& clock, Store& store, HttpRequester& client, MetricsRegistry& metrics, Settings settings,
              std::function<bool()> is_leader);
  ~MlScheduler();

  void set_capacity(CapacityFn capacity) { capacity_ = std::move(capacity); }
  void add_routes(Router& router);
  // Restores jobs from the store and resumes their deliveries; starts the timers.
  void start();
  void stop();
  // `done` once every update owed to a running job is delivered to the PS,
  // or after `timeout_ms` (PsDelivery::when_updates_delivered): a stopping
  // daemon closes its client only then.
  void when_updates_delivered(uint64_t timeout_ms, std::function<void()> done) {
    ps_.when_updates_delivered(timeout_ms, std::move(done));
  }
  // Leadership moved. Taking over: the jobs are loaded afresh (decisions the
  // old leader stored since are known). Stepping down: every decision waiting
  // for its write is answered now (its job waits for nothing else), then the
  // timers and PS calls stop and the jobs are forgotten.
  void leadership_changed(bool leading);
  bool loaded() const { return loaded_; }
  size_t job_count() const { return jobs_.size(); }

 private:
  struct HistoryEntry {
    int64_t epoch = 0;
    double elapsed_time = 0;
    int parallelism = 0;
    std::string reason;
    int64_t at_unix_ms = 0;
  };
  struct Job {
    std::string id;
    TrainRequest request;
    int parallelism = 1;
    PolicyState policy;
    int64_t epochs_reported = 0;
    double last_elapsed = 0;
    int64_t created_unix_ms = 0;
    int64_t last_report_unix_ms = 0;
    uint64_t last_report_mono_ms = 0;
    uint64_t order = 0;  // creation order: fair shares go earliest first
    std::deque<HistoryEntry> history;
    bool start_delivered = false;
    bool request_stored = false;  // the request record is in the store
    bool ps_lost = false;         // the PS no longer holds it (400 to /update)
    std::string ps_lost_reason;
    uint64_t version = 0;  // bumped by every decision; guards rollbacks
    std::map<std::string, double> ps_metrics;
    // Its epochs as (parallelism it ran at, seconds), kSpeedPoints of them
    // (trim_points: the latest, but the most measured parallelism gives first),
    // and the speed model fitted to them and to its kind's (the speedup
    // policy's; not stored: after a restart it is learnt again), fitted
    // when its kind was at model_version in SpeedHistory and current until
    // its own epochs change (model_stale) or its kind's change where it has
    // none (SpeedHistory::changed_for).
    std::deque<EpochPoint> epochs;
    std::vector<EpochGroup> epoch_groups;  // group_points(epochs)
    SpeedModel model = SpeedModel::of(0, 1, 0, 0);
    uint64_t model_version = 0;
    bool model_stale = true;
    uint64_t model_fits = 0;  // how many times it was fitted: a view's copy is current while equal
    std::string kind;         // SpeedHistory::kind_of(request), once it is first needed
  };
  struct Queued {
    enum class Op { kCreate, kUpdate } op;
    TrainRequest request;
    TrainTask task;
    Responder responder;
  };

  void handle_train(RequestContext& ctx);
  void handle_job(RequestContext& ctx);
  void handle_finish(RequestContext& ctx);
  void handle_infer(RequestContext& ctx);
  void handle_list(RequestContext& ctx);
  void handle_get(RequestContext& ctx);
  bool refuse_unless_leader(RequestContext& ctx);
  bool refuse_unless_serving(RequestContext& ctx);

  // A /job whose decision waits for the rest of its turn's reports: the
  // speedup policy with a known capacity divides the cluster once for all
  // of them (decide_round).
  struct Reported {
    Job* job = nullptr;  // jobs_'s node: nothing leaves jobs_ within a drain
    double elapsed = 0;
    Responder responder;
    bool created = false;
  };

  void hold_here(const TrainTask& task, Responder& responder, const char* cause);
  void drain();
  // `capacity`: capacity_now() at the start of the turn.
  void create_job(Queued& q, std::optional<long> capacity);
  // Takes the report in; decides it now, or adds it to `round`.
  void update_job(Queued& q, std::optional<long> capacity, std::vector<Reported>& round);
  // The next epoch's parallelism when one job's report is enough to decide
  // it: KubeML's rule, a static job, or the speedup policy with the
  // capacity unknown (each job then decides as if alone).
  Decision decide_alone(Job& job, const PolicyInput& in);
  // The speedup policy's decisions for the reports of one turn, all jobs in
  // view, the cluster divided once (SpeedupRound); each is then recorded.
  void decide_round(std::vector<Reported>& round, long capacity);
  // Brings job j's entry in the speedup policy's view up to date (refitting
  // its model if what it is fitted to changed), `reporting` when j reports
  // now; `view_fits` is the j.model_fits the entry's model is from.
  void refresh_view(SpeedupJob& view, uint64_t& view_fits, Job& j, bool reporting);
  static constexpr uint64_t kNoFits = ~uint64_t{0};  // a view entry whose model is no job's yet
  const std::string& kind_of(Job& job);              // its SpeedHistory kind, worked out once
  // A decision waiting for its store write, answered by the write or by the deadline.
  struct PendingAnswer {
    std::string job_id;
    uint64_t version = 0;
    uint64_t deadline_ms = 0;
    int prev_parallelism = 1;
    PolicyState prev_policy;
    double elapsed = 0;
    Responder responder;
    bool answered = false;
  };
  void record_create(Job& job, const Decision& d, Responder responder);
  void record_update(Job& job, const Decision& d, double elapsed, Responder responder, bool created);
  void apply(Job& job, const Decision& d, double elapsed);
  // Answers a decision: stored (held_cause null), or held at the job's
  // parallelism for `held_cause` (the metric's label), `why` for the log.
  void answer(PendingAnswer& p, const char* held_cause = nullptr, const std::string& why = {});
  // Answers a /job 200, then sends its update (none when `update` is empty)
  // once the answer is handed to the socket, and never if it is not.
  void answer_then_update(Responder& responder, const std::string& job_id, std::optional<JobState> update);
  void arm_answer_deadline();
  void answer_overdue();
  void mark_dirty(const std::string& id);
  void flush_dirty();
  void delete_records(const std::string& id);
  // The job is no longer followed: memory, pending writes, PS calls, records.
  void forget_job(const std::string& id);
  // Asks the PS which jobs it holds, and forgets the started ones it does not
  // hold and that have not reported since (see the definition); then again
  // every ps_check_interval_ms.
  void check_what_the_ps_holds();
  void persist(const Job& job, std::function<void(const StoreStatus&)> done, bool with_request = false);
  void load_jobs(std::map<std::string, std::string> requests);
  void send_start(const Job& job, bool ask_first);
  // The functions the cluster can hold now; nullopt: unlimited, or not known.
  std::optional<long> capacity_now() const { return capacity_ ? capacity_() : std::nullopt; }
  int cap_for(const std::string& job_id) const;
  int cap_for(const std::string& job_id, std::optional<long> capacity) const;  // capacity: capacity_now()
  std::map<std::string, int> caps(std::optional<long> capacity) const;
  void refresh_caps(std::optional<long> capacity) const;
  void jobs_changed() {
    caps_cache_.reset();
    by_arrival_valid_ = false;
  }

  void recompute();
  void poll_metrics();
  std::string encode(const Job& job) const;
  std::optional<Job> decode(std::string_view json);
  void write_job(JsonWriter& w, const Job& job, bool full) const;
  std::string new_job_id();

  Clock& clock_;
  Store& store_;
  HttpRequester& client_;
  Settings settings_;
  std::function<bool()> is_leader_;
  CapacityFn capacity_;
  ThroughputPolicy policy_;
  PsDelivery ps_;
  std::map<std::string, Job> jobs_;
  SpeedHistory speeds_;  // what each kind of job measured (the speedup policy's)
  uint64_t next_order_ = 0;
  std::deque<Queued> queue_;
  ClockTurn drain_turn_;
  bool loaded_ = false;
  uint64_t loads_ = 0;  // how many times the jobs were loaded: an answer about an older load is dropped
  std::unique_ptr<Timer> recompute_timer_;
  std::unique_ptr<Timer> poll_timer_;
  std::unique_ptr<Timer> answer_timer_;
  std::unique_ptr<Timer> flush_timer_;
  std::unique_ptr<Timer> ps_check_timer_;
  bool ps_check_in_flight_ = false;
  std::deque<std::shared_ptr<PendingAnswer>> answers_;  // by deadline
  std::set<std::string> dirty_;                         // jobs whose state in memory is not yet stored
  std::set<std::string> deletes_pending_;               // finished jobs whose records are not yet deleted
  simdjson::dom::parser parser_;
  CounterFamily& decisions_;
  CounterFamily& polls_;
  CounterFamily& held_;
  CounterFamily& lost_;
  CounterFamily& withheld_;
  std::map<std::string, double> running_by_type_;  // kubeml_job_running_total{type}
  // Fair shares change only when jobs come or go, or capacity moves (seen on
  // the recompute tick, or at a decision when it rose): computing them per
  // decision would cost a sort.
  mutable std::optional<std::map<std::string, int>> caps_cache_;
  mutable long caps_capacity_ = 0;  // the capacity caps_cache_ was computed for
  // Every job in arrival order, and the speedup policy's view of each (the
  // same order), kept between decisions while no job comes or goes: sorting
  // the jobs and copying every model into a new view for each /job was a
  // good part of a decision's time with 1,000 jobs and a known capacity.
  std::vector<Job*> by_arrival_;
  std::vector<SpeedupJob> speedup_view_;
  std::vector<uint64_t> view_fits_;  // speedup_view_[k].model is from by_arrival_[k]->model_fits == this
  bool by_arrival_valid_ = false;
};

}  // namespace uvsched
