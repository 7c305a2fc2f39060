// A launched pod's task, from the agents' statuses to its end: the pod
// scheduler's second half (PodScheduler queues and places pods; this follows
// what it launched). Statuses move the pod's phase and containers; a task not
// followed is adopted from its pod's annotations or killed; an ended task's
// pod fails, is done, or is placed again (its restart policy, after a
// crash-loop back-off); deletes, new images, active deadlines and the taint
// manager's evictions kill tasks; a lost agent's tasks are lost; the agents
// are asked about the tasks (TaskReconciliation).
//
// It shares the task registry with the placement half, which adds the tasks
// it launches; a pod placed again goes back through the store (its write as
// Pending comes back through the placement half's watch).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "handlers/agents/agent_hub.h"
#include "handlers/json_value.h"
#include "handlers/pods/pod_alarms.h"
#include "handlers/pods/pod_writer.h"
#include "handlers/pods/scheduling_log.h"
#include "handlers/pods/task_reconciliation.h"
#include "policy/delay_queue.h"
#include "policy/pod_task.h"
#include "policy/pod_task_registry.h"
#include "reactor/clock.h"
#include "reactor/http_message.h"
#include "storage/store.h"

namespace uvsched {

// A task known again from its pod's annotations, with the pod's labels
// (the inter-pod filters count it by them).
struct RecoveredTask {
  PodTask task;
  Labels labels;
};

class PodTaskLifecycle {
 public:
  // What it asks of the placement half.
  struct Placement {
    // Whether `pod` waits to be placed (a write to it then comes back
    // through the watch as the queue's own: PodWriter::Update::own).
    std::function<bool(const std::string& pod)> waiting;
    // A waiting pod failed where it waited (its active deadline passed): it leaves the queue.
    std::function<void(const std::string& pod)> failed_waiting;
    // The task a stored pod's annotations name, known again (a status from a task not followed).
    std::function<std::optional<RecoveredTask>(const KeyValue& kv)> recover_task;
    // The pod's task moved on (its gang's counts are written again).
    std::function<void(const std::string& pod)> task_moved;
  };

  PodTaskLifecycle(Store& store, Clock& clock, AgentHub& hub, PodWriter& writer, PodTaskRegistry& tasks,
                   SchedulingLog& recent, uint64_t reconcile_interval_ms, Placement placement);
  PodTaskLifecycle(const PodTaskLifecycle&) = delete;
  PodTaskLifecycle& operator=(const PodTaskLifecycle&) = delete;

  void start();  // asks the agents about the tasks from now on
  void stop();   // and its alarms stop
  // Forgets the restarts' back-offs, the alarms and the questions out: a
  // new leader starts from what it loads (crashed tasks start again at once,
  // as a restarted kubelet starts them).
  void clear();

  // The agents' events (AgentEvents, forwarded by the scheduler).
  void status_update(const std::string& agent, const TaskStatus& status);
  std::optional<std::string> refuse_status(const std::string& agent, const TaskStatus& status) const;
  void agent_registered(const std::string& agent);  // its tasks are asked about now
  void agent_lost(const std::string& agent);

  // The registry asks before deleting a pod: true when the pod has a live
  // task, in which case a KILL goes out (with `grace`, else the pod's own)
  // and `done` is given the answer (PodScheduler::handle_delete).
  bool handle_delete(const std::string& ns, const std::string& name, std::optional<int64_t> grace,
                     std::function<void(HttpResponse&&)> done);
  // The pod's container images changed: its task is killed and placed again.
  void images_changed(const std::string& ns, const std::string& name);
  // When the pod's active deadline passes moved: a running task is killed then.
  void deadline_changed(const std::string& ns, const std::string& name, std::optional<int64_t> deadline_unix_ms);
  // The agent's taints changed: the taint manager weighs its pods.
  void taints_changed(const std::string& agent);

  // What the placement half asks of it.
  void kill(const std::string& pod, const PodTask& task);
  // A task that ends without a status (deleted before it ran, its agent gone before the launch).
  void end(const std::string& pod, PodTask& task, const Transition& t);
  // Alarms for a placed, recovered or waiting pod: its active deadline, and
  // how long it may stay on its agent's NoExecute taints.
  void follow_deadline(const std::string& pod, int64_t deadline_unix_ms) { deadlines_.at_unix(pod, deadline_unix_ms); }
  void follow_stay(const std::string& pod, uint64_t stay_ms) { evictions_.after(pod, stay_ms); }
  // The pod is gone or has ended: its alarms and its restarts' back-off go.
  void forget(const std::string& pod);
  // When a pod whose task crashed may be placed again (monotonic), if later than `now`.
  std::optional<uint64_t> held_for_restart(const std::string& pod, uint64_t now);
  void gc(uint64_t now) { crash_backoff_.gc(now); }

 private:
  void adopt_or_kill(const std::string& agent, const TaskStatus& status);
  // `pod` by value: the task (and its key in the registry) may go here.
  void apply(std::string pod, PodTask& task, const Transition& t, const TaskStatus* status);
  // Why a pod's task ended, for what follows: its restart policy decides for
  // a lost or crashed task, a crash waits out a back-off first; a task
  // replaced for new images runs again whatever the policy.
  enum class TaskEnd { kLost, kCrashed, kReplaced };
  void requeue_or_fail(const std::string& pod, const std::string& why, TaskEnd end);
  // A pod's activeDeadlineSeconds passed: its task is killed (the pod fails
  // when it ends), or a pod waiting to start again fails where it waits.
  void deadline_passed(const std::string& pod);
  // The taint manager (NoExecute taints): deletes one whose toleration ended.
  void toleration_ended(const std::string& pod);
  // A guarded update of the pod at store key `key` (kept_pod_update).
  void update_pod(const std::string& key, std::function<bool(JsonValue&)> mutate, PodWriter::Done done = nullptr);
  void update_pod(const std::string& key, PodWriter::TextEdit edit, std::function<bool(JsonValue&)> mutate,
                  PodWriter::Done done);

  Store& store_;
  Clock& clock_;
  AgentHub& hub_;
  PodWriter& writer_;
  PodTaskRegistry& tasks_;
  SchedulingLog& recent_;
  Placement placement_;
  PodBackoff crash_backoff_{kCrashLoopBackoff};
  std::map<std::string, uint64_t> restart_due_;  // ns/name -> when its crashed task may start again
  PodAlarms deadlines_;                          // the started pods with an activeDeadlineSeconds
  PodAlarms evictions_;                          // the pods tolerating a NoExecute taint for a while
  TaskReconciliation reconciliation_;            // asks the agents about the tasks
};

}  // namespace uvsched
