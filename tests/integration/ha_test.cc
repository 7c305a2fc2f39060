// Several daemons on one etcd, as an operator runs them: the leader dies or
// freezes, a standby takes over with the whole state (every task the old
// leader launched, even those launched after the standby started), kills
// none of them, and acts: a pod deleted after the takeover gets its KILL, a
// new pod is placed. A frozen leader that resumes steps down.
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/etcd_process.h"
#include "tests/support/raw_http.h"
#include "tests/support/scripted_agent.h"
#include "tests/support/store_fixture.h"

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
  // Each says what it is itself (the standby does not hand /v1/status to the leader).
  auto status_a = http_request(a.port(), "GET", "/v1/status");
  auto status_b = http_request(b.port(), "GET", "/v1/status");
  ASSERT_TRUE(status_a && status_b);
  EXPECT_NE(status_a->body.find(R"("role":"leader")"), std::string::npos) << status_a->body;
  EXPECT_NE(status_b->body.find(R"("role":"standby")"), std::string::npos) << status_b->status << status_b->body;
  EXPECT_NE(status_b->body.find(R"("backend":"etcd")"), std::string::npos) << status_b->body;

  ScriptedAgent on_a(a.port(), "edge-1");
  ASSERT_TRUE(on_a.subscribe());
  std::vector<std::string> tasks;
  for (int i = 0; i < 4; ++i) {
    ASSERT_FALSE(on_a.offer(1, 1024).empty());  // an offer is used whole: one per pod
    ASSERT_TRUE(create(a.port(), "p" + std::to_string(i)));
    std::string launch = on_a.next("LAUNCH");
    ASSERT_FALSE(launch.empty())
        << a.log() << "\n"
        << answered(http_request(a.port(), "GET", "/api/v1/namespaces/default/pods/p" + std::to_string(i))).body;
    tasks.push_back(task_id_of(launch));
  }
  for (const auto& t : tasks) on_a.status(t, "TASK_RUNNING");
  ASSERT_TRUE(eventually(
      [&] {
        auto r = http_request(a.port(), "GET", "/api/v1/namespaces/default/pods/p3");
        return r && r->body.find("\"phase\":\"Running\"") != std::string::npos;
      },
      10s));

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

// The events agent_sim received: pod -> how many LAUNCHes, and the KILLed task ids.
struct AgentView {
  std::map<std::string, int> launches;
  std::map<std::string, std::string> task_of;
  std::vector<std::string> kills;
};
AgentView read_events(const std::string& path) {
  AgentView v;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string type, host, a, b;
    words >> type >> host >> a >> b;
    if (type == "LAUNCH") {
      v.launches[a] += 1;
      v.task_of[a] = b;
    } else if (type == "KILL") {
      v.kills.push_back(a);
    }
  }
  return v;
}

// kill -9 the leader while pods are being created and launched on simulated
// agents that know both daemons: they follow the standby as it takes over;
// every pod ends Running, launched exactly once, and no running task is killed.
TEST_F(HaTest, AStormThroughALeaderKilledMidwayLaunchesEveryPodOnceAndKillsNone) {
  DaemonProcess a(args());
  ASSERT_TRUE(a.start()) << a.log();
  ASSERT_TRUE(a.wait_ready()) << a.log();
  DaemonProcess b(args());
  ASSERT_TRUE(b.start()) << b.log();
  TempDir dir;
  const std::string events = dir.path() + "/events";
  const char* sim = std::getenv("UVSCHED_AGENT_SIM");
  std::string cmd = std::string(sim ? sim : "agent_sim") + " --server http://127.0.0.1:" + std::to_string(a.port()) +
                    ",http://127.0.0.1:" + std::to_string(b.port()) + " --agents 4 --cpus 8 --mem 16384 --reoffer 1" +
                    " --events-log " + events + " > " + dir.path() + "/sim.log 2>&1 & echo $!";
  std::string pid_text;
  ASSERT_EQ(run_shell(cmd, &pid_text), 0);
  const pid_t sim_pid = static_cast<pid_t>(std::atoi(pid_text.c_str()));
  ASSERT_TRUE(eventually(
      [&] { return answered(http_request(a.port(), "GET", "/api/v1/nodes")).body.find("sim-3") != std::string::npos; },
      10s));

  // Creates go to whichever daemon takes them; one refused on the way is sent again.
  const int kPods = 60;
  uint16_t target = a.port();
  bool killed = false;
  for (int i = 0; i < kPods; ++i) {
    if (i == kPods / 2) {
      ASSERT_TRUE(eventually([&] { return read_events(events).launches.size() >= 20; }, 10s)) << a.log();
      ASSERT_EQ(a.stop(SIGKILL), 128 + SIGKILL);
      killed = true;
      target = b.port();
    }
    std::string name = "storm-" + std::to_string(i);
    ASSERT_TRUE(eventually(
        [&] {
          auto r = http_request(target, "POST", "/api/v1/namespaces/default/pods", pod_json(name, "100m"));
          return r && (r->status == 201 || r->status == 409);  // 409: its first try landed
        },
        20s))
        << name << "\n"
        << b.log();
  }
  ASSERT_TRUE(killed);
  ASSERT_TRUE(b.wait_ready(15s)) << b.log();
  std::string list;
  std::set<std::string> running;
  ASSERT_TRUE(eventually(
      [&] {
        list = answered(http_request(b.port(), "GET",
                                     "/api/v1/namespaces/default/pods?fieldSelector=status.phase%3DRunning"))
                   .body;
        running.clear();
        simdjson::dom::parser p;
        simdjson::dom::element doc;
        simdjson::dom::array items;
        if (p.parse(list).get(doc) || doc["items"].get(items)) return false;
        for (simdjson::dom::element item : items)
          running.insert(std::string(std::string_view(item["metadata"]["name"])));
        return running.size() == static_cast<size_t>(kPods);
      },
      30s))
      << running.size() << " running\n"
      << b.log();
  AgentView seen = read_events(events);
  EXPECT_EQ(seen.launches.size(), static_cast<size_t>(kPods));
  // (Seen once under ASan on a loaded machine: a pod launched twice across the
  // takeover. Everything that could say why goes with a failure.)
  auto everything = [&] {
    std::ifstream sim_log(dir.path() + "/sim.log"), events_log(events);
    std::stringstream out;
    out << "\n--- the killed leader:\n"
        << a.log() << "\n--- the new leader:\n"
        << b.log() << "\n--- agent_sim:\n"
        << sim_log.rdbuf() << "\n--- LAUNCH and KILL as the agents saw them:\n"
        << events_log.rdbuf();
    return out.str();
  };
  bool once = true;
  for (const auto& [pod, n] : seen.launches) once = once && n == 1;
  for (const auto& [pod, n] : seen.launches) EXPECT_EQ(n, 1) << pod << " was launched " << n << " times";
  EXPECT_TRUE(seen.kills.empty()) << "a running task was killed: " << seen.kills.front();
  EXPECT_EQ(b.log().find("event=unknown_task_killed"), std::string::npos);
  EXPECT_TRUE(once && seen.kills.empty()) << everything();

  // After the takeover: a deleted pod's task is killed, a new pod is placed.
  auto gone = http_request(b.port(), "DELETE", "/api/v1/namespaces/default/pods/storm-0");
  ASSERT_EQ(gone->status, 200) << gone->body << "\n" << list;
  ASSERT_TRUE(eventually([&] { return !read_events(events).kills.empty(); }, 10s)) << b.log();
  EXPECT_EQ(read_events(events).kills, std::vector<std::string>{seen.task_of["default/storm-0"]});
  ASSERT_EQ(
      answered(http_request(b.port(), "POST", "/api/v1/namespaces/default/pods", pod_json("after", "100m"))).status,
      201);
  EXPECT_TRUE(eventually([&] { return read_events(events).launches.count("default/after") == 1; }, 10s)) << b.log();
  kill(sim_pid, SIGKILL);
  EXPECT_EQ(b.stop(SIGTERM), 0) << b.log();
}

// kubectl pointed at a standby follows its 307 (resending the body) and works on the leader.
TEST_F(HaTest, KubectlThroughAStandbyReachesTheLeader) {
  DaemonProcess a(args());
  ASSERT_TRUE(a.start()) << a.log();
  ASSERT_TRUE(a.wait_ready()) << a.log();
  DaemonProcess b(args());
  ASSERT_TRUE(b.start()) << b.log();
  ASSERT_TRUE(eventually(
      [&] {  // until the standby has read who leads
        auto r = http_request(b.port(), "GET", "/api/v1/namespaces/default/pods");
        return r && r->status == 307;
      },
      5s));
  TempDir dir;
  std::string manifest = dir.path() + "/pod.yaml";
  std::ofstream(manifest) << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: via-standby\nspec:\n"
                             "  containers:\n  - name: c\n    image: nginx:1.25\n";
  std::string kubectl =
      "kubectl --cache-dir " + dir.path() + "/cache --server http://127.0.0.1:" + std::to_string(b.port());
  std::string out;
  EXPECT_EQ(run_shell(kubectl + " create -f " + manifest, &out), 0) << out;
  EXPECT_NE(out.find("pod/via-standby created"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(run_shell(kubectl + " get pods", &out), 0) << out;
  EXPECT_NE(out.find("via-standby"), std::string::npos) << out;
  auto on_leader = http_request(a.port(), "GET", "/api/v1/namespaces/default/pods/via-standby");
  ASSERT_TRUE(on_leader);
  EXPECT_EQ(on_leader->status, 200);
  EXPECT_EQ(a.stop(SIGTERM), 0) << a.log();
  EXPECT_EQ(b.stop(SIGTERM), 0) << b.log();
}

// A disruption budget across a takeover: the leader lets one of two pods
// go (minAvailable 1) and dies while that pod is still going; the new
// leader weighs the next eviction on what the store holds, refuses it, and
// keeps the budget's status.
TEST_F(HaTest, ANewLeaderHoldsTheDisruptionBudgetItsPredecessorSpent) {
  DaemonProcess a(args());
  ASSERT_TRUE(a.start()) << a.log();
  ASSERT_TRUE(a.wait_ready()) << a.log();
  DaemonProcess b(args());
  ASSERT_TRUE(b.start()) << b.log();
  ScriptedAgent on_a(a.port(), "edge-1");
  ASSERT_TRUE(on_a.subscribe());
  std::vector<std::string> tasks;
  for (const char* name : {"p0", "p1"}) {
    ASSERT_FALSE(on_a.offer(1, 1024).empty());
    ASSERT_TRUE(create(a.port(), name));
    tasks.push_back(task_id_of(on_a.next("LAUNCH")));
    ASSERT_FALSE(tasks.back().empty()) << a.log();
    on_a.status(tasks.back(), "TASK_RUNNING");
  }
  auto budget = http_request(a.port(), "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
                             R"({"metadata":{"name":"web"},"spec":{"minAvailable":1,"selector":{}}})");
  ASSERT_TRUE(budget && budget->status == 201) << (budget ? budget->body : "");
  auto budget_shows = [](uint16_t port, const std::string& text) {
    return eventually(
        [&] {
          auto r = http_request(port, "GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web");
          return r && r->status == 200 && r->body.find(text) != std::string::npos;
        },
        10s);
  };
  ASSERT_TRUE(budget_shows(a.port(), R"("disruptionsAllowed":1,"currentHealthy":2)")) << a.log();
  auto evict = [](uint16_t port, const std::string& pod) {
    return http_request(port, "POST", "/api/v1/namespaces/default/pods/" + pod + "/eviction",
                        R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":")" + pod + R"("}})");
  };
  auto first = evict(a.port(), "p0");
  ASSERT_TRUE(first && first->status == 201) << (first ? first->body : "");
  EXPECT_NE(on_a.next("KILL").find(tasks[0]), std::string::npos);  // (not reported killed: p0 is still going)

  ASSERT_EQ(a.stop(SIGKILL), 128 + SIGKILL);
  ASSERT_TRUE(b.wait_ready(15s)) << b.log();
  ScriptedAgent on_b(b.port(), "edge-1");
  ASSERT_TRUE(on_b.subscribe());
  for (const auto& t : tasks) on_b.status(t, "TASK_RUNNING");
  auto second = evict(b.port(), "p1");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 429) << second->body << "\n" << b.log();
  EXPECT_NE(second->body.find("needs 1 healthy pods and has 1 currently"), std::string::npos) << second->body;
  EXPECT_TRUE(
      budget_shows(b.port(), R"("disruptionsAllowed":0,"currentHealthy":1,"desiredHealthy":1,"expectedPods":2)"))
      << b.log();
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
  ASSERT_TRUE(eventually(
      [&] {  // 503 with Retry-After until it has read who leads now
        r = http_request(a.port(), "GET", "/api/v1/namespaces/default/pods");
        return r && r->status == 307;
      },
      5s))
      << (r ? r->body : "");
  EXPECT_EQ(r->header("Location"), "http://127.0.0.1:" + std::to_string(b.port()) + "/api/v1/namespaces/default/pods");
  EXPECT_EQ(a.stop(SIGTERM), 0) << a.log();
  EXPECT_EQ(b.stop(SIGTERM), 0) << b.log();
}

}  // namespace
}  // namespace uvsched::test
