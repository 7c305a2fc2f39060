// Task reconciliation on a ManualClock with agents on recording channels:
// agents that register in one turn are asked, each about its own tasks only,
// in one pass; a task not answered is asked about again (1 s, then 2 s), one
// answered is not; the implicit pass asks every connected agent for all.
#include "handlers/pods/task_reconciliation.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "handlers/ops/metrics_registry.h"
#include "reactor/log.h"
#include "reactor/manual_clock.h"
#include "tests/support/recording_channel.h"

namespace uvsched {
namespace {

using test::RecordingChannel;

constexpr uint64_t kImplicitMs = 60'000;

class TaskReconciliationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_configure(LogLevel::kOff, LogFormat::kText);
    AgentHub::Settings s;
    s.heartbeat_ms = 1'000'000;  // out of the way
    hub_ = std::make_unique<AgentHub>(clock_, metrics_, s);
    for (const char* host : {"edge-1", "edge-2"}) {
      auto ch = std::make_shared<RecordingChannel>();
      hub_->subscribe_on(host, {}, Resources{4, 4096, {}}, "", ch);
      channels_[host] = ch;
    }
    add_task("default/a", "edge-1");
    add_task("default/b", "edge-2");
    add_task("default/c", "edge-1");
    rec_ = std::make_unique<TaskReconciliation>(clock_, *hub_, tasks_, kImplicitMs);
    rec_->start();
  }
  void TearDown() override {
    rec_->stop();
    hub_->stop();
  }
  void add_task(const std::string& pod, const std::string& agent, bool launched = true) {
    PodTask t;
    t.serial = ++serial_;
    t.agent = tasks_.intern_agent(agent);
    t.launched = launched;
    tasks_.add(pod, t);
    ids_[pod] = PodTaskRegistry::id_of(pod, *tasks_.by_pod(pod));
  }
  std::vector<std::string> asks(const std::string& host) { return channels_[host]->events("RECONCILE"); }
  bool names(const std::string& line, const std::string& pod) { return line.find(ids_[pod]) != std::string::npos; }

  ManualClock clock_;
  MetricsRegistry metrics_;
  std::unique_ptr<AgentHub> hub_;
  std::map<std::string, std::shared_ptr<RecordingChannel>> channels_;
  PodTaskRegistry tasks_;
  std::map<std::string, std::string> ids_;
  uint64_t serial_ = 0;
  std::unique_ptr<TaskReconciliation> rec_;
};

TEST_F(TaskReconciliationTest, AgentsRegisteredInOneTurnAreAskedAboutTheirOwnTasksOnly) {
  rec_->agent_registered("edge-1");
  rec_->agent_registered("edge-2");
  EXPECT_TRUE(asks("edge-1").empty()) << "asked on the coming turn, not inside the registration";
  clock_.advance(0);
  ASSERT_EQ(asks("edge-1").size(), 1u);
  ASSERT_EQ(asks("edge-2").size(), 1u);
  EXPECT_TRUE(names(asks("edge-1")[0], "default/a") && names(asks("edge-1")[0], "default/c")) << asks("edge-1")[0];
  EXPECT_FALSE(names(asks("edge-1")[0], "default/b")) << "another agent's task";
  EXPECT_TRUE(names(asks("edge-2")[0], "default/b"));
  EXPECT_FALSE(names(asks("edge-2")[0], "default/a"));
}

// A task whose LAUNCH has not gone yet (its binding is being written) is
// not asked about: its LAUNCH follows the ask on the agent's stream, and the
// agent would answer TASK_LOST for a task it does not know yet.
TEST_F(TaskReconciliationTest, ATaskNotLaunchedYetIsNotAskedAbout) {
  add_task("default/binding", "edge-1", /*launched=*/false);
  rec_->agent_registered("edge-1");
  clock_.advance(0);
  ASSERT_EQ(asks("edge-1").size(), 1u);
  EXPECT_TRUE(names(asks("edge-1")[0], "default/a")) << asks("edge-1")[0];
  EXPECT_FALSE(names(asks("edge-1")[0], "default/binding")) << asks("edge-1")[0];
  clock_.advance(1'000);  // asked again, as unanswered: still without it
  ASSERT_EQ(asks("edge-1").size(), 2u);
  EXPECT_FALSE(names(asks("edge-1")[1], "default/binding")) << asks("edge-1")[1];
}

TEST_F(TaskReconciliationTest, AnUnansweredTaskIsAskedAgainWithBackoffAndAnAnsweredOneIsNot) {
  rec_->agent_registered("edge-1");
  rec_->agent_registered("edge-2");
  clock_.advance(0);
  rec_->reported(ids_["default/a"]);
  rec_->reported(ids_["default/c"]);  // edge-1 answered; edge-2 did not
  clock_.advance(999);
  EXPECT_EQ(asks("edge-2").size(), 1u) << "not before a second";
  clock_.advance(1);
  ASSERT_EQ(asks("edge-2").size(), 2u);
  EXPECT_TRUE(names(asks("edge-2")[1], "default/b"));
  EXPECT_EQ(asks("edge-1").size(), 1u) << "its tasks answered: not asked again";
  clock_.advance(1999);
  EXPECT_EQ(asks("edge-2").size(), 2u) << "the back-off doubled";
  clock_.advance(1);
  EXPECT_EQ(asks("edge-2").size(), 3u);
}

TEST_F(TaskReconciliationTest, TheImplicitPassAsksEveryConnectedAgentForAll) {
  channels_["edge-2"]->hang_up();
  clock_.advance(15'000 - 1);
  EXPECT_TRUE(asks("edge-1").empty());
  clock_.advance(1);  // 15 s after start
  ASSERT_EQ(asks("edge-1"), std::vector<std::string>{R"({"type":"RECONCILE","tasks":[]})"});
  EXPECT_TRUE(asks("edge-2").empty()) << "not connected";
  clock_.advance(kImplicitMs);
  EXPECT_EQ(asks("edge-1").size(), 2u);
}

}  // namespace
}  // namespace uvsched
