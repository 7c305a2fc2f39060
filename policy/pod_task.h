// A pod's task on an agent and how Mesos task states move it (the seed's
// podtask.T): Pending -> Running -> Finished, with the flags Launched, Bound
// and Deleted. Pure: a status in, the new state and what to do out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace uvsched {

enum class TaskState : uint8_t { kPending, kRunning, kFinished, kGone };

// Kept small: a scheduler follows one per pod, 100k of them. Its pod's key
// and its id are not stored here: the registry holds it by pod key, and the
// id is made from that key and `serial` (PodTaskRegistry::id_of).
struct PodTask {
  uint64_t serial = 0;  // the id's 48-bit random part
  uint32_t agent = 0;   // the agent's hostname, interned (PodTaskRegistry::agent_name)
  TaskState state = TaskState::kPending;
  bool launched = false;
  bool bound = false;
  bool deleted = false;   // the pod was deleted: a KILL is on its way
  bool evicted = false;   // preempted: its KILL went, and it is no one's victim again
  bool grouped = false;   // a member of a pod group: never preempted alone (a gang is placed, and kept, whole)
  bool restart = false;   // its pod's images changed: killed, and the pod placed again whatever its restart policy
  bool expired = false;   // past its pod's activeDeadlineSeconds: killed, and the pod fails whatever its policy
  int32_t priority = 0;   // the pod's spec.priority: who may preempt it
  uint32_t grace_s = 30;  // how long it gets to stop when killed (its KILL's grace period)
  float cpus = 0;         // what it holds on its agent, for preemption to weigh
  float mem_mib = 0;
  uint32_t labels = 0;  // its pod's labels, interned (PodTaskRegistry::labels_of; set by add)
};

// What the scheduler does after a status update.
enum class TaskAction {
  kNone,
  kBind,           // TASK_STARTING: the pod is bound to the agent
  kMarkRunning,    // pod phase Running
  kMarkSucceeded,  // pod phase Succeeded
  kRemoveFailed,   // the task is gone: pod Failed, or re-queued by its restart policy
  kRemoveDeleted,  // the task is gone after a delete: the pod object goes too
  kError,          // a status that makes no sense here; logged, never a crash
};

struct Transition {
  TaskAction action = TaskAction::kNone;
  std::string note;  // why, for the log
};

// Applies a Mesos TaskState name ("TASK_RUNNING", ...) to `task`.
Transition apply_status(PodTask& task, std::string_view mesos_state);

// One of Mesos' TaskState names (mesos.proto), the 1.x ones included.
bool is_mesos_task_state(std::string_view s);
// Mesos' terminal states: the task runs no more.
bool is_terminal_mesos_state(std::string_view s);
// The task runs no more, or its agent does not know it (TASK_UNKNOWN, which
// Mesos does not call terminal: a master that forgot a task may learn of it
// again; an agent that does not know a task runs none).
bool ends_task(std::string_view s);
// The task's own doing (it failed, or could not start): a restart waits out
// a crash-loop back-off, as a kubelet's does. A task lost with its agent,
// dropped or killed did nothing wrong and is placed again at once.
bool is_crash(std::string_view s);

}  // namespace uvsched
