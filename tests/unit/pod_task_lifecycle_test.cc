// A launched pod's task to its end (PodTaskLifecycle) on its own, with the
// placement half faked by what it is asked: a FakeStore whose answers the
// test runs, a ManualClock, and an agent whose stream records. Statuses move
// the pod's phase; an ended task's pod is done, failed or pending again (its
// restart policy, a crash held back); a status from a task not followed is
// adopted when placement recovers it and killed when its pod is gone; a
// waiting pod past its deadline is handed back to placement as failed.
#include "handlers/pods/pod_task_lifecycle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "handlers/ops/metrics_registry.h"
#include "handlers/pods/pod_registry.h"
#include "reactor/log.h"
#include "reactor/manual_clock.h"
#include "tests/support/fake_store.h"
#include "tests/support/recording_channel.h"

namespace uvsched {
namespace {

using test::FakeStore;
using test::RecordingChannel;

std::string lifecycle_pod_key(const std::string& name) {
  return std::string(PodRegistry::kPodPrefix) + "default/" + name;
}

std::string pod_bound_to(const std::string& name, const std::string& task, const std::string& restart,
                         const std::string& extra_spec = "") {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name +
         R"(","namespace":"default","annotations":{"uvsched.io/bindingHost":"edge-1","uvsched.io/taskId":")" + task +
         R"("}},"spec":{"nodeName":"edge-1","restartPolicy":")" + restart +
         R"(","containers":[{"name":"c","image":"i"}])" + extra_spec + R"(},"status":{"phase":"Pending"}})";
}

class PodTaskLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_configure(LogLevel::kOff, LogFormat::kText);
    edge_ = std::make_shared<RecordingChannel>();
    hub_.subscribe_on("edge-1", {}, Resources{4, 8192, {}}, "", edge_);
    settle();
  }
  void settle() {
    for (int i = 0; i < 100 && (store_.run() > 0 || store_.queued() > 0); ++i) clock_.advance(0);
  }
  // A task the placement half launched for pod `name` (stored bound to it), running.
  std::string launched(const std::string& name, const std::string& restart, const std::string& extra_spec = "") {
    PodTask t;
    t.serial = ++serial_;
    t.agent = tasks_.intern_agent("edge-1");
    t.launched = t.bound = true;
    std::string id = PodTaskRegistry::id_of("default/" + name, t);
    store_.put(lifecycle_pod_key(name), pod_bound_to(name, id, restart, extra_spec), 0, [](WriteResult&&) {});
    tasks_.add("default/" + name, t);
    settle();
    return id;
  }
  std::string pod(const std::string& name) { return store_.value(lifecycle_pod_key(name)).value_or("<absent>"); }

  ManualClock clock_;
  FakeStore store_;
  PodWriter writer_{store_};
  MetricsRegistry metrics_;
  AgentHub hub_{clock_, metrics_, AgentHub::Settings{}};
  std::shared_ptr<RecordingChannel> edge_;
  PodTaskRegistry tasks_;
  SchedulingLog recent_;
  uint64_t serial_ = 100;
  // The placement half, as the lifecycle sees it.
  std::vector<std::string> waiting_, failed_waiting_, moved_;
  std::optional<RecoveredTask> recovered_;
  PodTaskLifecycle lifecycle_{store_,
                              clock_,
                              hub_,
                              writer_,
                              tasks_,
                              recent_,
                              0,
                              {.waiting =
                                   [this](const std::string& pod) {
                                     return std::find(waiting_.begin(), waiting_.end(), pod) != waiting_.end();
                                   },
                               .failed_waiting = [this](const std::string& pod) { failed_waiting_.push_back(pod); },
                               .recover_task = [this](const KeyValue&) { return recovered_; },
                               .task_moved = [this](const std::string& pod) { moved_.push_back(pod); }}};
};

TEST_F(PodTaskLifecycleTest, StatusesMoveThePodToItsEnd) {
  std::string id = launched("web", "Always");
  lifecycle_.status_update("edge-1", {id, "TASK_RUNNING", ""});
  settle();
  EXPECT_NE(pod("web").find(R"("phase":"Running")"), std::string::npos) << pod("web");
  lifecycle_.status_update("edge-1", {id, "TASK_FINISHED", ""});
  settle();
  EXPECT_NE(pod("web").find(R"("phase":"Succeeded")"), std::string::npos) << pod("web");
  EXPECT_FALSE(tasks_.has_pod("default/web"));
  EXPECT_EQ(moved_, (std::vector<std::string>{"default/web", "default/web"}));
  EXPECT_EQ(lifecycle_.refuse_status("edge-2", {id, "TASK_RUNNING", ""}), std::nullopt) << "no longer followed";
}

TEST_F(PodTaskLifecycleTest, AnotherAgentsReportOnATaskIsRefused) {
  std::string id = launched("web", "Always");
  EXPECT_EQ(lifecycle_.refuse_status("edge-1", {id, "TASK_RUNNING", ""}), std::nullopt);
  EXPECT_NE(lifecycle_.refuse_status("edge-2", {id, "TASK_RUNNING", ""}), std::nullopt);
}

TEST_F(PodTaskLifecycleTest, ACrashedTaskIsPlacedAgainAfterItsBackOffOrFailsItsPod) {
  std::string again = launched("again", "Always");
  std::string never = launched("never", "Never");
  lifecycle_.status_update("edge-1", {again, "TASK_FAILED", ""});
  lifecycle_.status_update("edge-1", {never, "TASK_FAILED", ""});
  settle();
  EXPECT_NE(pod("again").find(R"("phase":"Pending")"), std::string::npos) << pod("again");
  EXPECT_EQ(pod("again").find("uvsched.io/taskId"), std::string::npos) << "unbound: " << pod("again");
  EXPECT_NE(pod("again").find("CrashLoopBackOff"), std::string::npos) << pod("again");
  uint64_t now = clock_.now_ms();
  EXPECT_EQ(lifecycle_.held_for_restart("default/again", now), now + 10'000);
  EXPECT_EQ(lifecycle_.held_for_restart("default/again", now + 10'000), std::nullopt);
  EXPECT_NE(pod("never").find(R"("phase":"Failed")"), std::string::npos) << pod("never");
  EXPECT_EQ(lifecycle_.held_for_restart("default/never", now), std::nullopt);
}

TEST_F(PodTaskLifecycleTest, AStatusFromATaskNotFollowedIsAdoptedOrKilled) {
  PodTask t;
  t.serial = 7;
  t.agent = tasks_.intern_agent("edge-1");
  t.launched = t.bound = true;
  std::string id = PodTaskRegistry::id_of("default/orphan", t);
  store_.put(lifecycle_pod_key("orphan"), pod_bound_to("orphan", id, "Always"), 0, [](WriteResult&&) {});
  settle();
  recovered_ = RecoveredTask{t, {}};  // placement knows it again from the pod's annotations
  lifecycle_.status_update("edge-1", {id, "TASK_RUNNING", ""});
  settle();
  EXPECT_TRUE(tasks_.has_pod("default/orphan"));
  EXPECT_NE(pod("orphan").find(R"("phase":"Running")"), std::string::npos) << pod("orphan");
  EXPECT_TRUE(edge_->events("KILL").empty());
  // A task whose pod is gone is killed.
  PodTask gone;
  gone.serial = 8;
  std::string stray = PodTaskRegistry::id_of("default/gone", gone);
  lifecycle_.status_update("edge-1", {stray, "TASK_RUNNING", ""});
  settle();
  ASSERT_EQ(edge_->events("KILL").size(), 1u);
  EXPECT_NE(edge_->events("KILL")[0].find(stray), std::string::npos) << edge_->events("KILL")[0];
}

TEST_F(PodTaskLifecycleTest, AWaitingPodPastItsDeadlineIsHandedBackAsFailed) {
  store_.put(lifecycle_pod_key("late"),
             R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"late","namespace":"default"},)"
             R"("spec":{"activeDeadlineSeconds":5,"containers":[{"name":"c","image":"i"}]},)"
             R"("status":{"phase":"Pending","startTime":"2026-01-01T00:00:00Z"}})",
             0, [](WriteResult&&) {});
  settle();
  waiting_.push_back("default/late");
  lifecycle_.follow_deadline("default/late", clock_.unix_ms() + 5'000);
  clock_.advance(4'999);
  settle();
  EXPECT_TRUE(failed_waiting_.empty());
  clock_.advance(1);
  settle();
  EXPECT_EQ(failed_waiting_, std::vector<std::string>{"default/late"});
  EXPECT_NE(pod("late").find(R"("phase":"Failed")"), std::string::npos) << pod("late");
  EXPECT_NE(pod("late").find("DeadlineExceeded"), std::string::npos) << pod("late");
}

}  // namespace
}  // namespace uvsched
