#include "policy/pod_task.h"

namespace uvsched {

bool is_mesos_task_state(std::string_view s) {
  return s == "TASK_STAGING" || s == "TASK_STARTING" || s == "TASK_RUNNING" || s == "TASK_KILLING" ||
         s == "TASK_UNREACHABLE" || s == "TASK_UNKNOWN" || is_terminal_mesos_state(s);
}

bool is_terminal_mesos_state(std::string_view s) {
  return s == "TASK_FINISHED" || s == "TASK_FAILED" || s == "TASK_KILLED" || s == "TASK_LOST" || s == "TASK_ERROR" ||
         s == "TASK_DROPPED" || s == "TASK_GONE" || s == "TASK_GONE_BY_OPERATOR";
}

bool ends_task(std::string_view s) { return s == "TASK_UNKNOWN" || is_terminal_mesos_state(s); }

bool is_crash(std::string_view s) { return s == "TASK_FAILED" || s == "TASK_ERROR"; }

Transition apply_status(PodTask& task, std::string_view s) {
  if (task.state == TaskState::kGone) return {TaskAction::kNone, "task already gone"};
  if (s == "TASK_STAGING") return {TaskAction::kNone, ""};
  // Being killed: TASK_KILLED follows. Unreachable: its agent is cut off,
  // and Mesos says the task may come back; it is lost with its agent if not.
  if (s == "TASK_KILLING" || s == "TASK_UNREACHABLE") return {TaskAction::kNone, std::string(s)};
  if (s == "TASK_STARTING") {
    if (task.bound) return {TaskAction::kNone, ""};
    task.bound = true;
    return {TaskAction::kBind, ""};
  }
  if (s == "TASK_RUNNING") {
    if (task.state == TaskState::kFinished) return {TaskAction::kError, "RUNNING after FINISHED"};
    task.bound = true;
    bool changed = task.state != TaskState::kRunning;
    task.state = TaskState::kRunning;
    return {changed ? TaskAction::kMarkRunning : TaskAction::kNone, ""};
  }
  if (s == "TASK_FINISHED") {
    if (task.state == TaskState::kPending) {
      // Upstream panicked here. A task cannot finish before it ran.
      return {TaskAction::kError, "FINISHED on a Pending task"};
    }
    task.state = TaskState::kFinished;
    return {TaskAction::kMarkSucceeded, ""};
  }
  if (ends_task(s)) {
    if (task.state == TaskState::kFinished) return {TaskAction::kNone, "already finished"};
    task.state = TaskState::kGone;
    return {task.deleted ? TaskAction::kRemoveDeleted : TaskAction::kRemoveFailed, std::string(s)};
  }
  return {TaskAction::kError, "unknown task state " + std::string(s)};
}

}  // namespace uvsched
