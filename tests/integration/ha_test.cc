// Several daemons on one etcd, as an operator runs them: the leader dies or
// freezes, a standby takes over with the whole state (every task the old
// leader launched, even those launched after the standby started), kills
// none of them, and acts: a pod deleted after the takeover gets its KILL, a
// new pod is placed. A frozen leader that resumes steps down.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/etcd_process.h"
#include "tests/support/raw_http.h"
#include "tests/support/scripted_agent.h"

namespace uvsched::test {
namespace {

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return done();
}

int readyz(uint16_t port) {
  auto r = http_request(port, "GET", "/readyz");
  return r ? r->status : 0;
}

class HaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!etcd_installed()) GTEST_SKIP() << "etcd not installed";
    ASSERT_TRUE(etcd_.start());
  }
  std::vector<std::string> args() const {
    return {"--store", "etcd:" + etcd_.url(), "--leader-ttl", "2", "--metrics-poll-interval", "0"};
  }
  bool create(uint16_t port, const std::string& name) {
    auto r = http_request(port, "POST", "/api/v1/namespaces/default/pods", pod_json(name, "500m"));
    return r && r->status == 201;
  }
  EtcdProcess etcd_;
};

TEST_F(HaTest, ATakeoverKnowsEveryRunningTaskKillsNoneAndActs) {
  DaemonProcess a(args());
  ASSERT_TRUE(a.start()) << a.log();
  ASSERT_TRUE(a.wait_ready()) << a.log();
  DaemonProcess b(args());  // the standby starts before any pod is bound
  ASSERT_TRUE(b.start()) << b.log();
  ASSERT_EQ(readyz(b.port()), 503);

  ScriptedAgent on_a(a.port(), "edge-1");
  ASSERT_TRUE(on_a.subscribe());
  std::vector<std::string> tasks;
  for (int i = 0; i < 4; ++i) {
    ASSERT_FALSE(on_a.offer(1, 1024).empty());  // an offer is used whole: one per pod
    ASSERT_TRUE(create(a.port(), "p" + std::to_string(i)));
    std::string launch = on_a.next("LAUNCH");
    ASSERT_FALSE(launch.empty()) << a.log() << "\n" << http_request(a.port(), "GET", "/api/v1/namespaces/default/pods/p" + std::to_string(i))->body;
    tasks.push_back(task_id_of(launch));
  }
  for (const auto& t : tasks) on_a.status(t, "TASK_RUNNING");
  ASSERT_TRUE(eventually([&] {
    auto r = http_request(a.port(), "GET", "/api/v1/namespaces/default/pods/p3");
    return r && r->body.find("\"phase\":\"Running\"") != std::string::npos;
  }, 10s));

  ASSERT_EQ(a.stop(SIGKILL), 128 + SIGKILL);
  ASSERT_TRUE(b.wait_ready(15s)) << b.log();

  // The agent follows the new leader and reports what it runs.
  ScriptedAgent on_b(b.port(), "edge-1");
  ASSERT_TRUE(on_b.subscribe());
  for (const auto& t : tasks) on_b.status(t, "TASK_RUNNING");
  // A pod deleted after the takeover: its KILL is the first KILL the agent
  // sees, so none of the running tasks drew one before it.
  auto del = http_request(b.port(), "DELETE", "/api/v1/namespaces/default/pods/p0");
  ASSERT_TRUE(del && del->status == 200) << (del ? del->body : "");
  std::string kill = on_b.next("KILL");
  EXPECT_NE(kill.find(tasks[0]), std::string::npos) << "first KILL: " << kill << "\n" << b.log();
  EXPECT_EQ(b.log().find("event=unknown_task_killed"), std::string::npos) << b.log();
  // And it places a new pod.
  ASSERT_FALSE(on_b.offer(4, 4096).empty());
  ASSERT_TRUE(create(b.port(), "after"));
  std::string launch = on_b.next("LAUNCH");
  EXPECT_NE(launch.find("\"name\":\"after\""), std::string::npos) << launch << "\n" << b.log();
  EXPECT_EQ(b.stop(SIGTERM), 0) << b.log();
}

TEST_F(HaTest, AFrozenLeaderStepsDownWhenItResumes) {
  DaemonProcess a(args());
  ASSERT_TRUE(a.start()) << a.log();
  ASSERT_TRUE(a.wait_ready()) << a.log();
  DaemonProcess b(args());
  ASSERT_TRUE(b.start()) << b.log();
  kill(a.pid(), SIGSTOP);
  ASSERT_TRUE(b.wait_ready(15s)) << b.log();
  kill(a.pid(), SIGCONT);
  auto resumed = std::chrono::steady_clock::now();
  ASSERT_TRUE(a.wait_for_log("event=leader_stepping_down", 5s)) << a.log();
  EXPECT_LT(std::chrono::steady_clock::now() - resumed, 1500ms);
  // It serves as a standby now: not ready, and its requests go to the new leader.
  EXPECT_EQ(readyz(a.port()), 503);
  std::optional<RawResponse> r;
  ASSERT_TRUE(eventually([&] {  // 503 with Retry-After until it has read who leads now
    r = http_request(a.port(), "GET", "/api/v1/namespaces/default/pods");
    return r && r->status == 307;
  }, 5s)) << (r ? r->body : "");
  EXPECT_EQ(r->header("Location"), "http://127.0.0.1:" + std::to_string(b.port()) + "/api/v1/namespaces/default/pods");
  EXPECT_EQ(a.stop(SIGTERM), 0) << a.log();
  EXPECT_EQ(b.stop(SIGTERM), 0) << b.log();
}

}  // namespace
}  // namespace uvsched::test
