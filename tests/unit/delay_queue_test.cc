#include "policy/delay_queue.h"

#include <gtest/gtest.h>

#include "policy/pod_task.h"

namespace uvsched {
namespace {

TEST(PodBackoff, OneSecondDoublingToSixtyThenForgotten) {
  PodBackoff b;
  std::vector<uint64_t> delays;
  uint64_t now = 0;
  for (int i = 0; i < 9; ++i) {
    delays.push_back(b.next_delay("p", now));
    now += delays.back();
  }
  EXPECT_EQ(delays, (std::vector<uint64_t>{1'000, 2'000, 4'000, 8'000, 16'000, 32'000, 60'000, 60'000, 60'000}));
  EXPECT_EQ(b.next_delay("other", now), 1'000u);  // per pod
  EXPECT_EQ(b.next_delay("p", now + 200'000), 1'000u);  // idle long enough: starts over
  b.gc(now + 1'000'000);
  EXPECT_EQ(b.size(), 0u);
}

TEST(DelayQueue, PopsInDueOrderKeepingOrReplacingPlaces) {
  DelayQueue q;
  q.add("b", 200);
  q.add("a", 100);
  q.add("c", 200);
  q.add("a", 500);  // KeepExisting: an updated pod keeps its place
  EXPECT_EQ(q.next_due(), 100u);
  EXPECT_TRUE(q.pop_due(99).empty());
  EXPECT_EQ(q.pop_due(100), std::vector<std::string>{"a"});
  q.add("b", 1'000, DelayQueue::Mode::kReplaceExisting);
  EXPECT_EQ(q.pop_due(300), std::vector<std::string>{"c"});
  EXPECT_TRUE(q.breakout("b", 400));  // an offer arrived that may fit
  EXPECT_FALSE(q.breakout("nobody", 400));
  EXPECT_EQ(q.pop_due(400), std::vector<std::string>{"b"});
  q.add("d", 10);
  EXPECT_TRUE(q.remove("d"));
  EXPECT_EQ(q.size(), 0u);
  EXPECT_FALSE(q.next_due());
}

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
  run({}, {{"TASK_STAGING", TaskAction::kNone, TaskState::kPending},
           {"TASK_STARTING", TaskAction::kBind, TaskState::kPending},
           {"TASK_STARTING", TaskAction::kNone, TaskState::kPending},
           {"TASK_RUNNING", TaskAction::kMarkRunning, TaskState::kRunning},
           {"TASK_RUNNING", TaskAction::kNone, TaskState::kRunning},
           {"TASK_FINISHED", TaskAction::kMarkSucceeded, TaskState::kFinished},
           {"TASK_LOST", TaskAction::kNone, TaskState::kFinished}},
      "happy path");
  run({}, {{"TASK_FINISHED", TaskAction::kError, TaskState::kPending}}, "finished before running");
  run({}, {{"TASK_RUNNING", TaskAction::kMarkRunning, TaskState::kRunning},
           {"TASK_FAILED", TaskAction::kRemoveFailed, TaskState::kGone},
           {"TASK_RUNNING", TaskAction::kNone, TaskState::kGone}},
      "failure");
  run({}, {{"TASK_LOST", TaskAction::kRemoveFailed, TaskState::kGone}}, "lost while pending");
  PodTask deleted;
  deleted.deleted = true;
  run(deleted, {{"TASK_RUNNING", TaskAction::kMarkRunning, TaskState::kRunning},
                {"TASK_KILLED", TaskAction::kRemoveDeleted, TaskState::kGone}},
      "killed after delete");
  run({}, {{"TASK_BOGUS", TaskAction::kError, TaskState::kPending}}, "nonsense");
}

}  // namespace
}  // namespace uvsched

#include "policy/reconciler.h"

namespace uvsched {
namespace {

TEST(Reconciler, ExplicitReAsksWithBackoffUntilEveryTaskReported) {
  Reconciler r({});
  r.request_explicit({"a", "b"}, 0);
  EXPECT_EQ(r.due(0).tasks, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r.due(999).empty());
  r.reported("a");
  EXPECT_EQ(r.due(1'000).tasks, (std::vector<std::string>{"b"}));
  EXPECT_TRUE(r.due(2'999).empty());  // the next ask is 2 s later
  EXPECT_EQ(r.due(3'000).tasks, (std::vector<std::string>{"b"}));
  uint64_t now = 3'000, last_gap = 0;
  for (int i = 0; i < 12; ++i) {
    uint64_t next = *r.next_deadline();
    last_gap = next - now;
    now = next;
    r.due(now);
  }
  EXPECT_EQ(last_gap, 120'000u);  // capped
  r.reported("b");
  EXPECT_FALSE(r.next_deadline());
}

TEST(Reconciler, ANewRequestCancelsTheOneInProgress) {
  Reconciler r({});
  r.request_explicit({"old"}, 0);
  r.due(0);
  r.request_explicit({"new"}, 500);
  EXPECT_EQ(r.due(500).tasks, (std::vector<std::string>{"new"}));
  EXPECT_EQ(r.outstanding(), 1u);
}

TEST(Reconciler, ImplicitFifteenSecondsAfterStartThenEveryInterval) {
  Reconciler r({.implicit_interval_ms = 300'000});
  r.start(1'000);
  EXPECT_FALSE(r.due(15'999).implicit);
  EXPECT_TRUE(r.due(16'000).implicit);
  EXPECT_FALSE(r.due(300'000).implicit);
  EXPECT_TRUE(r.due(316'000).implicit);
  Reconciler once({.implicit_interval_ms = 0});
  once.start(0);
  EXPECT_TRUE(once.due(15'000).implicit);
  EXPECT_FALSE(once.next_deadline());
}

}  // namespace
}  // namespace uvsched
