#include "policy/pod_task.h"

#include <gtest/gtest.h>

#include <vector>

#include "policy/delay_queue.h"

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
  // Mesos 1.x's states: killing and unreachable change nothing; gone by the
  // operator, or unknown to the agent asked, ends the task.
  run({},
      {{"TASK_RUNNING", TaskAction::kMarkRunning, TaskState::kRunning},
       {"TASK_UNREACHABLE", TaskAction::kNone, TaskState::kRunning},
       {"TASK_RUNNING", TaskAction::kNone, TaskState::kRunning},
       {"TASK_GONE_BY_OPERATOR", TaskAction::kRemoveFailed, TaskState::kGone}},
      "unreachable, then gone by operator");
  run(deleted,
      {{"TASK_RUNNING", TaskAction::kMarkRunning, TaskState::kRunning},
       {"TASK_KILLING", TaskAction::kNone, TaskState::kRunning},
       {"TASK_KILLED", TaskAction::kRemoveDeleted, TaskState::kGone}},
      "killing, then killed");
  run({}, {{"TASK_UNKNOWN", TaskAction::kRemoveFailed, TaskState::kGone}}, "unknown to its agent");
  for (const char* s : {"TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING", "TASK_FINISHED", "TASK_FAILED",
                        "TASK_KILLED", "TASK_ERROR", "TASK_LOST", "TASK_DROPPED", "TASK_UNREACHABLE", "TASK_GONE",
                        "TASK_GONE_BY_OPERATOR", "TASK_UNKNOWN"}) {
    EXPECT_TRUE(is_mesos_task_state(s)) << s;
    PodTask t;
    t.state = TaskState::kRunning;
    EXPECT_NE(apply_status(t, s).action, TaskAction::kError) << s << " is one of Mesos' states";
  }
  EXPECT_FALSE(is_mesos_task_state("TASK_BOGUS"));
  EXPECT_FALSE(is_mesos_task_state("RUNNING"));
}

TEST(PodTask, OnlyTheTasksOwnFailuresAreCrashes) {
  for (const char* s : {"TASK_FAILED", "TASK_ERROR"}) EXPECT_TRUE(is_crash(s)) << s;
  for (const char* s :
       {"TASK_STAGING", "TASK_STARTING", "TASK_RUNNING", "TASK_KILLING", "TASK_FINISHED", "TASK_KILLED", "TASK_LOST",
        "TASK_DROPPED", "TASK_UNREACHABLE", "TASK_GONE", "TASK_GONE_BY_OPERATOR", "TASK_UNKNOWN", "TASK_BOGUS"}) {
    EXPECT_FALSE(is_crash(s)) << s;
  }
}

TEST(PodBackoff, ACrashLoopBacksOffAsAKubeletDoes) {
  PodBackoff b(kCrashLoopBackoff);
  uint64_t now = 0;
  std::vector<uint64_t> delays;
  for (int i = 0; i < 7; ++i) delays.push_back(b.next_delay("p", now += 1'000));
  EXPECT_EQ(delays, (std::vector<uint64_t>{10'000, 20'000, 40'000, 80'000, 160'000, 300'000, 300'000}));
  EXPECT_EQ(b.next_delay("p", now + 600'000), 300'000u) << "ten minutes to the millisecond is not yet stable";
  EXPECT_EQ(b.next_delay("p", now + 1'200'001), 10'000u) << "ten minutes without a crash start it over";
}

}  // namespace
}  // namespace uvsched
