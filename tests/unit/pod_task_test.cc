#include "policy/pod_task.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(PodTask, MesosStatesMoveTheTask) {
  struct Step {
    const char* status;
    TaskAction action;
    TaskState state;
  };
  auto run = [](PodTask t, std::vector<Step> steps, const char* name) {
    for (const auto& s : steps) {
      auto tr = apply_status(t, s.status);
      EXPECT_EQ(tr.action, s.action) << name << " " << s.status;
      EXPECT_EQ(t.state, s.state) << name << " " << s.status;
    }
  };
  run({},
      {{"TASK_STAGING", TaskAction::kNone, TaskState::kPending},
       {"TASK_STARTING", TaskAction::kBind, TaskState::kPending},
       {"TASK_STARTING", TaskAction::kNone, TaskState::kPending},
       {"TASK_RUNNING", TaskAction::kMarkRunning, TaskState::kRunning},
       {"TASK_RUNNING", TaskAction::kNone, TaskState::kRunning},
       {"TASK_FINISHED", TaskAction::kMarkSucceeded, TaskState::kFinished},
       {"TASK_LOST", TaskAction::kNone, TaskState::kFinished}},
      "happy path");
  run({}, {{"TASK_FINISHED", TaskAction::kError, TaskState::kPending}}, "finished before running");
  run({},
      {{"TASK_RUNNING", TaskAction::kMarkRunning, TaskState::kRunning},
       {"TASK_FAILED", TaskAction::kRemoveFailed, TaskState::kGone},
       {"TASK_RUNNING", TaskAction::kNone, TaskState::kGone}},
      "failure");
  run({}, {{"TASK_LOST", TaskAction::kRemoveFailed, TaskState::kGone}}, "lost while pending");
  PodTask deleted;
  deleted.deleted = true;
  run(deleted,
      {{"TASK_RUNNING", TaskAction::kMarkRunning, TaskState::kRunning},
       {"TASK_KILLED", TaskAction::kRemoveDeleted, TaskState::kGone}},
      "killed after delete");
  run({}, {{"TASK_BOGUS", TaskAction::kError, TaskState::kPending}}, "nonsense");
}

}  // namespace
}  // namespace uvsched
