// The agent simulator (tools/agent_sim) against the real daemon: the tool the
// placement benchmark stands on must place every pod it creates, and its
// agents must come back when their stream is lost, as real agents do.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/agent_sim_fixture.h"
#include "tests/support/daemon_fixture.h"
#include "tests/support/daemon_process.h"
#include "tests/support/raw_http.h"
#include "tests/support/store_fixture.h"

namespace uvsched::test {
namespace {

TEST_F(AgentSimTest, PlacesEveryPodItCreatesAndReports) {
  start();
  ASSERT_TRUE(daemon_->wait_ready());
  std::string out;
  // `timeout` only bounds a hang; the run itself takes well under a second.
  int rc = run_shell(
      "AGENT_SIM_EXIT_AFTER_REPORT=1 timeout 60 " + sim_command("--agents 20 --pods 40 --concurrency 8 --pipeline 4"),
      &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("placed=40 agents=20 "), std::string::npos) << out;
  EXPECT_NE(out.find("create_errors=0"), std::string::npos) << out;
  // Every pod is bound to a task. (The simulator exits at its report, with
  // the last statuses maybe unsent: the phases are not all Running yet.)
  auto pods = http_request(port(), "GET", "/api/v1/pods");
  ASSERT_TRUE(pods && pods->status == 200);
  EXPECT_EQ(count(pods->body, "\"uvsched.io/taskId\""), 40u) << pods->body;
}

// With --agent-mux, many agents' statuses and offers share connections: the
// pods still all run, and the agents offer again after each launch.
TEST_F(AgentSimTest, AgentsPostingOverSharedConnectionsRunEveryPod) {
  start();
  ASSERT_TRUE(daemon_->wait_ready());
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 20 --pods 40 --concurrency 8 --agent-mux 4"));
  auto until = std::chrono::steady_clock::now() + 20s;
  size_t running = 0;
  while (std::chrono::steady_clock::now() < until) {
    auto pods = http_request(port(), "GET", "/api/v1/pods?fieldSelector=status.phase%3DRunning");
    running = pods && pods->status == 200 ? count(pods->body, "\"kind\":\"Pod\"") : 0;
    if (running == 40) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(running, 40u) << sim_log();
  EXPECT_NE(sim_log().find("create_errors=0"), std::string::npos) << sim_log();
}

// A subscribe that names a connected agent replaces its stream; the simulated
// agent whose stream ended subscribes again, and so ends the intruder's.
TEST_F(AgentSimTest, AnAgentWhoseStreamEndsSubscribesAgain) {
  start();
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 2 --pods 0"));
  ASSERT_TRUE(agents_connected(2)) << daemon_->log();

  RawConnection intruder;
  ASSERT_TRUE(intruder.connect(port()));
  std::string body = R"({"labels":{},"resources":[]})";
  ASSERT_TRUE(intruder.send("POST /v1/agents/sim-0/subscribe HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body));
  ASSERT_TRUE(intruder.read_until("SUBSCRIBED"));
  // The simulator's sim-0 comes back and takes its stream over: ours ends.
  EXPECT_TRUE(intruder.read_until("0\r\n\r\n")) << daemon_->log();  // the last chunk
  EXPECT_TRUE(agents_connected(2));
  EXPECT_NE(sim_log().find("agent sim-0 stream ended: closed; subscribing again"), std::string::npos) << sim_log();
}

// The simulated agent offers its ports and gives the LAUNCH's back on KILL:
// with one port between two agents, a third pod that wants it waits, says
// why, and runs once a pod holding it is deleted.
TEST_F(AgentSimTest, HostPortsAreOfferedTakenAndGivenBack) {
  start();
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 2 --ports 31000-31000"));
  ASSERT_TRUE(agents_connected(2)) << daemon_->log();
  const std::string spec =
      R"({"containers":[{"name":"c","image":"i","ports":[{"containerPort":80,"hostPort":31000}]}]})";
  for (const char* name : {"web-a", "web-b"}) {
    ASSERT_NO_FATAL_FAILURE(create(name, spec));
    ASSERT_TRUE(pod_shows(name, "\"phase\":\"Running\"")) << pod(name) << sim_log();
    // The simulated agent reports the pod's status: kubectl counts it ready.
    EXPECT_NE(pod(name).find(R"({"type":"Ready","status":"True")"), std::string::npos) << pod(name);
    EXPECT_NE(pod(name).find(R"("containerStatuses":[{"name":"c","image":"i","imageID":"","ready":true)"),
              std::string::npos)
        << pod(name);
  }
  ASSERT_NO_FATAL_FAILURE(create("web-c", spec));
  EXPECT_TRUE(pod_shows("web-c", "node(s) didn't have free ports for the requested pod ports")) << pod("web-c");
  std::string a = pod("web-a");
  std::string host = a.find("\"nodeName\":\"sim-0\"") != std::string::npos ? "sim-0" : "sim-1";
  auto del = http_request(port(), "DELETE", "/api/v1/namespaces/default/pods/web-a");
  ASSERT_TRUE(del && del->status == 200);
  EXPECT_TRUE(pod_shows("web-c", "\"phase\":\"Running\"")) << pod("web-c") << sim_log();
  EXPECT_NE(pod("web-c").find("\"nodeName\":\"" + host + "\""), std::string::npos) << pod("web-c");
}

// A killed task stops as a Mesos executor stops it (--stop-after): its agent
// reports TASK_KILLING, and TASK_KILLED once the process has stopped or its
// grace period (the pod's terminationGracePeriodSeconds, or the delete's) has
// ended, whichever comes first. Until then the pod is Terminating: it is
// still there, with its deletionTimestamp, and then it goes.
TEST_F(AgentSimTest, AKilledTaskStopsWithinItsGracePeriodAndItsPodGoesThen) {
  start();
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 1 --pods 0 --prefix slow --labels stops=slowly --stop-after 60"));
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 1 --pods 0 --prefix quick --labels stops=quickly --stop-after 0.2"));
  ASSERT_TRUE(agents_connected(2)) << daemon_->log();
  auto deleted_after = [this](const std::string& name, const std::string& query) {
    auto start = std::chrono::steady_clock::now();
    auto del = http_request(port(), "DELETE", "/api/v1/namespaces/default/pods/" + name + query);
    EXPECT_TRUE(del && del->status == 200) << (del ? del->body : "");
    EXPECT_TRUE(pod_shows(name, "\"deletionTimestamp\":")) << pod(name);
    EXPECT_TRUE(pod_shows(name, "404", 20s)) << pod(name) << sim_log(0);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // The slow agent's process outlasts the grace period: killed at its end.
  ASSERT_NO_FATAL_FAILURE(create("slow", R"({"terminationGracePeriodSeconds":2,"nodeSelector":{"stops":"slowly"},)"
                                         R"("containers":[{"name":"c","image":"i"}]})"));
  ASSERT_TRUE(pod_shows("slow", "\"phase\":\"Running\"")) << pod("slow");
  double took = deleted_after("slow", "");
  EXPECT_GE(took, 1.8) << "the pod stays while its process stops, for its 2 s grace";
  EXPECT_LT(took, 10.0);
  // A delete's own grace period is the KILL's.
  ASSERT_NO_FATAL_FAILURE(
      create("slow2", R"({"nodeSelector":{"stops":"slowly"},"containers":[{"name":"c","image":"i"}]})"));
  ASSERT_TRUE(pod_shows("slow2", "\"phase\":\"Running\"")) << pod("slow2");
  took = deleted_after("slow2", "?gracePeriodSeconds=1");
  EXPECT_GE(took, 0.8);
  EXPECT_LT(took, 10.0) << "not the pod's 30 s";
  // The quick agent's process stops long before its 30 s grace period ends.
  ASSERT_NO_FATAL_FAILURE(
      create("quick", R"({"nodeSelector":{"stops":"quickly"},"containers":[{"name":"c","image":"i"}]})"));
  ASSERT_TRUE(pod_shows("quick", "\"phase\":\"Running\"")) << pod("quick");
  EXPECT_LT(deleted_after("quick", ""), 10.0);
}

// An offer that goes unused is declined to its agent, which offers the
// resources again once the filter's 5 s have passed: with offers live for
// 1 s and the simulator's own re-offer a minute away, a pod created after the
// decline runs within seconds only because the DECLINE was heard. (Within
// 30 s: under ASan on a loaded machine a binding's write can outlast the 1 s
// offer; the launch is rolled back and the offer declined again 2 s later,
// then offered again after another 5 s. Once that second DECLINE was never
// sent, the hub's offer timer not armed for it, and the pod waited a minute.)
TEST_F(AgentSimTest, ADeclinedOfferIsOfferedAgainAfterTheFilter) {
  start({"--offer-ttl", "1"});
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 1 --pods 0 --reoffer 60"));
  ASSERT_TRUE(agents_connected(1)) << daemon_->log();
  auto until = std::chrono::steady_clock::now() + 10s;
  while (sim_log().find("offered again in 5 s") == std::string::npos && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_NE(sim_log().find("offered again in 5 s"), std::string::npos) << sim_log();
  ASSERT_NO_FATAL_FAILURE(create("after-decline", R"({"containers":[{"name":"c","image":"i"}]})"));
  EXPECT_TRUE(pod_shows("after-decline", "\"phase\":\"Running\"", 30s)) << pod("after-decline") << sim_log();
}

// An agent started afresh under the name of one that just went (its tasks
// died with it) re-subscribes within the agent timeout, so the daemon keeps
// the old tasks and asks about them; the new agent, as a Mesos master would,
// answers TASK_LOST for tasks it does not know, and the pods leave Running
// long before the 30 s agent timeout would have made them.
TEST_F(AgentSimTest, AnAgentStartedAfreshUnderTheSameNameReportsTheOldTasksLost) {
  start();
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 1 --pods 0"));
  ASSERT_TRUE(agents_connected(1)) << daemon_->log();
  ASSERT_NO_FATAL_FAILURE(create("old", R"({"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]})"));
  ASSERT_TRUE(pod_shows("old", "\"phase\":\"Running\"")) << pod("old") << sim_log();
  ASSERT_TRUE(stop_sim(0));
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 1 --pods 0"));
  EXPECT_TRUE(pod_shows("old", "\"phase\":\"Failed\"", 10s)) << pod("old") << daemon_->log() << sim_log(1);
  EXPECT_NE(pod("old").find("TASK_LOST"), std::string::npos) << pod("old");
}

// A daemon that starts with tasks on an agent that never comes back (it went
// while no daemon ran) holds the agent lost after --agent-timeout, as a Mesos
// master does agents that do not re-register after a failover: its pods do
// not stay Running on no agent. (Found by the soak.)
TEST_F(AgentSimTest, AnAgentThatDoesNotComeBackAfterARestartIsLost) {
  start({"--agent-timeout", "3"});
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 1 --pods 0"));
  ASSERT_TRUE(agents_connected(1)) << daemon_->log();
  ASSERT_NO_FATAL_FAILURE(create("stranded", R"({"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]})"));
  ASSERT_TRUE(pod_shows("stranded", "\"phase\":\"Running\"")) << pod("stranded") << sim_log();
  ASSERT_TRUE(stop_sim(0));
  ASSERT_EQ(daemon_->stop(SIGKILL), 128 + SIGKILL);  // at once: its own agent timeout must not end first
  ASSERT_TRUE(daemon_->start()) << daemon_->log();
  EXPECT_TRUE(daemon_->wait_for_log("event=agent_expected agent=sim-0")) << daemon_->log();
  EXPECT_TRUE(pod_shows("stranded", "\"phase\":\"Failed\"", 10s)) << pod("stranded") << daemon_->log();
  EXPECT_TRUE(daemon_->wait_for_log("event=agent_lost agent=sim-0")) << daemon_->log();
}

// A pod whose nodeSelector no agent matches waits until a second simulator
// brings agents, under their own names, that carry the label.
TEST_F(AgentSimTest, ASecondSimulatorAddsLabelledAgents) {
  start();
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 2"));
  ASSERT_TRUE(agents_connected(2)) << daemon_->log();
  ASSERT_NO_FATAL_FAILURE(create("gpu", R"({"nodeSelector":{"accel":"gpu"},"containers":[{"name":"c","image":"i"}]})"));
  EXPECT_TRUE(pod_shows("gpu", "didn't match Pod's node affinity/selector")) << pod("gpu");
  ASSERT_NO_FATAL_FAILURE(start_sim("--agents 1 --prefix gpu --labels accel=gpu,zone=a"));
  ASSERT_TRUE(agents_connected(3)) << daemon_->log();
  EXPECT_TRUE(pod_shows("gpu", "\"phase\":\"Running\"")) << pod("gpu") << sim_log(1);
  EXPECT_NE(pod("gpu").find("\"nodeName\":\"gpu-0\""), std::string::npos) << pod("gpu");
}

TEST_F(AgentSimTest, ItsCommandLineSaysWhatIsWrong) {
  std::string out;
  EXPECT_EQ(run_shell(agent_sim_binary() + " --help", &out), 0);
  EXPECT_NE(out.find("usage: agent_sim"), std::string::npos) << out;
  struct Case {
    std::string args, says;
  } cases[] = {
      {"--agents", "--agents needs a value"},
      {"--agents 0", "bad value for --agents: '0'"},
      {"--agents 3x", "bad value for --agents: '3x'"},
      {"--ports 32000-31000", "bad value for --ports"},
      {"--ports 1-5,5-9", "bad value for --ports"},
      {"--labels novalue", "bad value for --labels"},
      {"--prefix a/b", "bad value for --prefix"},
      {"--hold-statuses yes", "bad value for --hold-statuses"},
      {"--stop-after -1", "bad value for --stop-after"},
      {"--nope 1", "unknown flag --nope"},
  };
  for (const auto& c : cases) {
    std::string out;
    EXPECT_EQ(run_shell(agent_sim_binary() + " " + c.args, &out), 2) << c.args;
    EXPECT_NE(out.find(c.says), std::string::npos) << c.args << ": " << out;
  }
}

}  // namespace
}  // namespace uvsched::test
