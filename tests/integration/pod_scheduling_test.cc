// Pods placed on agents, end to end: the real daemon and scripted agents that
// subscribe, offer, read LAUNCH and KILL from their event stream and report
// task statuses, the way a node agent would.
#include <gtest/gtest.h>

#include <set>

#include <signal.h>
#include <simdjson.h>
#include <map>

#include <algorithm>
#include <fstream>
#include <memory>
#include <thread>

#include "storage/base64.h"
#include "tests/support/daemon_fixture.h"
#include "tests/support/daemon_process.h"
#include "tests/support/raw_http.h"
#include "tests/support/scripted_agent.h"
#include "tests/support/store_fixture.h"

namespace uvsched::test {
namespace {

// The id a daemon's log says its framework registered under.
std::string registered_framework_id(const std::string& log) {
  size_t at = log.find("framework_id=", log.find("event=framework_registered")) + 13;
  return log.substr(at, log.find_first_of(" \n", at) - at);
}

class PodSchedulingTest : public DaemonFixture {
 protected:
  // Up, and ready: the scheduler follows the pods (the create-time paths
  // need it; before then a pod takes the queue's way, which is slower).
  void start(std::vector<std::string> args = {}) {
    DaemonFixture::start(std::move(args));
    ASSERT_TRUE(daemon_->wait_ready()) << daemon_->log();
  }
  std::string get_pod(const std::string& name) {
    auto r = http_request(port(), "GET", "/api/v1/namespaces/default/pods/" + name);
    return r ? (r->status == 200 ? r->body : std::to_string(r->status)) : "";
  }
  // The pod was read (200) and `text` is not in it: a failed read does not pass for an absence.
  ::testing::AssertionResult lacks(const std::string& name, const std::string& text) {
    auto r = http_request(port(), "GET", "/api/v1/namespaces/default/pods/" + name);
    if (!r || r->status != 200)
      return ::testing::AssertionFailure() << "pod " << name << " not read: " << (r ? r->status : 0);
    if (r->body.find(text) != std::string::npos) return ::testing::AssertionFailure() << text << " in " << r->body;
    return ::testing::AssertionSuccess();
  }
  // Polls the pod until `needle` shows up in it (or it is 404 and needle is "404").
  bool pod_shows(const std::string& name, const std::string& needle, std::chrono::milliseconds deadline = 10s) {
    auto until = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < until) {
      if (get_pod(name).find(needle) != std::string::npos) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  // Polls a file another process writes (a kubectl left running) until
  // `text` is in it `times` times: "" then, or else what it holds.
  static std::string file_shows(const std::string& file, const std::string& text, size_t times = 1) {
    auto until = std::chrono::steady_clock::now() + 30s;
    std::string seen;
    for (;;) {
      std::ifstream in(file);
      seen.assign(std::istreambuf_iterator<char>(in), {});
      size_t n = 0;
      for (size_t at = seen.find(text); at != std::string::npos; at = seen.find(text, at + 1)) ++n;
      if (n >= times) return std::string();
      if (std::chrono::steady_clock::now() > until) return seen;
      std::this_thread::sleep_for(20ms);  // polling a file another process writes
    }
  }
  // The series's value; -1 when it is absent, so that a check for 0 needs the series there.
  double metric(const std::string& series) { return metric_value(port(), series); }
  void create(const std::string& body) {
    auto r = http_request(port(), "POST", "/api/v1/namespaces/default/pods", body);
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  }
  // Creates a pod of 500m that the agent's live offer fits and waits for its
  // LAUNCH: the task's id, or "" when none came.
  std::string launch_task(ScriptedAgent& agent, const std::string& name) {
    create(pod_json(name, "500m"));
    return task_id_of(agent.next("LAUNCH"));
  }
  // The same, then reported running and seen so in the pod.
  std::string run_task(ScriptedAgent& agent, const std::string& name) {
    std::string task = launch_task(agent, name);
    EXPECT_FALSE(task.empty()) << daemon_->log();
    agent.status(task, "TASK_RUNNING");
    EXPECT_TRUE(pod_shows(name, "\"phase\":\"Running\"")) << get_pod(name);
    return task;
  }
};

TEST_F(PodSchedulingTest, APodThatFitsIsLaunchedBoundRunAndKilledOnDelete) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  std::string offer = agent.offer(2, 1024);
  // The daemon's id: the agent's name and 48 unpredictable bits.
  ASSERT_EQ(offer.size(), std::string("edge-1-o").size() + 12) << offer;
  EXPECT_EQ(offer.rfind("edge-1-o", 0), 0u) << offer;
  create(pod_json("web", "500m"));
  std::string launch = agent.next("LAUNCH");
  ASSERT_FALSE(launch.empty()) << daemon_->log();
  EXPECT_NE(launch.find("\"name\":\"web\""), std::string::npos);  // the pod travels with the task
  std::string task = task_id_of(launch);
  ASSERT_TRUE(pod_shows("web", "\"nodeName\":\"edge-1\"")) << get_pod("web");
  std::string bound = get_pod("web");
  EXPECT_NE(bound.find("\"uvsched.io/taskId\":\"" + task + "\""), std::string::npos) << bound;
  EXPECT_NE(bound.find("\"uvsched.io/bindingHost\":\"edge-1\""), std::string::npos);
  EXPECT_NE(bound.find("\"uvsched.io/offerId\":\"" + offer + "\""), std::string::npos);
  agent.status(task, "TASK_STARTING");
  agent.status(task, "TASK_RUNNING");
  ASSERT_TRUE(pod_shows("web", "\"phase\":\"Running\"")) << get_pod("web");

  auto del = http_request(port(), "DELETE", "/api/v1/namespaces/default/pods/web");
  ASSERT_TRUE(del && del->status == 200);
  std::string kill = agent.next("KILL");
  EXPECT_NE(kill.find(task), std::string::npos) << kill;
  EXPECT_TRUE(pod_shows("web", "deletionTimestamp"));  // still there until the task is gone
  agent.status(task, "TASK_KILLED");
  EXPECT_TRUE(pod_shows("web", "404")) << get_pod("web");
}

// DELETE on a namespace's pods deletes the selected ones as their own
// DELETEs would: a running pod's task is killed first, and the pod stays,
// marked, until it is gone; the others are left alone.
TEST_F(PodSchedulingTest, DeletingANamespacesPodsBySelectorKillsTheirTasks) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  agent.offer(4, 4096);
  create(pod_json("web", "500m"));
  std::string task = task_id_of(agent.next("LAUNCH"));
  ASSERT_FALSE(task.empty()) << daemon_->log();
  agent.status(task, "TASK_RUNNING");
  ASSERT_TRUE(pod_shows("web", "\"phase\":\"Running\"")) << get_pod("web");
  create(R"({"metadata":{"name":"other","labels":{"keep":"yes"}},"spec":{"containers":[{"name":"c","image":"i"}]}})");

  auto del = http_request(port(), "DELETE", "/api/v1/namespaces/default/pods?labelSelector=keep!%3Dyes");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200) << del->body;
  EXPECT_NE(del->body.find(R"("kind":"PodList")"), std::string::npos) << del->body;
  EXPECT_NE(del->body.find(R"("name":"web")"), std::string::npos) << del->body;
  EXPECT_EQ(del->body.find(R"("name":"other")"), std::string::npos) << del->body;
  std::string kill = agent.next("KILL");
  EXPECT_NE(kill.find(task), std::string::npos) << kill;
  EXPECT_TRUE(pod_shows("web", "deletionTimestamp"));
  agent.status(task, "TASK_KILLED");
  EXPECT_TRUE(pod_shows("web", "404")) << get_pod("web");
  EXPECT_TRUE(lacks("other", "deletionTimestamp")) << "a pod the selector left was deleted";
}

// A server-side dry run (?dryRun=All, what kubectl create --dry-run=server
// sends) names the agent a pod would go to now, or why it would wait; it
// stores nothing and claims no offer: the real create after it is placed.
TEST_F(PodSchedulingTest, ADryRunCreateNamesTheAgentAndTakesNothing) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  auto dry = http_request(port(), "POST", "/api/v1/namespaces/default/pods?dryRun=All", pod_json("web", "500m"));
  ASSERT_TRUE(dry && dry->status == 201) << (dry ? dry->body : "");
  EXPECT_NE(dry->body.find(R"("uvsched.io/dry-run-placement":"edge-1")"), std::string::npos) << dry->body;
  EXPECT_NE(dry->body.find(R"("uid":")"), std::string::npos) << "defaulted as it would be stored: " << dry->body;
  auto big = http_request(port(), "POST", "/api/v1/namespaces/default/pods?dryRun=All", pod_json("big", "8"));
  ASSERT_TRUE(big && big->status == 201) << (big ? big->body : "");
  EXPECT_NE(
      big->body.find(
          R"("uvsched.io/dry-run-placement":"pending: 0/1 nodes are available: 1 Insufficient cpu. pod requests cpu 8, memory 128Mi; the largest free offer is cpu 2, memory 1024Mi on edge-1.")"),
      std::string::npos)
      << big->body;
  EXPECT_EQ(get_pod("web"), "404") << "a dry run stores nothing";
  auto bad = http_request(port(), "POST", "/api/v1/namespaces/default/pods?dryRun=Some", pod_json("web", "500m"));
  ASSERT_TRUE(bad && bad->status == 400) << (bad ? bad->body : "");
  EXPECT_NE(bad->body.find(R"(supported values: \"All\")"), std::string::npos) << bad->body;
  // The offer is still there for the real create.
  create(pod_json("web", "500m"));
  EXPECT_FALSE(task_id_of(agent.next("LAUNCH")).empty()) << daemon_->log();
  // A dry-run delete leaves the pod and sends no KILL.
  auto del = http_request(port(), "DELETE", "/api/v1/namespaces/default/pods/web?dryRun=All");
  ASSERT_TRUE(del && del->status == 200) << (del ? del->body : "");
  EXPECT_TRUE(lacks("web", "deletionTimestamp"));
}

// TASK_RUNNING's `data` is the pod's status as the agent sees it: it is
// merged into the stored status (the phase stays the scheduler's), and the
// rest of the pod is left as it was.
// The attacks of an agent on another agent's things (SECURITY.md): with its
// own credentials, edge-1 reports on, rescinds and squats what is edge-2's.
TEST_F(PodSchedulingTest, AnAgentActsOnlyOnItsOwnTasksAndOffers) {
  start();
  ScriptedAgent victim(port(), "edge-2");
  ASSERT_TRUE(victim.subscribe());
  ScriptedAgent attacker(port(), "edge-1");
  ASSERT_TRUE(attacker.subscribe());
  ASSERT_FALSE(victim.offer(2, 1024).empty());
  std::string task = launch_task(victim, "victim-pod");
  ASSERT_FALSE(task.empty()) << daemon_->log();
  victim.status(task, "TASK_RUNNING");
  ASSERT_TRUE(pod_shows("victim-pod", "\"phase\":\"Running\"")) << get_pod("victim-pod");

  // Its task's status, from the other agent: refused whole, nothing changes.
  for (const char* state : {"TASK_FAILED", "TASK_FINISHED", "TASK_RUNNING"}) {
    auto r = http_request(
        port(), "POST", "/v1/agents/edge-1/status",
        std::string(R"({"statuses":[{"task_id":{"value":")") + task + R"("},"state":")" + state + R"("}]})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << state << ": " << r->body;
  }
  EXPECT_NE(get_pod("victim-pod").find("\"phase\":\"Running\""), std::string::npos) << get_pod("victim-pod");
  EXPECT_EQ(of_type(attacker.events_before_marker(), "LAUNCH"), "")
      << "the victim's pod was re-queued onto the attacker";

  // Its offer: not the attacker's to rescind, and its ids are not the attacker's to take.
  std::string offer = victim.offer(1, 512);
  ASSERT_FALSE(offer.empty());
  auto rescind = http_request(port(), "DELETE", "/v1/agents/edge-1/offers/" + offer);
  ASSERT_TRUE(rescind);
  EXPECT_EQ(rescind->status, 403) << rescind->body;
  auto offers = http_request(port(), "GET", "/v1/offers");
  ASSERT_TRUE(offers);
  EXPECT_NE(offers->body.find(offer), std::string::npos) << "the victim's offer went: " << offers->body;
  const std::string res = resources(1, 64);
  auto squat =
      http_request(port(), "POST", "/v1/agents/edge-1/offers",
                   R"({"offers":[{"resources":)" + res + R"(},{"id":{"value":"edge-2-o5"},"resources":)" + res + "}]}");
  ASSERT_TRUE(squat);
  EXPECT_EQ(squat->status, 400) << squat->body;
  EXPECT_NE(squat->body.find("offers[1].id.value"), std::string::npos) << squat->body;
  // The batch was refused whole: the attacker's first offer was not taken either.
  offers = http_request(port(), "GET", "/v1/offers");
  EXPECT_EQ(offers->body.find("\"agent\":\"edge-1\""), std::string::npos) << offers->body;
  EXPECT_GE(metric_value(port(), "uvsched_agent_refusals_total{what=\"status\"}"), 3);
  EXPECT_GE(metric_value(port(), "uvsched_agent_refusals_total{what=\"rescind\"}"), 1);
}

// SUBSCRIBED names the framework the agent now works for, the one the
// scheduler registered (and keeps across restarts within its failover timeout).
TEST_F(PodSchedulingTest, SubscribedNamesTheFramework) {
  start();
  ASSERT_TRUE(daemon_->wait_for_log("event=framework_registered framework_id=")) << daemon_->log();
  std::string id = registered_framework_id(daemon_->log());
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  EXPECT_NE(agent.subscribed().find(R"("framework_id":{"value":")" + id + "\"}"), std::string::npos)
      << id << " in " << agent.subscribed();
}

// An agent whose tasks were launched for a framework that failed over past
// its timeout (another id than the current one) is told to shut them down;
// one that names the current framework, or none, is not.
TEST_F(PodSchedulingTest, AnAgentOfAStaleFrameworkIsToldToShutItDown) {
  start();
  ASSERT_TRUE(daemon_->wait_for_log("event=framework_registered")) << daemon_->log();
  ScriptedAgent stale(port(), "edge-1");
  ASSERT_TRUE(stale.subscribe("{}", "uvsched-1"));
  std::string shutdown = stale.subscribed().find("SHUTDOWN_FRAMEWORK") != std::string::npos
                             ? stale.subscribed()
                             : stale.next("SHUTDOWN_FRAMEWORK", 2s);
  EXPECT_NE(shutdown.find(R"("type":"SHUTDOWN_FRAMEWORK","framework_id":{"value":"uvsched-1"})"), std::string::npos)
      << shutdown;
  EXPECT_TRUE(daemon_->wait_for_log("event=stale_framework_shut_down agent=edge-1 framework_id=uvsched-1"));
  // The current framework's agent hears nothing of the kind.
  std::string current = registered_framework_id(daemon_->log());
  ScriptedAgent fresh(port(), "edge-2");
  ASSERT_TRUE(fresh.subscribe("{}", current));
  EXPECT_EQ(fresh.subscribed().find("SHUTDOWN_FRAMEWORK"), std::string::npos);
  EXPECT_EQ(of_type(fresh.events_before_marker(), "SHUTDOWN_FRAMEWORK"), "");
  // A malformed one is refused.
  auto bad = http_request(port(), "POST", "/v1/agents/edge-3/subscribe", R"({"framework_id":"uvsched-1"})");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400) << bad->body;
}

// An offer rescinded while the binding it was chosen for is being written is
// never launched on. Deterministic: a pod that fits is bound by its own create
// (the offer claimed in the create's handler), and the agent's rescind comes
// in the same packet, so it lands while the create's write is in flight.
// The binding is taken back, the pod waits pending, and a new offer runs it.
TEST_F(PodSchedulingTest, AnOfferRescindedWhileTheBindingIsWrittenIsNotLaunchedOn) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  std::string offer = agent.offer(1, 512);
  ASSERT_FALSE(offer.empty());
  const std::string pod = pod_json("web", "500m");
  RawConnection c;
  ASSERT_TRUE(c.connect(port()));
  ASSERT_TRUE(
      c.send("POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
             "Content-Length: " +
             std::to_string(pod.size()) + "\r\n\r\n" + pod + "DELETE /v1/agents/edge-1/offers/" + offer +
             " HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto created = c.read_response();
  auto rescinded = c.read_response();
  ASSERT_TRUE(created && rescinded);
  EXPECT_EQ(created->status, 201) << created->body;
  EXPECT_EQ(rescinded->status, 200) << rescinded->body;
  ASSERT_TRUE(daemon_->wait_for_log("event=launch_rolled_back pod=default/web offer=" + offer)) << daemon_->log();
  EXPECT_EQ(of_type(agent.events_before_marker(), "LAUNCH"), "") << "a task was launched on the rescinded offer";
  // Pending again and unbound (its condition says OfferGone until its next try says why it waits).
  EXPECT_TRUE(pod_shows("web", "\"phase\":\"Pending\"")) << get_pod("web");
  EXPECT_TRUE(lacks("web", "\"nodeName\""));
  EXPECT_TRUE(lacks("web", "uvsched.io/taskId"));
  EXPECT_GE(metric_value(port(), "uvsched_pod_placements_total{result=\"rolled_back\"}"), 1);
  // A new offer runs it.
  ASSERT_FALSE(agent.offer(1, 512).empty());
  EXPECT_FALSE(agent.next("LAUNCH").empty()) << daemon_->log();
}

// An offer nobody claimed is declined to its own agent when it expires: a
// DECLINE naming it, with Mesos' 5 s filter.
TEST_F(PodSchedulingTest, AnExpiredOfferIsDeclinedToItsAgent) {
  start({"--offer-ttl", "1"});
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  std::string offer = agent.offer(1, 512);
  ASSERT_FALSE(offer.empty());
  std::string decline = agent.next("DECLINE", 5s);
  ASSERT_FALSE(decline.empty()) << daemon_->log();
  EXPECT_NE(decline.find(R"("offer_ids":[{"value":")" + offer + "\"}]"), std::string::npos) << decline;
  EXPECT_NE(decline.find(R"("filters":{"refuse_seconds":5})"), std::string::npos) << decline;
}

// An executor's messages and losses are checked like every other body:
// junk is 400 naming the field, a well-formed one is taken and counted.
TEST_F(PodSchedulingTest, FrameworkMessagesAndExecutorLossesAreChecked) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  std::string task = run_task(agent, "web");
  ASSERT_FALSE(task.empty());
  struct Case {
    const char* path;
    const char* body;
    int status;
  } cases[] = {
      {"/v1/agents/edge-1/message", R"({"executor_id":{"value":"ex"},"data":"aGk="})", 200},
      {"/v1/agents/edge-1/message", "junk", 400},
      {"/v1/agents/edge-1/message", R"({"executor_id":"ex","data":"%%"})", 400},
      {"/v1/agents/edge-1/executor-lost", R"({"executor_id":{"value":"ex"},"status":137})", 200},
      {"/v1/agents/edge-1/executor-lost", R"({"status":"x"})", 400},
  };
  for (const auto& c : cases) {
    auto r = http_request(port(), "POST", c.path, c.body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, c.status) << c.path << " " << c.body << ": " << r->body;
  }
  EXPECT_TRUE(daemon_->wait_for_log("event=executor_lost agent=edge-1 executor=ex status=137")) << daemon_->log();
  // The executor loss has the agent asked about its tasks at once.
  std::string reconcile = agent.next("RECONCILE", 5s);
  EXPECT_NE(reconcile.find(task), std::string::npos) << reconcile << daemon_->log();
  // Both are kept for operators.
  auto seen = http_request(port(), "GET", "/v1/agents/edge-1");
  ASSERT_TRUE(seen && seen->status == 200);
  EXPECT_NE(seen->body.find(R"("messages":[{"executor_id":"ex","data":"aGk=","bytes":2,"truncated":false)"),
            std::string::npos)
      << seen->body;
  EXPECT_NE(seen->body.find(R"("executor_losses":[{"executor_id":"ex","status":137)"), std::string::npos) << seen->body;
  EXPECT_EQ(answered(http_request(port(), "GET", "/v1/agents/nobody")).status, 404);
  EXPECT_EQ(
      answered(http_request(port(), "POST", "/v1/agents/nobody/message", R"({"executor_id":"ex","data":""})")).status,
      404);
  // And messages go the other way: an operator's MESSAGE on the agent's stream.
  auto sent =
      http_request(port(), "POST", "/v1/messages/edge-1", R"({"executor_id":{"value":"ex"},"data":"cGluZw=="})");
  ASSERT_TRUE(sent);
  EXPECT_EQ(sent->status, 200) << sent->body;
  std::string message = agent.next("MESSAGE");
  EXPECT_NE(message.find(R"("executor_id":{"value":"ex"},"data":"cGluZw==")"), std::string::npos) << message;
  EXPECT_EQ(answered(http_request(port(), "POST", "/v1/messages/nobody", R"({"executor_id":"ex","data":""})")).status,
            404);
  EXPECT_EQ(answered(http_request(port(), "POST", "/v1/messages/edge-1", R"({"data":""})")).status, 400);
}

TEST_F(PodSchedulingTest, TheRunningStatusDataIsMergedIntoThePod) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  std::string task = launch_task(agent, "web");
  ASSERT_FALSE(task.empty()) << daemon_->log();
  ASSERT_TRUE(pod_shows("web", "\"nodeName\":\"edge-1\""));
  std::string before = get_pod("web");
  agent.status(task, "TASK_STARTING");
  agent.status(task, "TASK_RUNNING",
               base64_encode(R"({"phase":"Unknown","podIP":"10.0.0.7","conditions":[{"type":"Ready","status":"True"}],)"
                             R"("containerStatuses":[{"name":"c","ready":true,"restartCount":0}]})"));
  ASSERT_TRUE(pod_shows("web", "\"phase\":\"Running\"")) << get_pod("web");
  std::string after = get_pod("web");
  EXPECT_NE(after.find(R"("podIP":"10.0.0.7")"), std::string::npos) << after;
  // Conditions merge by type: the agent's Ready, and the scheduler's PodScheduled kept.
  EXPECT_NE(after.find(R"("conditions":[{"type":"Ready","status":"True"},{"type":"PodScheduled","status":"True")"),
            std::string::npos)
      << after;
  EXPECT_NE(after.find(R"("containerStatuses":[{"name":"c","ready":true,"restartCount":0}])"), std::string::npos)
      << after;
  // Everything before the status is as it was (the binding, the spec).
  EXPECT_EQ(after.substr(after.find("\"spec\""), after.find("\"status\"") - after.find("\"spec\"")),
            before.substr(before.find("\"spec\""), before.find("\"status\"") - before.find("\"spec\"")));
  // Not base64, not a JSON object, or too large: the status is refused with
  // the field named, and the pod stays as it was until a good one comes.
  ASSERT_FALSE(agent.offer(1, 512).empty());
  std::string task2 = launch_task(agent, "web2");
  ASSERT_FALSE(task2.empty()) << daemon_->log();
  std::string huge = "{";
  for (int i = 0; i < 60'000; ++i) huge += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":1";
  huge += "}";
  for (const std::string& junk : {std::string("%%%"), base64_encode("[1]"), base64_encode(huge)}) {
    auto r = http_request(
        daemon_->port(), "POST", "/v1/agents/edge-1/status",
        R"({"statuses":[{"task_id":{"value":")" + task2 + R"("},"state":"TASK_RUNNING","data":")" + junk + "\"}]}");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_NE(r->body.find("statuses[0].data"), std::string::npos) << r->body;
  }
  EXPECT_NE(get_pod("web2").find("\"phase\":\"Pending\""), std::string::npos) << get_pod("web2");
  agent.status(task2, "TASK_RUNNING");
  EXPECT_TRUE(pod_shows("web2", "\"phase\":\"Running\"")) << get_pod("web2");
}

// A running pod with a finalizer: the delete kills its task, and the pod
// stays (marked) once the task is gone, until its finalizer is removed.
TEST_F(PodSchedulingTest, AKilledPodStaysWhileAFinalizerHoldsIt) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  std::string task = launch_task(agent, "held");
  ASSERT_FALSE(task.empty()) << daemon_->log();
  agent.status(task, "TASK_RUNNING");
  ASSERT_TRUE(pod_shows("held", "\"phase\":\"Running\"")) << get_pod("held");
  auto fin = http_request(port(), "PATCH", "/api/v1/namespaces/default/pods/held",
                          R"({"metadata":{"finalizers":["example.com/keep"]}})",
                          "Content-Type: application/merge-patch+json\r\n");
  ASSERT_TRUE(fin && fin->status == 200) << (fin ? fin->body : "");

  auto del = http_request(port(), "DELETE", "/api/v1/namespaces/default/pods/held");
  ASSERT_TRUE(del && del->status == 200);
  EXPECT_NE(agent.next("KILL").find(task), std::string::npos);
  agent.status(task, "TASK_KILLED");
  // The task's end is what would have removed the pod. A status for the
  // task now draws a KILL (it is unknown): the end was handled, and the
  // store served its removal attempt before the read that follows.
  agent.status(task, "TASK_RUNNING");
  EXPECT_NE(agent.next("KILL").find(task), std::string::npos);
  std::string still = get_pod("held");
  EXPECT_NE(still.find("deletionTimestamp"), std::string::npos) << "a finalizer holds it: " << still;
  auto last = http_request(port(), "PATCH", "/api/v1/namespaces/default/pods/held",
                           R"({"metadata":{"finalizers":null}})", "Content-Type: application/merge-patch+json\r\n");
  ASSERT_TRUE(last && last->status == 200) << (last ? last->body : "");
  EXPECT_TRUE(pod_shows("held", "404")) << get_pod("held");
}

// With an offer that fits and nobody waiting, the create itself carries the
// binding: one write, and the answer to the create already names the node.
TEST_F(PodSchedulingTest, APodThatFitsWhenCreatedIsBoundByItsOwnCreate) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  auto created = http_request(port(), "POST", "/api/v1/namespaces/default/pods", pod_json("quick", "500m"));
  ASSERT_TRUE(created && created->status == 201) << (created ? created->body : "");
  EXPECT_NE(created->body.find("\"nodeName\":\"edge-1\""), std::string::npos) << created->body;
  std::string launch = agent.next("LAUNCH");
  ASSERT_FALSE(launch.empty()) << daemon_->log();
  std::string task = task_id_of(launch);
  EXPECT_NE(created->body.find("\"uvsched.io/taskId\":\"" + task + "\""), std::string::npos) << created->body;
  // No second write before the task's status: the stored pod is the created one.
  std::string rv = created->body.substr(created->body.find("\"resourceVersion\""), 30);
  EXPECT_NE(get_pod("quick").find(rv), std::string::npos) << rv << " vs " << get_pod("quick");
  agent.status(task, "TASK_RUNNING");
  EXPECT_TRUE(pod_shows("quick", "\"phase\":\"Running\"")) << get_pod("quick");
}

// A pod that waits for what no offer has (here a node selector no agent
// matches) backs off between its tries; a new pod that fits is not behind
// it (the queue's next turn would try the new one first too), so its create
// places it, binding and all, and the waiting pod goes on waiting. (That a
// create does not pass over a waiting pod that is due is
// PodSchedulerTest.ACreateThatFitsIsPlacedAtOnceUnlessAWaitingPodIsDue: a
// state too brief to reach through sockets.)
TEST_F(PodSchedulingTest, ANewPodIsPlacedByItsCreatePastAPodThatBacksOff) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  create(pod_json("waiting", "500m", R"(,"nodeSelector":{"zone":"nowhere"})"));
  ASSERT_TRUE(pod_shows("waiting", "didn't match Pod's node affinity/selector")) << get_pod("waiting");
  auto created = http_request(port(), "POST", "/api/v1/namespaces/default/pods", pod_json("later", "500m"));
  ASSERT_TRUE(created && created->status == 201);
  EXPECT_NE(created->body.find(R"("nodeName":"edge-1")"), std::string::npos) << created->body;
  std::string launch = agent.next("LAUNCH");
  EXPECT_NE(launch.find("\"name\":\"later\""), std::string::npos) << launch;
  EXPECT_NE(get_pod("waiting").find(R"("phase":"Pending")"), std::string::npos) << get_pod("waiting");
  EXPECT_EQ(get_pod("waiting").find("nodeName"), std::string::npos) << get_pod("waiting");
}

// A create that fails (the name is taken) launches nothing and leaves the
// pod that has the name, and its task, alone.
TEST_F(PodSchedulingTest, ACreateThatFailsLaunchesNothing) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(1, 512).empty());
  create(pod_json("web", "500m"));
  std::string task = task_id_of(agent.next("LAUNCH"));
  ASSERT_FALSE(task.empty());
  ASSERT_FALSE(agent.offer(1, 512).empty());
  auto again = http_request(port(), "POST", "/api/v1/namespaces/default/pods", pod_json("web", "500m"));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 409) << again->body;
  ASSERT_FALSE(agent.offer(1, 512).empty());
  create(pod_json("other", "500m"));
  std::string next = agent.next("LAUNCH");  // the failed create sent none before it
  EXPECT_NE(next.find("\"name\":\"other\""), std::string::npos) << next;
  agent.status(task, "TASK_RUNNING");  // the first web's task is still the pod's
  EXPECT_TRUE(pod_shows("web", "\"phase\":\"Running\"")) << get_pod("web");
  EXPECT_NE(get_pod("web").find(task), std::string::npos);
}

// A pod that fits no offer when created has had its first try: the create
// carries why (one write, not a create and then a condition), and the
// queue's next try, failing for the same reason, does not write it again.
TEST_F(PodSchedulingTest, APodThatFitsNowhereWhenCreatedSaysWhyInItsCreate) {
  start();
  ScriptedAgent agent(port(), "small");
  ASSERT_TRUE(agent.subscribe());
  std::string offer = agent.offer(1, 1024);
  ASSERT_FALSE(offer.empty());
  auto created = http_request(port(), "POST", "/api/v1/namespaces/default/pods", pod_json("big", "4"));
  ASSERT_TRUE(created && created->status == 201) << (created ? created->body : "");
  EXPECT_NE(created->body.find(R"("reason":"Unschedulable")"), std::string::npos) << created->body;
  EXPECT_NE(created->body.find("0/1 nodes are available: 1 Insufficient cpu. pod requests cpu 4"), std::string::npos)
      << created->body;
  std::string rv = created->body.substr(created->body.find("\"resourceVersion\""), 30);
  const std::string failed = "uvsched_pod_placements_total{result=\"unschedulable\"}";
  EXPECT_EQ(metric(failed), 1);  // the create was its first try
  auto until = std::chrono::steady_clock::now() + 10s;
  while (metric(failed) < 2 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
  ASSERT_GE(metric(failed), 2) << "never tried again";
  EXPECT_NE(get_pod("big").find(rv), std::string::npos) << "written again: " << rv << " vs " << get_pod("big");
  EXPECT_EQ(metric("uvsched_pods_pending"), 1);
  // A reason that changes is written.
  auto rescinded = http_request(port(), "DELETE", "/v1/agents/small/offers/" + offer);
  ASSERT_TRUE(rescinded && rescinded->status == 200);
  EXPECT_TRUE(pod_shows("big", "1 node(s) had no free offer", 15s)) << get_pod("big");
}

// After a restart a waiting pod's condition already says why: the new
// process's first try, failing for the same reason, does not write it again.
TEST_F(PodSchedulingTest, AnUnchangedReasonIsNotWrittenAgainAfterARestart) {
  start();
  auto created = http_request(port(), "POST", "/api/v1/namespaces/default/pods", pod_json("waits", "4"));
  ASSERT_TRUE(created && created->status == 201) << (created ? created->body : "");
  EXPECT_NE(created->body.find("there are no free offers"), std::string::npos) << created->body;
  std::string rv = created->body.substr(created->body.find("\"resourceVersion\""), 30);
  std::string data = daemon_->data_dir();
  ASSERT_EQ(daemon_->stop(SIGTERM), 0);

  DaemonProcess again({"--store", "embedded:" + data + "/data"});
  ASSERT_TRUE(again.start()) << again.log();
  ASSERT_TRUE(again.wait_ready()) << again.log();
  auto tries = [&] { return metric_value(again.port(), "uvsched_pod_placements_total{result=\"unschedulable\"}"); };
  // Two tries: a write the first one made would have landed by the second.
  auto until = std::chrono::steady_clock::now() + 10s;
  while (tries() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(10ms);
  ASSERT_GE(tries(), 2) << "the restarted scheduler did not try the pod twice";
  auto pod = http_request(again.port(), "GET", "/api/v1/namespaces/default/pods/waits");
  ASSERT_TRUE(pod);
  EXPECT_NE(pod->body.find(rv), std::string::npos) << "written again: " << rv << " vs " << pod->body;
  EXPECT_EQ(again.stop(SIGTERM), 0);
}

// A create bound in place but refused by the store (its namespace does not
// exist) used nothing: the offer it had claimed goes to the next pod.
TEST_F(PodSchedulingTest, ARefusedCreateGivesItsOfferBack) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  std::string offer = agent.offer(1, 512);
  ASSERT_FALSE(offer.empty());
  auto refused = http_request(port(), "POST", "/api/v1/namespaces/nowhere/pods", pod_json("lost", "500m"));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 404) << refused->body;
  EXPECT_NE(refused->body.find(R"(namespaces \"nowhere\" not found)"), std::string::npos) << refused->body;
  create(pod_json("next", "500m"));  // no new offer: the first one must still be there
  std::string launch = agent.next("LAUNCH", 5s);
  ASSERT_FALSE(launch.empty()) << "the refused create used the offer up";
  EXPECT_NE(launch.find("\"name\":\"next\""), std::string::npos) << launch;
  EXPECT_NE(launch.find("\"uvsched.io/offerId\":\"" + offer + "\""), std::string::npos) << launch;
}

// A create that would have queued its pod but is refused (the name belongs
// to a finished pod) leaves nothing queued.
TEST_F(PodSchedulingTest, ARefusedCreateLeavesNothingWaiting) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(1, 512).empty());
  create(pod_json("job", "500m", "", "Never"));
  std::string task = task_id_of(agent.next("LAUNCH"));
  ASSERT_FALSE(task.empty());
  agent.status(task, "TASK_RUNNING");
  agent.status(task, "TASK_FINISHED");
  ASSERT_TRUE(pod_shows("job", "\"phase\":\"Succeeded\"")) << get_pod("job");
  auto again = http_request(port(), "POST", "/api/v1/namespaces/default/pods", pod_json("job", "64"));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 409) << again->body;
  auto until = std::chrono::steady_clock::now() + 5s;
  while (metric("uvsched_pods_pending") != 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(metric("uvsched_pods_pending"), 0);
  EXPECT_NE(get_pod("job").find("\"phase\":\"Succeeded\""), std::string::npos) << get_pod("job");
}

TEST_F(PodSchedulingTest, APodThatFitsNowhereWaitsAndSaysWhy) {
  start();
  ScriptedAgent agent(port(), "small");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(1, 1024, R"({"begin":31000,"end":31010})").empty());
  create(pod_json("big", "4"));
  EXPECT_TRUE(pod_shows("big", "1 Insufficient cpu")) << get_pod("big");
  std::string p80 =
      R"({"metadata":{"name":"port80"},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80,"hostPort":80}]}]}})";
  create(p80);
  EXPECT_TRUE(pod_shows("port80", "1 node(s) didn't have free ports for the requested pod ports")) << get_pod("port80");
  EXPECT_TRUE(lacks("big", "nodeName"));
  // kubectl describe says why too: its Events section reads the pod's events.
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string out;
  EXPECT_EQ(run_shell(kubectl + "describe pod big", &out), 0) << out;
  EXPECT_NE(out.find("FailedScheduling"), std::string::npos) << out;
  EXPECT_NE(out.find("1 Insufficient cpu"), std::string::npos) << out;
  EXPECT_EQ(out.find("free ports"), std::string::npos) << "another pod's event: " << out;
  out.clear();
  create(pod_json("fits", "500m"));
  ASSERT_FALSE(agent.next("LAUNCH").empty());
  EXPECT_EQ(run_shell(kubectl + "get events --field-selector involvedObject.name=fits", &out), 0) << out;
  EXPECT_NE(out.find("Successfully assigned default/fits to small"), std::string::npos) << out;
  EXPECT_EQ(out.find("FailedScheduling"), std::string::npos) << out;
  // What `kubectl events --for pod/big` (kubectl 1.26 and later) selects by,
  // and the other fields the API server lets an event list select.
  auto events = http_request(port(), "GET",
                             "/api/v1/namespaces/default/events?fieldSelector=involvedObject.kind%3DPod,"
                             "involvedObject.apiVersion%3Dv1,involvedObject.name%3Dbig,source%3Duvsched");
  ASSERT_TRUE(events);
  EXPECT_EQ(events->status, 200) << events->body;
  EXPECT_NE(events->body.find("1 Insufficient cpu"), std::string::npos) << events->body;
  EXPECT_EQ(events->body.find("port80"), std::string::npos) << events->body;
  for (const char* field : {"reportingComponent%3Duvsched", "involvedObject.fieldPath%3D", "type%3DWarning"}) {
    events = http_request(port(), "GET", std::string("/api/v1/events?fieldSelector=") + field);
    ASSERT_TRUE(events);
    EXPECT_EQ(events->status, 200) << field << ": " << events->body;
  }
  events = http_request(port(), "GET", "/api/v1/events?fieldSelector=source%3Dkubelet");
  ASSERT_TRUE(events && events->status == 200);
  EXPECT_EQ(events->body.find("involvedObject"), std::string::npos) << "no kubelet here: " << events->body;
}

TEST_F(PodSchedulingTest, AnOfferThatFitsWakesAWaitingPodBeforeItsBackoffEnds) {
  start({"--offer-ttl", "30"});  // north's offer outlives the four failures (1 + 2 + 4 s)
  ScriptedAgent north(port(), "north");
  ASSERT_TRUE(north.subscribe(R"({"zone":"north"})"));
  ASSERT_FALSE(north.offer(4, 4096).empty());
  create(pod_json("south-only", "500m", R"(,"nodeSelector":{"zone":"south"})"));
  // Let it fail four times: its next try is 8 s after the fourth.
  auto until = std::chrono::steady_clock::now() + 30s;
  while (metric("uvsched_pod_placements_total{result=\"unschedulable\"}") < 4 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  // The fourth failure came at most one poll before now: its backoff ends
  // no sooner than ~8 s from here. Timed from here, not from the offer (a
  // late poll would move the offer towards the backoff's end).
  auto failed = std::chrono::steady_clock::now();
  ASSERT_GE(metric("uvsched_pod_placements_total{result=\"unschedulable\"}"), 4);
  EXPECT_NE(get_pod("south-only").find("didn't match Pod's node affinity/selector"), std::string::npos);
  ScriptedAgent south(port(), "south");
  ASSERT_TRUE(south.subscribe(R"({"zone":"south"})"));
  ASSERT_FALSE(south.offer(4, 4096).empty());
  std::string launch = south.next("LAUNCH", 7s);
  ASSERT_FALSE(launch.empty()) << "not woken by the offer";
  EXPECT_LT(std::chrono::steady_clock::now() - failed, 4s) << "launched by the backoff's end, not by the offer";
  EXPECT_TRUE(pod_shows("south-only", "\"nodeName\":\"south\""));
}

// A task that fails or is killed goes through the pod's restart policy, as
// an agent's loss does: Never fails the pod, Always and OnFailure put it back
// in the queue unbound, its restart counted, and it runs again on the next
// offer; a failed one only after a crash-loop back-off, as kubectl shows.
TEST_F(PodSchedulingTest, AFailedOrKilledTaskGoesThroughTheRestartPolicy) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  for (int i = 0; i < 3; ++i) ASSERT_FALSE(agent.offer(1, 512).empty());
  create(pod_json("never", "500m", "", "Never"));
  create(pod_json("always", "500m", "", "Always"));
  create(pod_json("onfailure", "500m", "", "OnFailure"));
  std::map<std::string, std::string> task;  // pod name -> task id
  for (int i = 0; i < 3; ++i) {
    std::string launch = agent.next("LAUNCH");
    ASSERT_FALSE(launch.empty()) << daemon_->log();
    std::string name = task_name_of(launch);  // namespace/name
    task[name.substr(name.find('/') + 1)] = task_id_of(launch);
  }
  for (const auto& [name, id] : task) agent.status(id, "TASK_RUNNING");
  for (const auto& [name, id] : task) ASSERT_TRUE(pod_shows(name, "\"phase\":\"Running\"")) << name;
  auto failed_at = std::chrono::steady_clock::now();
  agent.status(task["never"], "TASK_FAILED");
  agent.status(task["always"], "TASK_KILLED");
  agent.status(task["onfailure"], "TASK_FAILED");
  EXPECT_TRUE(pod_shows("never", "\"phase\":\"Failed\"")) << get_pod("never");
  for (const char* name : {"always", "onfailure"}) {
    EXPECT_TRUE(pod_shows(name, "\"phase\":\"Pending\"")) << get_pod(name);
    EXPECT_TRUE(lacks(name, "\"nodeName\""));
    EXPECT_TRUE(pod_shows(name, "\"restartCount\":1,")) << get_pod(name);
  }
  // Put back in the queue, the killed one runs again on a new offer at once;
  // the failed one backs off 10 s first, as a kubelet restarts a crashed
  // container, and kubectl says so.
  ASSERT_FALSE(agent.offer(1, 512).empty());
  ASSERT_FALSE(agent.offer(1, 512).empty());
  EXPECT_EQ(task_name_of(agent.next("LAUNCH")), "default/always");
  std::string out;
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  EXPECT_EQ(run_shell(kubectl + "get pod onfailure", &out), 0) << out;
  EXPECT_NE(out.find("onfailure   0/1     CrashLoopBackOff   1 "), std::string::npos) << out;
  EXPECT_EQ(of_type(agent.events_before_marker(), "LAUNCH"), "") << "started again within its back-off";
  std::string launch;
  for (auto until = failed_at + 15s; launch.empty() && std::chrono::steady_clock::now() < until;) {
    ASSERT_FALSE(agent.offer(1, 512).empty());
    launch = agent.next("LAUNCH", 1s);
  }
  EXPECT_EQ(task_name_of(launch), "default/onfailure");
  EXPECT_GE(std::chrono::steady_clock::now() - failed_at, 10s) << "started again before its back-off ended";
  EXPECT_EQ(of_type(agent.events_before_marker(), "LAUNCH"), "");
}

// spec.activeDeadlineSeconds, enforced as a kubelet does: a pod active
// longer than that since its startTime has its task killed and fails
// (DeadlineExceeded, which kubectl prints), its restart policy
// notwithstanding. kubectl patch may lower a running pod's deadline, which
// the scheduler follows, but not raise it (the API server's 422).
TEST_F(PodSchedulingTest, APodPastItsActiveDeadlineFailsAndKubectlSaysSo) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  create(pod_json("quick", "500m", R"(,"activeDeadlineSeconds":1)", "OnFailure"));
  std::string launch = agent.next("LAUNCH");
  ASSERT_FALSE(launch.empty()) << daemon_->log();
  std::string quick = task_id_of(launch);
  EXPECT_TRUE(pod_shows("quick", R"("startTime":")")) << get_pod("quick");
  agent.status(quick, "TASK_RUNNING");
  std::string kill = agent.next("KILL");
  EXPECT_NE(kill.find(quick), std::string::npos) << kill << daemon_->log();
  agent.status(quick, "TASK_KILLED");
  EXPECT_TRUE(pod_shows("quick", R"("reason":"DeadlineExceeded")")) << get_pod("quick");
  EXPECT_TRUE(pod_shows("quick", R"("phase":"Failed")")) << get_pod("quick");
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string out;
  EXPECT_EQ(run_shell(kubectl + "get pod quick", &out), 0) << out;
  EXPECT_NE(out.find("quick   0/1     DeadlineExceeded   0 "), std::string::npos) << out;

  ASSERT_FALSE(agent.offer(2, 1024).empty());
  create(pod_json("slow", "500m", R"(,"activeDeadlineSeconds":3600)", "Never"));
  launch = agent.next("LAUNCH");
  std::string slow = task_id_of(launch);
  ASSERT_EQ(task_name_of(launch), "default/slow") << launch << daemon_->log();
  agent.status(slow, "TASK_RUNNING");
  ASSERT_TRUE(pod_shows("slow", R"("phase":"Running")")) << get_pod("slow");
  EXPECT_NE(run_shell(kubectl + R"(patch pod slow -p '{"spec":{"activeDeadlineSeconds":7200}}')", &out), 0);
  EXPECT_NE(out.find("must be less than or equal to previous value"), std::string::npos) << out;
  EXPECT_EQ(run_shell(kubectl + R"(patch pod slow -p '{"spec":{"activeDeadlineSeconds":1}}')", &out), 0) << out;
  kill = agent.next("KILL");
  EXPECT_NE(kill.find(slow), std::string::npos) << kill << daemon_->log();
  agent.status(slow, "TASK_KILLED");
  EXPECT_TRUE(pod_shows("slow", R"("reason":"DeadlineExceeded")")) << get_pod("slow");
  EXPECT_EQ(of_type(agent.events_before_marker(), "LAUNCH"), "") << "a pod past its deadline was started again";
}

// kubectl set image on a running pod: a kubelet restarts the container,
// whatever the restart policy. Here the task is killed and the pod, placed
// again, is launched with the new image; a label change restarts nothing.
TEST_F(PodSchedulingTest, ANewImageRestartsThePodsTask) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(1, 512).empty());
  create(pod_json("web", "500m", "", "Never"));
  std::string launch = agent.next("LAUNCH");
  ASSERT_NE(launch.find(R"("image":"i")"), std::string::npos) << launch << daemon_->log();
  std::string first = task_id_of(launch);
  agent.status(first, "TASK_RUNNING");
  ASSERT_TRUE(pod_shows("web", "\"phase\":\"Running\"")) << get_pod("web");
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string out;
  ASSERT_EQ(run_shell(kubectl + "label pod web tier=edge", &out), 0) << out;
  EXPECT_EQ(of_type(agent.events_before_marker(), "KILL"), "") << "the label change killed it";
  ASSERT_EQ(run_shell(kubectl + "set image pod/web c=nginx:1.26", &out), 0) << out;
  EXPECT_NE(out.find("pod/web image updated"), std::string::npos) << out;
  std::string kill = agent.next("KILL");
  EXPECT_NE(kill.find(first), std::string::npos) << kill << daemon_->log();
  agent.status(first, "TASK_KILLED");
  EXPECT_TRUE(pod_shows("web", "\"phase\":\"Pending\"")) << get_pod("web");
  ASSERT_FALSE(agent.offer(1, 512).empty());
  launch = agent.next("LAUNCH");
  EXPECT_NE(launch.find(R"("image":"nginx:1.26")"), std::string::npos) << launch << daemon_->log();
  std::string second = task_id_of(launch);
  EXPECT_NE(second, first);
  agent.status(second, "TASK_RUNNING");
  EXPECT_TRUE(pod_shows("web", "\"uvsched.io/taskId\":\"" + second + "\"")) << get_pod("web");
  EXPECT_TRUE(pod_shows("web", "\"phase\":\"Running\"")) << get_pod("web");
}

// An agent whose stream drops and that subscribes again within
// --agent-timeout keeps its tasks: its pods stay Running, nothing is lost
// or killed, and its tasks are reconciled.
TEST_F(PodSchedulingTest, AnAgentBackWithinTheTimeoutKeepsItsTasks) {
  start({"--agent-timeout", "5"});
  auto agent = std::make_unique<ScriptedAgent>(port(), "edge-1");
  ASSERT_TRUE(agent->subscribe());
  ASSERT_FALSE(agent->offer(1, 512).empty());
  std::string task = run_task(*agent, "web");
  ASSERT_FALSE(task.empty());
  agent->hang_up();
  agent = std::make_unique<ScriptedAgent>(port(), "edge-1");
  ASSERT_TRUE(agent->subscribe());
  std::string reconcile = agent->next("RECONCILE");
  EXPECT_NE(reconcile.find(task), std::string::npos) << reconcile;
  agent->status(task, "TASK_RUNNING");
  EXPECT_EQ(of_type(agent->events_before_marker(), "KILL"), "");
  EXPECT_NE(get_pod("web").find("\"phase\":\"Running\""), std::string::npos) << get_pod("web");
  EXPECT_TRUE(daemon_->wait_for_log("event=agent_reregistered agent=edge-1")) << daemon_->log();
}

// Deleting a pod that is still pending (no task yet) removes it at once, and
// no offer that comes later launches it.
TEST_F(PodSchedulingTest, DeletingAPendingPodRemovesItAndLaunchesNothing) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  create(pod_json("waiting", "500m"));
  ASSERT_TRUE(pod_shows("waiting", "no free offer")) << get_pod("waiting");
  auto del = http_request(port(), "DELETE", "/api/v1/namespaces/default/pods/waiting");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 200) << del->body;
  EXPECT_EQ(answered(http_request(port(), "GET", "/api/v1/namespaces/default/pods/waiting")).status, 404);
  ASSERT_FALSE(agent.offer(1, 512).empty());
  EXPECT_EQ(of_type(agent.events_before_marker(), "LAUNCH"), "") << "a deleted pending pod was launched";
}

// Implicit reconciliation end to end: every --reconcile-interval each agent is
// asked about all its tasks (an empty RECONCILE).
TEST_F(PodSchedulingTest, ImplicitReconciliationAsksEveryAgentAboutAllItsTasks) {
  start({"--reconcile-interval", "1"});
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  std::string implicit;
  auto until = std::chrono::steady_clock::now() + 10s;
  while (implicit.empty() && std::chrono::steady_clock::now() < until) {
    std::string r = agent.next("RECONCILE", 3s);
    if (r.find(R"("tasks":[])") != std::string::npos) implicit = r;
  }
  EXPECT_FALSE(implicit.empty()) << daemon_->log();
}

TEST_F(PodSchedulingTest, ALostAgentsPodsFailOrRequeueByRestartPolicy) {
  start({"--agent-timeout", "0.3"});
  ScriptedAgent agent(port(), "flaky");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(1, 512).empty());
  ASSERT_FALSE(agent.offer(1, 512).empty());
  create(pod_json("once", "500m", "", "Never"));
  create(pod_json("always", "500m", "", "Always"));
  std::string l1 = agent.next("LAUNCH"), l2 = agent.next("LAUNCH");
  ASSERT_FALSE(l1.empty() || l2.empty());
  agent.status(task_id_of(l1), "TASK_RUNNING");
  agent.status(task_id_of(l2), "TASK_RUNNING");
  ASSERT_TRUE(pod_shows("once", "\"phase\":\"Running\""));
  ASSERT_TRUE(pod_shows("always", "\"phase\":\"Running\""));
  agent.hang_up();
  EXPECT_TRUE(pod_shows("once", "\"phase\":\"Failed\"")) << get_pod("once");
  EXPECT_TRUE(pod_shows("always", "\"phase\":\"Pending\"")) << get_pod("always");
  EXPECT_TRUE(lacks("always", "nodeName"));
  auto agents = http_request(port(), "GET", "/v1/agents");
  EXPECT_EQ(agents->body.find("flaky"), std::string::npos);
}

// The failover timeout counts while uvsched is down: back later than it, it
// is a new framework (the old id's last-alive time says so, whatever the
// store's leases did meanwhile), and an agent that re-subscribes with the old
// id is told to shut that framework's tasks down.
TEST_F(PodSchedulingTest, BackAfterTheFailoverTimeoutIsANewFramework) {
  start({"--failover-timeout", "1"});
  ASSERT_TRUE(daemon_->wait_for_log("event=framework_registered"));
  std::string old_id = registered_framework_id(daemon_->log());
  std::string data = daemon_->data_dir();
  ASSERT_EQ(daemon_->stop(SIGTERM), 0);
  // Down for longer than the timeout: the passing of time is what is tested.
  std::this_thread::sleep_for(1500ms);
  DaemonProcess again({"--store", "embedded:" + data + "/data", "--failover-timeout", "1"});
  ASSERT_TRUE(again.start()) << again.log();
  ASSERT_TRUE(again.wait_for_log("event=framework_failed_over framework_id=" + old_id)) << again.log();
  ASSERT_TRUE(again.wait_for_log("event=framework_registered framework_id=")) << again.log();
  EXPECT_EQ(again.log().find("event=framework_registered framework_id=" + old_id), std::string::npos) << again.log();
  ScriptedAgent agent(again.port(), "edge-1");
  ASSERT_TRUE(agent.subscribe("{}", old_id));
  std::string events = agent.subscribed() + agent.next("SHUTDOWN_FRAMEWORK", 2s);
  EXPECT_NE(events.find(R"("type":"SHUTDOWN_FRAMEWORK","framework_id":{"value":")" + old_id + "\"}"), std::string::npos)
      << events;
  EXPECT_EQ(again.stop(SIGTERM), 0);
}

TEST_F(PodSchedulingTest, ARestartRecoversRunningTasksAndReconcilesThem) {
  start();
  ScriptedAgent agent(port(), "steady");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  std::string task = launch_task(agent, "keeper");
  agent.status(task, "TASK_RUNNING");
  ASSERT_TRUE(pod_shows("keeper", "\"phase\":\"Running\""));
  ASSERT_TRUE(daemon_->wait_for_log("event=framework_registered"));
  std::string first_log = daemon_->log();
  std::string id = first_log.substr(first_log.find("framework_id=") + 13);
  id = id.substr(0, id.find('\n'));
  std::string data = daemon_->data_dir();
  ASSERT_EQ(daemon_->stop(SIGTERM), 0);

  // Same store, new process: the task comes back from the pod's annotations.
  DaemonProcess again({"--store", "embedded:" + data + "/data"});
  ASSERT_TRUE(again.start()) << again.log();
  ASSERT_TRUE(again.wait_for_log("event=framework_reregistered framework_id=" + id)) << again.log();
  // (Logged just after the line above: waited for, not read at once, which
  // lost the race once under ASan.)
  EXPECT_TRUE(again.wait_for_log("tasks_recovered=1")) << again.log();
  ScriptedAgent back(again.port(), "steady");
  ASSERT_TRUE(back.subscribe());
  std::string reconcile = back.next("RECONCILE");
  EXPECT_NE(reconcile.find(task), std::string::npos) << reconcile;  // explicit: asked about its task
  back.status(task, "TASK_RUNNING");
  auto pod = http_request(again.port(), "GET", "/api/v1/namespaces/default/pods/keeper");
  ASSERT_TRUE(pod);
  EXPECT_NE(pod->body.find("\"phase\":\"Running\""), std::string::npos);
  EXPECT_EQ(of_type(back.events_before_marker(), "KILL"), "");  // a known task is not killed
  EXPECT_EQ(again.stop(SIGTERM), 0);
}

TEST_F(PodSchedulingTest, AgentsAreNodesForKubectl) {
  start();
  ScriptedAgent agent(port(), "edge-7");
  ASSERT_TRUE(agent.subscribe(R"({"zone":"north"})"));
  auto nodes = http_request(port(), "GET", "/api/v1/nodes");
  ASSERT_TRUE(nodes);
  EXPECT_NE(nodes->body.find(R"("name":"edge-7")"), std::string::npos) << nodes->body;
  EXPECT_NE(nodes->body.find(R"("zone":"north")"), std::string::npos);
  EXPECT_NE(nodes->body.find(R"("type":"Ready","status":"True")"), std::string::npos);
  EXPECT_NE(nodes->body.find(R"("memory":"8192Mi")"), std::string::npos);
  EXPECT_NE(nodes->body.find(R"("capacity":{"cpu":"8",)"), std::string::npos)
      << "a quantity as the API server writes it (not 8.000000): " << nodes->body;
  auto one = http_request(port(), "GET", "/api/v1/nodes/edge-7");
  EXPECT_EQ(one->status, 200);
  EXPECT_EQ(answered(http_request(port(), "GET", "/api/v1/nodes/nope")).status, 404);
  std::string out;
  EXPECT_EQ(run_shell("kubectl --server http://127.0.0.1:" + std::to_string(port()) + " get nodes", &out), 0) << out;
  EXPECT_NE(out.find("edge-7"), std::string::npos) << out;
  EXPECT_NE(out.find("Ready"), std::string::npos) << out;
  // One node by name is a one-row Table too, not just its name and age.
  out.clear();  // run_shell appends
  EXPECT_EQ(run_shell("kubectl --server http://127.0.0.1:" + std::to_string(port()) + " get node edge-7", &out), 0)
      << out;
  EXPECT_NE(out.find("STATUS"), std::string::npos) << out;
  EXPECT_NE(out.find("Ready"), std::string::npos) << out;
}

// A pod created with scheduling gates waits, said to be gated, though an
// offer fits it; once its gates are all removed it is placed.
TEST_F(PodSchedulingTest, AGatedPodWaitsUntilItsGatesAreRemoved) {
  start();
  ScriptedAgent agent(port(), "edge-g");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  create(pod_json("held", "500m", R"(,"schedulingGates":[{"name":"example.com/a"},{"name":"example.com/b"}])"));
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string out;
  ASSERT_EQ(run_shell(kubectl + "get pod held", &out), 0) << out;
  EXPECT_NE(out.find("SchedulingGated"), std::string::npos) << out;
  EXPECT_EQ(of_type(agent.events_before_marker(), "LAUNCH"), "");
  out.clear();  // one gate of two removed: still held
  ASSERT_EQ(run_shell(kubectl + R"(patch pod held --type=json -p '[{"op":"remove","path":"/spec/schedulingGates/0"}]')",
                      &out),
            0)
      << out;
  EXPECT_EQ(of_type(agent.events_before_marker(), "LAUNCH"), "");
  out.clear();
  ASSERT_EQ(
      run_shell(kubectl + R"(patch pod held --type=json -p '[{"op":"remove","path":"/spec/schedulingGates"}]')", &out),
      0)
      << out;
  std::string launch = agent.next("LAUNCH");
  EXPECT_NE(launch.find("default/held"), std::string::npos) << launch << daemon_->log();
  EXPECT_TRUE(pod_shows("held", "\"nodeName\":\"edge-g\"")) << get_pod("held");
  EXPECT_TRUE(lacks("held", "SchedulingGated"));
}

// kubectl label node: the label is laid over what the agent subscribed with,
// a waiting pod that selects it is placed there at once, a label taken off
// (one the agent subscribed with too) is gone from the node and from
// placement, and the edits outlive a restart and the agent's re-subscribing.
TEST_F(PodSchedulingTest, KubectlLabelNodeSteersPodsThatSelectIt) {
  start();
  ScriptedAgent agent(port(), "edge-l");
  ASSERT_TRUE(agent.subscribe(R"({"disk":"ssd"})"));
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string out;
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  create(pod_json("zoned", "500m", R"(,"nodeSelector":{"zone":"a"})"));
  // The same asked as a required node affinity (zone a or b, 4 cores or more).
  create(pod_json("affine", "500m",
                  R"(,"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{)"
                  R"("nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["b","a"]},)"
                  R"({"key":"cores","operator":"Gt","values":["3"]}]}]}}})"));
  ASSERT_TRUE(pod_shows("zoned", "didn't match Pod's node affinity/selector")) << get_pod("zoned");
  ASSERT_TRUE(pod_shows("affine", "didn't match Pod's node affinity/selector")) << get_pod("affine");
  ASSERT_EQ(run_shell(kubectl + "label node edge-l zone=a cores=8", &out), 0) << out;
  EXPECT_NE(out.find("node/edge-l labeled"), std::string::npos) << out;
  std::set<std::string> launched;  // woken by the live offers, not their backoff
  for (int i = 0; i < 2; ++i) launched.insert(task_name_of(agent.next("LAUNCH")));
  EXPECT_EQ(launched, (std::set<std::string>{"default/zoned", "default/affine"})) << daemon_->log();
  // What uvsched does not weigh is taken, and kubectl says so.
  TempDir dir;
  std::ofstream(dir.path() + "/spread.yaml")
      << "apiVersion: v1\nkind: Pod\nmetadata:\n  name: spread\nspec:\n  containers:\n  - name: c\n    image: i\n"
         "  affinity:\n    podAntiAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n"
         "      - weight: 10\n        podAffinityTerm:\n          labelSelector:\n            matchLabels: {app: web}\n"
         "          topologyKey: kubernetes.io/hostname\n";
  out.clear();
  ASSERT_EQ(run_shell(kubectl + "create -f " + dir.path() + "/spread.yaml", &out), 0) << out;
  EXPECT_NE(out.find("Warning: spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution is a "
                     "preference, which is not weighed"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("pod/spread created"), std::string::npos) << out;
  ASSERT_FALSE(agent.offer(1, 512).empty());
  EXPECT_NE(agent.next("LAUNCH").find("default/spread"), std::string::npos) << daemon_->log();
  // An affinity no agent meets is taken, and waits.
  ASSERT_FALSE(agent.offer(1, 512).empty());
  create(
      pod_json("far", "500m",
               R"(,"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{)"
               R"("nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["x"]}]}]}}})"));
  EXPECT_TRUE(pod_shows("far", "didn't match Pod's node affinity/selector")) << get_pod("far");
  out.clear();
  ASSERT_EQ(run_shell(kubectl + "get nodes --show-labels", &out), 0) << out;
  EXPECT_NE(out.find("disk=ssd"), std::string::npos) << out;
  EXPECT_NE(out.find("zone=a"), std::string::npos) << out;
  // The agent's own label taken off: a pod that selects it waits.
  out.clear();
  ASSERT_EQ(run_shell(kubectl + "label node edge-l disk-", &out), 0) << out;
  EXPECT_NE(out.find("node/edge-l "), std::string::npos) << out;  // unlabeled (1.32), labeled (1.20)
  EXPECT_NE(out.find("labeled"), std::string::npos) << out;
  ASSERT_FALSE(agent.offer(1, 512).empty());
  create(pod_json("ssd", "500m", R"(,"nodeSelector":{"disk":"ssd"})"));
  EXPECT_TRUE(pod_shows("ssd", "didn't match Pod's node affinity/selector")) << get_pod("ssd");
  EXPECT_EQ(of_type(agent.events_before_marker(), "LAUNCH"), "");
  // A label the API server would refuse is refused the same way.
  auto bad = http_request(port(), "PATCH", "/api/v1/nodes/edge-l", R"({"metadata":{"labels":{"zone":"a b"}}})",
                          "Content-Type: application/merge-patch+json\r\n");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 422) << bad->body;
  EXPECT_NE(bad->body.find("metadata.labels"), std::string::npos) << bad->body;

  // The daemon restarts on the same store and the agent subscribes again
  // with its own labels: the edits hold.
  std::string data = daemon_->data_dir();
  ASSERT_EQ(daemon_->stop(SIGTERM), 0);
  DaemonProcess again({"--store", "embedded:" + data + "/data"});
  ASSERT_TRUE(again.start()) << again.log();
  ASSERT_TRUE(again.wait_ready()) << again.log();
  ScriptedAgent back(again.port(), "edge-l");
  ASSERT_TRUE(back.subscribe(R"({"disk":"ssd"})"));
  auto node = http_request(again.port(), "GET", "/api/v1/nodes/edge-l");
  ASSERT_TRUE(node && node->status == 200);
  EXPECT_NE(node->body.find(R"("zone":"a")"), std::string::npos) << node->body;
  EXPECT_EQ(node->body.find(R"("disk")"), std::string::npos) << node->body;
  EXPECT_EQ(again.stop(SIGTERM), 0);
}

// Required inter-pod anti-affinity and affinity and DoNotSchedule topology
// spread, applied with kubectl, as kube-scheduler filters them: replicas
// that must not share a host each get their own agent and the one too many
// waits, in kube-scheduler's words, until one goes; a pod that must share a
// zone with another goes there; pods spread over zones by at most maxSkew.
// The agents offer in the order a1, a2, b1, so first-fit alone would have
// put all of each kind on a1.
TEST_F(PodSchedulingTest, KubectlPlacesPodsByInterPodAffinityAndTopologySpread) {
  start();
  std::map<std::string, std::unique_ptr<ScriptedAgent>> agents;
  for (const auto& [host, zone] : {std::pair{"a1", "a"}, std::pair{"a2", "a"}, std::pair{"b1", "b"}}) {
    agents[host] = std::make_unique<ScriptedAgent>(port(), host);
    ASSERT_TRUE(agents[host]->subscribe(std::string(R"({"zone":")") + zone + R"("})"));
    ASSERT_EQ(agents[host]->offer_many(8, 1, 1024), 8);
  }
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  TempDir dir;
  auto apply = [&](const std::string& file, const std::string& yaml) {
    std::ofstream(dir.path() + "/" + file) << yaml;
    std::string out;
    EXPECT_EQ(run_shell(kubectl + "apply -f " + dir.path() + "/" + file, &out), 0) << out;
    EXPECT_EQ(out.find("Warning"), std::string::npos) << out;
  };
  auto pod = [](const std::string& name, const std::string& app, const std::string& spec) {
    return "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  labels: {app: " + app +
           "}\nspec:\n  containers:\n  - {name: c, image: i, resources: {requests: {cpu: 100m}}}\n" + spec;
  };
  // Where each pod was launched, by name, from the agents' LAUNCH events.
  std::map<std::string, std::string> host_of;
  std::map<std::string, std::string> task_of;
  auto collect = [&](size_t launches) {
    auto until = std::chrono::steady_clock::now() + 10s;
    while (host_of.size() < launches && std::chrono::steady_clock::now() < until) {
      for (auto& [host, a] : agents) {
        std::string launch = a->next("LAUNCH", 50ms);
        if (launch.empty()) continue;
        std::string name = task_name_of(launch).substr(8);  // (past "default/")
        host_of[name] = host;
        task_of[name] = task_id_of(launch);
      }
    }
    return host_of.size() == launches;
  };

  const std::string apart =
      "  affinity:\n    podAntiAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "      - labelSelector: {matchLabels: {app: web}}\n        topologyKey: kubernetes.io/hostname\n";
  apply("web.yaml", pod("web-1", "web", apart) + pod("web-2", "web", apart) + pod("web-3", "web", apart) +
                        pod("web-4", "web", apart));
  ASSERT_TRUE(collect(3)) << daemon_->log();
  std::set<std::string> hosts;
  for (const auto& [name, host] : host_of) hosts.insert(host);
  EXPECT_EQ(hosts.size(), 3u) << "one web pod per agent";
  std::string waiting;
  for (int i = 1; i <= 4; ++i) {
    if (!host_of.count("web-" + std::to_string(i))) waiting = "web-" + std::to_string(i);
  }
  ASSERT_FALSE(waiting.empty());
  EXPECT_TRUE(pod_shows(waiting, "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."))
      << get_pod(waiting);
  // One goes: the one waiting takes its agent.
  const std::string gone = host_of.begin()->first, freed = host_of.begin()->second;
  std::string out;
  ASSERT_EQ(run_shell(kubectl + "delete pod " + gone + " --wait=false", &out), 0) << out;
  ASSERT_FALSE(agents[freed]->next("KILL").empty());
  agents[freed]->status(task_of[gone], "TASK_KILLED");
  ASSERT_TRUE(pod_shows(gone, "404")) << get_pod(gone);
  ASSERT_EQ(agents[freed]->offer_many(1, 1, 1024), 1);  // (the agent offers what the task held)
  host_of.erase(gone);
  ASSERT_TRUE(collect(3)) << get_pod(waiting);
  EXPECT_EQ(host_of[waiting], freed);

  // The placed pods' anti-affinity binds pods that have none: another web
  // pod, without terms of its own, fits no agent.
  apply("plain.yaml", pod("web-plain", "web", ""));
  EXPECT_TRUE(pod_shows("web-plain", "3 node(s) didn't satisfy existing pods anti-affinity rules"))
      << get_pod("web-plain");

  // Affinity: a cache with the db's zone.
  apply("db.yaml", pod("db", "db", "  nodeSelector: {zone: b}\n"));
  ASSERT_TRUE(collect(4)) << get_pod("db");
  EXPECT_EQ(host_of["db"], "b1");
  apply("cache.yaml", pod("cache", "cache",
                          "  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                          "      - labelSelector: {matchLabels: {app: db}}\n        topologyKey: zone\n"));
  ASSERT_TRUE(collect(5)) << get_pod("cache");
  EXPECT_EQ(host_of["cache"], "b1");

  // Spread over zones, at most one apart.
  const std::string spread =
      "  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: zone\n    whenUnsatisfiable: DoNotSchedule\n"
      "    labelSelector: {matchLabels: {app: api}}\n";
  apply("api.yaml", pod("api-1", "api", spread) + pod("api-2", "api", spread) + pod("api-3", "api", spread) +
                        pod("api-4", "api", spread));
  ASSERT_TRUE(collect(9)) << daemon_->log();
  int in_a = 0, in_b = 0;
  for (int i = 1; i <= 4; ++i) (host_of["api-" + std::to_string(i)] == "b1" ? in_b : in_a) += 1;
  EXPECT_EQ(in_a, 2);
  EXPECT_EQ(in_b, 2);
  // A bad constraint is refused as the API server refuses it.
  std::ofstream(dir.path() + "/bad.yaml") << pod("bad", "api",
                                                 "  topologySpreadConstraints:\n  - maxSkew: 0\n    topologyKey: zone\n"
                                                 "    whenUnsatisfiable: DoNotSchedule\n");
  out.clear();
  EXPECT_NE(run_shell(kubectl + "apply -f " + dir.path() + "/bad.yaml", &out), 0) << out;
  EXPECT_NE(out.find("spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero"),
            std::string::npos)
      << out;
}

// kubectl cordon / uncordon on an agent: new pods pass it by while it is
// cordoned, saying so in kube-scheduler's words; uncordoned, the waiting pod
// is launched there; the cordon outlives a restart; nothing else of a node
// may be changed.
TEST_F(PodSchedulingTest, KubectlCordonKeepsNewPodsOffAnAgentUntilUncordoned) {
  start();
  ScriptedAgent agent(port(), "edge-c");
  ASSERT_TRUE(agent.subscribe());
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string out;
  ASSERT_EQ(run_shell(kubectl + "cordon edge-c", &out), 0) << out;
  EXPECT_NE(out.find("node/edge-c cordoned"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(run_shell(kubectl + "get nodes", &out), 0) << out;
  EXPECT_NE(out.find("Ready,SchedulingDisabled"), std::string::npos) << out;
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  create(pod_json("waits", "500m"));
  EXPECT_TRUE(pod_shows("waits", "1 node(s) were unschedulable")) << get_pod("waits");
  out.clear();
  ASSERT_EQ(run_shell(kubectl + "uncordon edge-c", &out), 0) << out;
  std::string launch = agent.next("LAUNCH");
  EXPECT_NE(launch.find("default/waits"), std::string::npos) << launch << daemon_->log();

  // Cordoned again, the daemon restarts on the same store: still cordoned.
  out.clear();
  ASSERT_EQ(run_shell(kubectl + "cordon edge-c", &out), 0) << out;
  std::string data = daemon_->data_dir();
  ASSERT_EQ(daemon_->stop(SIGTERM), 0);
  DaemonProcess again({"--store", "embedded:" + data + "/data"});
  ASSERT_TRUE(again.start()) << again.log();
  ASSERT_TRUE(again.wait_ready()) << again.log();
  ScriptedAgent back(again.port(), "edge-c");
  ASSERT_TRUE(back.subscribe());
  auto node = http_request(again.port(), "GET", "/api/v1/nodes/edge-c");
  ASSERT_TRUE(node && node->status == 200);
  EXPECT_NE(node->body.find(R"("spec":{"unschedulable":true,"taints":[{"key":"node.kubernetes.io/unschedulable")"),
            std::string::npos)
      << node->body;
  EXPECT_EQ(again.stop(SIGTERM), 0);
}

// kubectl describe node shows the agent's heartbeat as its node's Lease (as
// a kubelet's, in kube-node-lease) and when its Ready condition last changed,
// why, and its hostname; kubectl get leases lists them. Once the agent's
// stream closes, the node says so and its Lease is no longer renewed.
TEST_F(PodSchedulingTest, KubectlDescribeNodeShowsTheAgentsLeaseAndWhenItsReadinessChanged) {
  start({"--agent-timeout", "60"});
  ScriptedAgent agent(port(), "edge-l");
  ASSERT_TRUE(agent.subscribe());
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string out;
  ASSERT_EQ(run_shell(kubectl + "describe node edge-l", &out), 0) << out;
  EXPECT_EQ(out.find("Failed to get lease"), std::string::npos) << out;
  EXPECT_NE(out.find("HolderIdentity:  edge-l"), std::string::npos) << out;
  EXPECT_EQ(out.find("0001"), std::string::npos) << "no zero times: " << out;
  EXPECT_NE(out.find("AgentConnected   the agent is subscribed"), std::string::npos) << out;
  EXPECT_NE(out.find("Hostname:  edge-l"), std::string::npos) << out;
  auto node = http_request(port(), "GET", "/api/v1/nodes/edge-l");
  ASSERT_TRUE(node && node->status == 200);
  EXPECT_NE(node->body.find(R"("resourceVersion":")"), std::string::npos) << "as in the list: " << node->body;
  out.clear();
  ASSERT_EQ(run_shell(kubectl + "get nodes -o wide", &out), 0) << out;
  EXPECT_NE(out.find("INTERNAL-IP"), std::string::npos) << "kube's wide columns: " << out;
  EXPECT_NE(out.find("uvsched   <none>        <none>        <unknown>"), std::string::npos) << out;
  out.clear();
  ASSERT_EQ(run_shell(kubectl + "get leases -n kube-node-lease", &out), 0) << out;
  EXPECT_NE(out.find("edge-l   edge-l"), std::string::npos) << out;
  auto lease = http_request(port(), "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-l");
  ASSERT_TRUE(lease && lease->status == 200);
  EXPECT_NE(lease->body.find(R"("leaseDurationSeconds":60)"), std::string::npos) << lease->body;
  auto renew_time = [](const std::string& body) {
    size_t at = body.find(R"("renewTime":")");
    return at == std::string::npos ? std::string() : body.substr(at + 13, body.find('"', at + 13) - at - 13);
  };
  std::string renewed = renew_time(lease->body);
  EXPECT_EQ(renewed.size(), 27u) << "MicroTime: " << lease->body;
  auto other = http_request(port(), "GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/edge-l");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404) << other->body;
  auto create = http_request(port(), "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
                             R"({"metadata":{"name":"x"}})");
  ASSERT_TRUE(create);
  EXPECT_EQ(create->status, 405) << "a view of the agents: " << create->body;

  agent.hang_up();
  auto until = std::chrono::steady_clock::now() + 10s;
  do {
    out.clear();
    run_shell(kubectl + "describe node edge-l", &out);
    if (out.find("AgentDisconnected") != std::string::npos) break;
    std::this_thread::sleep_for(20ms);
  } while (std::chrono::steady_clock::now() < until);
  EXPECT_NE(out.find("Ready   Unknown"), std::string::npos) << out;
  EXPECT_NE(out.find("it is lost unless it subscribes again within --agent-timeout (60s)"), std::string::npos) << out;
  lease = http_request(port(), "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/edge-l");
  ASSERT_TRUE(lease && lease->status == 200);
  EXPECT_EQ(renew_time(lease->body), renewed) << "not renewed while the stream is closed";
}

// kubectl taint: a pod that does not tolerate a NoSchedule taint is kept off
// the agent, and says so; one that tolerates it is placed; kubectl shows the
// taint beside a cordon's and keeps it through uncordon and a restart; once
// it is taken off, the waiting pod is placed. A taint the API server would
// refuse is a 422 naming the field.
TEST_F(PodSchedulingTest, KubectlTaintKeepsOffPodsThatDoNotTolerateIt) {
  start();
  ScriptedAgent agent(port(), "edge-t");
  ASSERT_TRUE(agent.subscribe());
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string out;
  ASSERT_EQ(run_shell(kubectl + "taint node edge-t dedicated=gpu:NoSchedule", &out), 0) << out;
  EXPECT_NE(out.find("node/edge-t tainted"), std::string::npos) << out;
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  create(pod_json("plain", "500m"));
  EXPECT_TRUE(pod_shows("plain", "1 node(s) had untolerated taints")) << get_pod("plain");
  create(pod_json("trainer", "500m",
                  R"(,"tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"}])"));
  std::string launch = agent.next("LAUNCH");
  EXPECT_EQ(task_name_of(launch), "default/trainer") << launch << daemon_->log();
  out.clear();
  EXPECT_EQ(run_shell(kubectl + "describe node edge-t", &out), 0) << out;
  EXPECT_NE(out.find("dedicated=gpu:NoSchedule"), std::string::npos) << out;
  ASSERT_EQ(run_shell(kubectl + "cordon edge-t", &out), 0) << out;
  out.clear();
  EXPECT_EQ(run_shell(kubectl + "get node edge-t -o jsonpath='{.spec.taints[*].key}'", &out), 0) << out;
  EXPECT_NE(out.find("node.kubernetes.io/unschedulable dedicated"), std::string::npos) << out;
  ASSERT_EQ(run_shell(kubectl + "uncordon edge-t", &out), 0) << out;
  auto bad =
      http_request(port(), "PATCH", "/api/v1/nodes/edge-t",
                   R"({"spec":{"taints":[{"key":"a","effect":"NoSchedule"},{"key":"a","effect":"NoSchedule"}]}})",
                   "Content-Type: application/merge-patch+json\r\n");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 422) << bad->body;
  EXPECT_NE(bad->body.find("taints must be unique by key and effect pair"), std::string::npos) << bad->body;

  // The daemon restarts on the same store: still tainted.
  std::string data = daemon_->data_dir();
  ASSERT_EQ(daemon_->stop(SIGTERM), 0);
  DaemonProcess again({"--store", "embedded:" + data + "/data"});
  ASSERT_TRUE(again.start()) << again.log();
  ASSERT_TRUE(again.wait_ready()) << again.log();
  ScriptedAgent back(again.port(), "edge-t");
  ASSERT_TRUE(back.subscribe());
  kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(again.port()) + " ";
  out.clear();
  EXPECT_EQ(run_shell(kubectl + "get node edge-t -o jsonpath='{.spec.taints}'", &out), 0) << out;
  EXPECT_NE(out.find(R"("key":"dedicated")"), std::string::npos) << out;
  EXPECT_EQ(out.find("unschedulable"), std::string::npos) << out;
  ASSERT_FALSE(back.offer(2, 1024).empty());
  EXPECT_EQ(of_type(back.events_before_marker(), "LAUNCH"), "") << "placed on a tainted agent";
  ASSERT_EQ(run_shell(kubectl + "taint node edge-t dedicated=gpu:NoSchedule-", &out), 0) << out;
  EXPECT_NE(out.find("node/edge-t untainted"), std::string::npos) << out;
  launch = back.next("LAUNCH");
  EXPECT_EQ(task_name_of(launch), "default/plain") << launch << again.log();
  EXPECT_EQ(again.stop(SIGTERM), 0);
}

// kubectl taint with NoExecute: a running pod that does not tolerate it is
// deleted (its task killed first), as the taint manager deletes it; one that
// tolerates it stays.
TEST_F(PodSchedulingTest, KubectlTaintNoExecuteEvictsRunningPodsThatDoNotTolerateIt) {
  start();
  ScriptedAgent agent(port(), "edge-x");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(1, 1024).empty());
  std::string plain = run_task(agent, "plain");
  ASSERT_FALSE(agent.offer(1, 1024).empty());
  create(
      pod_json("calm", "500m", R"(,"tolerations":[{"key":"maintenance","operator":"Exists","effect":"NoExecute"}])"));
  std::string calm = task_id_of(agent.next("LAUNCH"));
  agent.status(calm, "TASK_RUNNING");
  ASSERT_TRUE(pod_shows("calm", R"("phase":"Running")")) << get_pod("calm");
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string out;
  ASSERT_EQ(run_shell(kubectl + "taint node edge-x maintenance=now:NoExecute", &out), 0) << out;
  std::string kill = agent.next("KILL");
  EXPECT_NE(kill.find(plain), std::string::npos) << kill << daemon_->log();
  // Until its task is gone, the pod says why it goes, as the taint manager marks it.
  out.clear();
  ASSERT_EQ(
      run_shell(kubectl + "get pod plain -o jsonpath='{.status.conditions[?(@.type==\"DisruptionTarget\")].reason}'",
                &out),
      0)
      << out;
  EXPECT_EQ(out, "DeletionByTaintManager");
  ASSERT_EQ(run_shell(kubectl + "get events --field-selector reason=TaintManagerEviction", &out), 0) << out;
  EXPECT_NE(out.find("Marking for deletion Pod default/plain"), std::string::npos) << out;
  agent.status(plain, "TASK_KILLED");
  EXPECT_TRUE(pod_shows("plain", "404")) << get_pod("plain");
  EXPECT_EQ(of_type(agent.events_before_marker(), "KILL"), "") << "the pod that tolerates it was evicted";
  EXPECT_TRUE(lacks("calm", "deletionTimestamp"));
}

// Agents are kept hashed by name; listings still come in name order.
TEST_F(PodSchedulingTest, AgentsAndNodesAreListedByName) {
  start();
  std::vector<std::unique_ptr<ScriptedAgent>> agents;
  for (const char* host : {"node-m", "node-c", "node-x", "node-a", "node-q", "node-b", "node-k", "node-e"}) {
    agents.push_back(std::make_unique<ScriptedAgent>(port(), host));
    ASSERT_TRUE(agents.back()->subscribe());
  }
  for (const char* path : {"/v1/agents", "/api/v1/nodes"}) {
    auto list = http_request(port(), "GET", path);
    ASSERT_TRUE(list && list->status == 200);
    size_t last = 0;
    for (const char* host : {"node-a", "node-b", "node-c", "node-e", "node-k", "node-m", "node-q", "node-x"}) {
      size_t at = list->body.find(std::string("\"") + host + "\"");
      ASSERT_NE(at, std::string::npos) << path << " " << host;
      EXPECT_GT(at, last) << path << " " << host << " out of order: " << list->body;
      last = at;
    }
  }
}

TEST_F(PodSchedulingTest, LiveOffersCapMlParallelismWhenAFunctionSizeIsSet) {
  start({"--function-size", "1,512", "--recompute-interval", "0.05", "--metrics-poll-interval", "0"});
  ScriptedAgent agent(port(), "gpu-box");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(3, 4096).empty());  // room for 3 functions of 1 cpu / 512 MiB
  // A cordoned agent's room is not counted.
  ScriptedAgent cordoned(port(), "cordoned-box");
  ASSERT_TRUE(cordoned.subscribe());
  auto cordon = http_request(port(), "PATCH", "/api/v1/nodes/cordoned-box", R"({"spec":{"unschedulable":true}})",
                             "Content-Type: application/strategic-merge-patch+json\r\n");
  ASSERT_TRUE(cordon && cordon->status == 200) << (cordon ? cordon->body : "");
  ASSERT_FALSE(cordoned.offer(4, 4096).empty());
  // Shares are cached between recompute ticks: retry until a job sees the new cap.
  std::string train = R"({"model_type":"m","batch_size":8,"epochs":2,"dataset":"d","function_name":"f",)"
                      R"("options":{"default_parallelism":8}})";
  std::string body;
  auto until = std::chrono::steady_clock::now() + 10s;
  std::string id;
  while (std::chrono::steady_clock::now() < until) {
    auto r = http_request(port(), "POST", "/train", train);
    ASSERT_TRUE(r && r->status == 200);
    id = r->body;
    body = answered(http_request(port(), "GET", "/v1/jobs/" + id)).body;
    if (body.find("\"cap\":3") != std::string::npos) break;
    http_request(port(), "DELETE", "/finish/" + id);
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_NE(body.find("\"parallelism\":3"), std::string::npos) << body;
  EXPECT_NE(body.find("create+clamped"), std::string::npos) << body;
}

// A status for a task unknown at start: while its pod is not there, a
// TASK_STAGING waits (its binding may be on its way) rather than being
// killed; once another writer stores the pod with annotations naming the
// task on this agent, the task is adopted and the pod follows it.
TEST_F(PodSchedulingTest, AnUnknownTaskIsAdoptedWhenItsPodAppears) {
  start();
  ScriptedAgent agent(port(), "edge-1");
  ASSERT_TRUE(agent.subscribe());
  const std::string task = "pod.default.later.00000000002a";
  agent.status(task, "TASK_STAGING");
  ASSERT_TRUE(daemon_->wait_for_log("event=unknown_task_waiting task=" + task)) << daemon_->log();
  EXPECT_EQ(of_type(agent.events_before_marker(), "KILL"), "")
      << "a staging task was killed before its pod could appear";
  // Another writer (a peer, a restore) stores the pod, bound, naming the task.
  auto created = http_request(port(), "POST", "/api/v1/namespaces/default/pods",
                              R"({"metadata":{"name":"later","annotations":{"uvsched.io/taskId":")" + task +
                                  R"(","uvsched.io/bindingHost":"edge-1"}},"spec":{"nodeName":"edge-1",)"
                                  R"("containers":[{"name":"c","image":"i"}]}})");
  ASSERT_TRUE(created && created->status == 201) << (created ? created->body : "");
  agent.status(task, "TASK_RUNNING");
  EXPECT_TRUE(pod_shows("later", "\"phase\":\"Running\"")) << get_pod("later") << daemon_->log();
  EXPECT_EQ(of_type(agent.events_before_marker(), "KILL"), "") << "the adopted task was killed";
}

TEST_F(PodSchedulingTest, AStatusForAnUnknownTaskGetsItKilled) {
  start();
  ScriptedAgent agent(port(), "stray");
  ASSERT_TRUE(agent.subscribe());
  agent.status("nobody-knows-me", "TASK_RUNNING");
  EXPECT_NE(agent.next("KILL").find("nobody-knows-me"), std::string::npos);
}

TEST_F(PodSchedulingTest, BadAgentInputIs400AndOffersNeedASubscription) {
  start();
  auto r = http_request(port(), "POST", "/v1/agents/ghost/offers", R"({"offers":[{"resources":[]}]})");
  EXPECT_EQ(r->status, 409);
  ScriptedAgent agent(port(), "real");
  ASSERT_TRUE(agent.subscribe());
  for (const char* body :
       {"{}", R"({"offers":[{}]})", R"({"offers":[{"resources":[{"name":"cpus","scalar":{"value":-1}}]}]})",
        R"({"offers":[{"resources":[{"name":"ports","ranges":{"range":[{"begin":9,"end":2}]}}]}]})"}) {
    auto bad = http_request(port(), "POST", "/v1/agents/real/offers", body);
    ASSERT_TRUE(bad);
    EXPECT_EQ(bad->status, 400) << body << " " << bad->body;
  }
  auto st = http_request(port(), "POST", "/v1/agents/real/status", R"({"statuses":[{"state":"TASK_RUNNING"}]})");
  EXPECT_EQ(st->status, 400);
  auto offers = http_request(port(), "GET", "/v1/offers");
  EXPECT_NE(offers->body.find("\"offers\":[]"), std::string::npos) << offers->body;
  // An agent is a Node: its name a DNS subdomain, its labels a Node's.
  for (const std::string& name : std::vector<std::string>{"a%20b", "x%2Fy", "..%2F..", "a%00b", "%E2%98%83", "Upper",
                                                          "-edge", std::string(254, 'a')}) {
    auto refused = http_request(port(), "POST", "/v1/agents/" + name + "/subscribe", "{}");
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 400) << name << " " << refused->body;
    EXPECT_NE(refused->body.find(R"("field":"host")"), std::string::npos) << refused->body;
  }
  for (const char* labels :
       {R"({"labels":{"bad key!":"v"}})",
        R"({"labels":{"k":"a value longer than sixty-three characters, which no label value may be"}})",
        R"({"labels":{"k":"-starts-with-a-dash"}})"}) {
    auto refused = http_request(port(), "POST", "/v1/agents/labelled/subscribe", labels);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 400) << labels << " " << refused->body;
    EXPECT_NE(refused->body.find(R"("field":"labels")"), std::string::npos) << refused->body;
  }
  auto nodes = http_request(port(), "GET", "/api/v1/nodes");
  ASSERT_TRUE(nodes);
  EXPECT_EQ(nodes->body.find(R"("name":"real")"), nodes->body.rfind(R"("name":")"))
      << "only the agent named well: " << nodes->body;
}

// kubectl get nodes -w and get namespaces -w (which the list answered, and
// kubectl could not decode): each shows what there is, then every change.
// kubectl drain: the agent is cordoned, then its pods are evicted through the
// Eviction API (kubectl finds it in discovery; it deleted them before, and
// only with --force): each is marked DisruptionTarget=EvictionByEvictionAPI,
// its task killed, and drain waits until the pod is gone.
// A deleted pod's task is killed with the pod's grace period, as a kubelet
// gives its containers terminationGracePeriodSeconds: the KILL carries it
// (Mesos' kill_policy) and the pod shows it (deletionGracePeriodSeconds,
// and a deletionTimestamp that far ahead). kubectl delete --grace-period
// shortens it; --grace-period=0 --force removes the object at once while the
// task is still killed.
TEST_F(PodSchedulingTest, KubectlDeleteGivesTheTaskItsGracePeriod) {
  start();
  ScriptedAgent agent(port(), "edge-g");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(2, 2048).empty());
  create(pod_json("slow", "500m", R"(,"terminationGracePeriodSeconds":45)"));
  std::string slow = task_id_of(agent.next("LAUNCH"));
  agent.status(slow, "TASK_RUNNING");
  ASSERT_TRUE(pod_shows("slow", R"("phase":"Running")")) << get_pod("slow");
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string out;
  ASSERT_EQ(run_shell(kubectl + "delete pod slow --wait=false", &out), 0) << out;
  std::string kill = agent.next("KILL");
  EXPECT_NE(kill.find(slow), std::string::npos) << kill;
  EXPECT_NE(kill.find(R"("kill_policy":{"grace_period":{"nanoseconds":45000000000}})"), std::string::npos) << kill;
  EXPECT_TRUE(pod_shows("slow", R"("deletionGracePeriodSeconds":45)")) << get_pod("slow");
  // Asked again, sooner: the agent hears the shorter grace.
  ASSERT_EQ(run_shell(kubectl + "delete pod slow --grace-period=3 --wait=false", &out), 0) << out;
  kill = agent.next("KILL");
  EXPECT_NE(kill.find(R"("nanoseconds":3000000000)"), std::string::npos) << kill;
  EXPECT_TRUE(pod_shows("slow", R"("deletionGracePeriodSeconds":3)")) << get_pod("slow");
  agent.status(slow, "TASK_KILLED");
  EXPECT_TRUE(pod_shows("slow", "404")) << get_pod("slow");

  ASSERT_FALSE(agent.offer(1, 1024).empty());
  std::string stuck = run_task(agent, "stuck");
  out.clear();
  ASSERT_EQ(run_shell(kubectl + "delete pod stuck --grace-period=0 --force", &out), 0) << out;
  EXPECT_EQ(get_pod("stuck"), "404") << "a forced delete does not wait for the task";
  kill = agent.next("KILL");
  EXPECT_NE(kill.find(stuck), std::string::npos) << kill;
  EXPECT_NE(kill.find(R"("nanoseconds":0)"), std::string::npos) << kill;
  agent.status(stuck, "TASK_KILLED");  // (its end finds the object gone: nothing to do)
  ASSERT_FALSE(agent.offer(1, 1024).empty());
  create(pod_json("after", "500m"));
  EXPECT_FALSE(task_id_of(agent.next("LAUNCH")).empty()) << daemon_->log();
}

TEST_F(PodSchedulingTest, KubectlDrainEvictsThePodsOnAnAgent) {
  start();
  ScriptedAgent agent(port(), "edge-d");
  ASSERT_TRUE(agent.subscribe());
  ASSERT_FALSE(agent.offer(1, 1024).empty());
  std::string task = run_task(agent, "web");
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string log = daemon_->data_dir() + "/drain.out", out;
  ASSERT_EQ(run_shell("timeout 60 " + kubectl + "drain edge-d --force -v=6 > " + log + " 2>&1 & echo $!", &out), 0);
  struct StopDrain {
    pid_t pid;
    ~StopDrain() { ::kill(pid, SIGTERM); }
  } stop{static_cast<pid_t>(std::atol(out.c_str()))};
  std::string kill = agent.next("KILL");
  EXPECT_NE(kill.find(task), std::string::npos) << kill << file_shows(log, "never");
  EXPECT_EQ(file_shows(log, "/api/v1/namespaces/default/pods/web/eviction 201 Created"), "");
  out.clear();
  ASSERT_EQ(
      run_shell(kubectl + "get pod web -o jsonpath='{.status.conditions[?(@.type==\"DisruptionTarget\")].reason}'",
                &out),
      0)
      << out;
  EXPECT_EQ(out, "EvictionByEvictionAPI");
  agent.status(task, "TASK_KILLED");
  EXPECT_EQ(file_shows(log, "pod/web evicted"), "");  // (then 1.32 says "node/edge-d drained", 1.20 "evicted")
  EXPECT_TRUE(pod_shows("web", "404")) << get_pod("web");
  out.clear();
  ASSERT_EQ(run_shell(kubectl + "get node edge-d", &out), 0) << out;
  EXPECT_NE(out.find("SchedulingDisabled"), std::string::npos) << out;
}

// kubectl create pdb, then kubectl drain of two agents whose pods the budget
// covers: the first pod goes (two healthy, one needed), the second is refused
// with 429 while it is the last, and kubectl drain tries again every 5 s
// until a new pod elsewhere makes room; then it goes too.
TEST_F(PodSchedulingTest, KubectlDrainWaitsForThePodsDisruptionBudget) {
  start();
  ScriptedAgent a(port(), "edge-pa"), b(port(), "edge-pb"), c(port(), "edge-pc");
  ASSERT_TRUE(a.subscribe() && b.subscribe() && c.subscribe());
  ASSERT_FALSE(a.offer(1, 1024).empty());
  std::string first = run_task(a, "web-1");
  ASSERT_FALSE(b.offer(1, 1024).empty());
  std::string second = run_task(b, "web-2");
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string out;
  // kubectl create pdb sends it as protobuf (`notin` a value no pod has selects
  // every pod). kubectl before 1.21 makes a policy/v1beta1 one, which a 1.25+
  // API server, as uvsched, no longer serves: it fails as it would there.
  int created = run_shell(kubectl + "create pdb web --selector='app notin (none)' --min-available=1", &out);
  if (out.find("policy/v1beta1") != std::string::npos) {
    EXPECT_NE(out.find(R"(no matches for kind "PodDisruptionBudget" in version "policy/v1beta1")"), std::string::npos)
        << out;
    out.clear();
    created = run_shell(
        "printf '%s' '{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":"
        "{\"name\":\"web\"},\"spec\":{\"minAvailable\":1,\"selector\":{}}}' | " +
            kubectl + "apply -f -",
        &out);
  }
  ASSERT_EQ(created, 0) << out;
  auto budget_shows = [&](const std::string& text) {
    auto until = std::chrono::steady_clock::now() + 10s;
    std::string body;
    while (std::chrono::steady_clock::now() < until) {
      auto r = http_request(port(), "GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web");
      body = r ? r->body : "";
      if (body.find(text) != std::string::npos) return std::string();
      std::this_thread::sleep_for(20ms);
    }
    return body;
  };
  EXPECT_EQ(budget_shows(R"("disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2)"), "");
  out.clear();
  ASSERT_EQ(run_shell(kubectl + "get pdb web", &out), 0) << out;
  EXPECT_NE(out.find("web    1               N/A               1                     "), std::string::npos) << out;

  std::string log = daemon_->data_dir() + "/drain-a.out";
  out.clear();
  ASSERT_EQ(run_shell("timeout 60 " + kubectl + "drain edge-pa --force > " + log + " 2>&1 & echo $!", &out), 0);
  struct StopDrain {
    std::vector<pid_t> pids;
    ~StopDrain() {
      for (pid_t p : pids) ::kill(p, SIGTERM);
    }
  } stop{{static_cast<pid_t>(std::atol(out.c_str()))}};
  std::string kill = a.next("KILL");
  EXPECT_NE(kill.find(first), std::string::npos) << kill << file_shows(log, "never");
  a.status(first, "TASK_KILLED");
  EXPECT_EQ(file_shows(log, "pod/web-1 evicted"), "");
  EXPECT_EQ(budget_shows(R"("disruptionsAllowed":0,"currentHealthy":1,"desiredHealthy":1,"expectedPods":1)"), "");

  std::string log_b = daemon_->data_dir() + "/drain-b.out";
  out.clear();
  ASSERT_EQ(run_shell("timeout 60 " + kubectl + "drain edge-pb --force > " + log_b + " 2>&1 & echo $!", &out), 0);
  stop.pids.push_back(static_cast<pid_t>(std::atol(out.c_str())));
  EXPECT_EQ(file_shows(log_b, "Cannot evict pod as it would violate the pod's disruption budget."), "");
  EXPECT_TRUE(pod_shows("web-2", R"("phase":"Running")")) << get_pod("web-2");
  EXPECT_TRUE(lacks("web-2", "DisruptionTarget"));
  // Room elsewhere: a third pod runs, and the budget lets the second go.
  ASSERT_FALSE(c.offer(1, 1024).empty());
  run_task(c, "web-3");
  kill = b.next("KILL", 20s);  // (kubectl drain tries again after 5 s)
  EXPECT_NE(kill.find(second), std::string::npos) << kill << file_shows(log_b, "never");
  b.status(second, "TASK_KILLED");
  EXPECT_EQ(file_shows(log_b, "pod/web-2 evicted"), "");
  EXPECT_TRUE(pod_shows("web-2", "404")) << get_pod("web-2");
}

TEST_F(PodSchedulingTest, KubectlWatchesNodesNamespacesAndEvents) {
  start();
  std::string kubectl = "kubectl --server http://127.0.0.1:" + std::to_string(port()) + " ";
  std::string nodes_log = daemon_->data_dir() + "/nodes.out", ns_log = daemon_->data_dir() + "/ns.out",
              events_log = daemon_->data_dir() + "/events.out";
  std::string out;
  // (`timeout` bounds a hang; the watchers are stopped below once they have shown all.)
  ASSERT_EQ(run_shell("timeout 60 " + kubectl + "get nodes -w > " + nodes_log + " 2>&1 & echo $! ; timeout 60 " +
                          kubectl + "get namespaces -w > " + ns_log + " 2>&1 & echo $! ; timeout 60 " + kubectl +
                          "get events -w > " + events_log + " 2>&1 & echo $!",
                      &out),
            0);
  std::vector<pid_t> watchers;
  for (size_t at = 0, nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1) {
    watchers.push_back(static_cast<pid_t>(std::atol(out.substr(at, nl - at).c_str())));
  }
  ASSERT_EQ(watchers.size(), 3u) << out;
  struct StopWatchers {
    std::vector<pid_t> pids;
    ~StopWatchers() {
      for (pid_t p : pids) ::kill(p, SIGTERM);
    }
  } stop{watchers};
  auto shows = file_shows;
  EXPECT_EQ(shows(ns_log, "kube-system", 1), "");
  ScriptedAgent agent(port(), "edge-w");
  ASSERT_TRUE(agent.subscribe());
  EXPECT_EQ(shows(nodes_log, "edge-w   Ready ", 1), "");
  // Events, made from the pods: a pod that fits nowhere, then one placed.
  create(pod_json("toobig", "64"));
  EXPECT_EQ(shows(events_log, "FailedScheduling", 1), "");
  EXPECT_EQ(shows(events_log, "pod/toobig", 1), "");
  ASSERT_FALSE(agent.offer(2, 1024).empty());
  create(pod_json("fits", "500m"));
  std::string launch = agent.next("LAUNCH");
  EXPECT_EQ(task_name_of(launch), "default/fits") << launch;
  EXPECT_EQ(shows(events_log, "Successfully assigned default/fits to edge-w", 1), "");
  EXPECT_EQ(run_shell(kubectl + "delete pod toobig", &out), 0) << out;
  EXPECT_EQ(shows(events_log, "pod/toobig", 2), "") << "its event's end is shown too";
  agent.status(task_id_of(launch), "TASK_RUNNING");
  ASSERT_TRUE(pod_shows("fits", R"("phase":"Running")")) << get_pod("fits");
  EXPECT_EQ(run_shell(kubectl + "cordon edge-w", &out), 0) << out;
  EXPECT_EQ(shows(nodes_log, "edge-w   Ready,SchedulingDisabled", 1), "");
  EXPECT_EQ(run_shell(kubectl + "create namespace team-w", &out), 0) << out;
  EXPECT_EQ(shows(ns_log, "team-w", 1), "");
  EXPECT_EQ(run_shell(kubectl + "delete namespace team-w", &out), 0) << out;
  EXPECT_EQ(shows(ns_log, "team-w", 2), "") << "the delete is shown too";
  // A pod's change that leaves its events as they were (TASK_RUNNING) sent none again.
  std::ifstream in(events_log);
  std::string events(std::istreambuf_iterator<char>(in), {});
  size_t assigned = 0;
  for (size_t at = events.find("Successfully assigned default/fits"); at != std::string::npos;
       at = events.find("Successfully assigned default/fits", at + 1))
    ++assigned;
  EXPECT_EQ(assigned, 1u) << events;
}

}  // namespace
}  // namespace uvsched::test
