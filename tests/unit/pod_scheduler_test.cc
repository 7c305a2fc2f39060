// The pod scheduler's orchestration without sockets or a loop: a FakeStore
// whose answers the test runs, a ManualClock the test moves, and agents
// whose event streams are channels that record. What it does with pods it
// reads from the store: a pod that fits nowhere says why and backs off; an
// offer that arrives launches the first pod that fits it; tasks whose agent
// is gone are lost by the restart policy; a staging task reported before its
// pod appears waits for it and is adopted.
#include "handlers/pods/pod_scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "handlers/agents/agent_channel.h"
#include "handlers/ops/metrics_registry.h"
#include "handlers/pods/pod_registry.h"
#include "handlers/router.h"
#include "reactor/log.h"
#include "reactor/manual_clock.h"
#include "tests/support/fake_store.h"
#include "tests/support/recording_channel.h"

namespace uvsched {
namespace {

using test::FakeStore;
using test::post;
using test::RecordingChannel;

constexpr uint64_t kAgentTimeoutMs = 30'000;

std::string pod_key(const std::string& name) { return std::string(PodRegistry::kPodPrefix) + "default/" + name; }

// A pod as the registry stores it (kind, apiVersion and metadata first).
std::string stored_pod(const std::string& name, const std::string& restart = "Always",
                       const std::string& extra_meta = "", const std::string& extra_spec = "",
                       const std::string& phase = "Pending") {
  return R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + name + R"(","namespace":"default","uid":"u-)" +
         name + R"(","creationTimestamp":"2026-12-01T00:00:00Z")" + extra_meta +
         R"(},"spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"500m","memory":"64Mi"}}}],)"
         R"("restartPolicy":")" +
         restart + R"(")" + extra_spec + R"(},"status":{"phase":")" + phase + R"("}})";
}

// A pod bound to `task` on edge-1, as a predecessor left it.
std::string bound_pod(const std::string& name, const std::string& task, const std::string& restart,
                      const std::string& phase = "Running") {
  return stored_pod(name, restart,
                    R"(,"annotations":{"uvsched.io/bindingHost":"edge-1","uvsched.io/taskId":")" + task +
                        R"(","uvsched.io/agentId":"edge-1-1","uvsched.io/offerId":"edge-1-o1"})",
                    R"(,"nodeName":"edge-1")", phase);
}

std::string offer_body(double cpus, double mem_mib) {
  return R"({"offers":[{"resources":[{"name":"cpus","type":"SCALAR","scalar":{"value":)" + std::to_string(cpus) +
         R"(}},{"name":"mem","type":"SCALAR","scalar":{"value":)" + std::to_string(mem_mib) + "}}]}]}";
}

std::string task_of(const std::string& launch);

class PodSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override { log_configure(LogLevel::kOff, LogFormat::kText); }
  void start() {
    hub_ = std::make_unique<AgentHub>(clock_, metrics_, AgentHub::Settings{.agent_timeout_ms = kAgentTimeoutMs});
    scheduler_ = std::make_unique<PodScheduler>(
        store_, clock_, *hub_, writer_, metrics_, [] { return true; }, PodScheduler::Settings{});
    hub_->set_events(scheduler_.get());
    hub_->add_routes(router_);
    scheduler_->add_routes(router_);
    scheduler_->start();
    settle();
    ASSERT_TRUE(scheduler_->ready()) << "the pods were not loaded";
  }
  // An agent subscribes with cpus and 8 GiB; its stream is returned.
  std::shared_ptr<RecordingChannel> subscribe(const std::string& host) {
    auto channel = std::make_shared<RecordingChannel>();
    hub_->subscribe_on(host, {}, Resources{4, 8192, {}}, "", channel);
    settle();
    return channel;
  }
  std::string offer(const std::string& host, double cpus, double mem_mib) {
    std::string answer = post(router_, "/v1/agents/" + host + "/offers", offer_body(cpus, mem_mib));
    settle();
    return answer;
  }
  void TearDown() override {
    if (scheduler_) scheduler_->stop();
    settle();
    scheduler_.reset();
    hub_.reset();
  }
  // The store answers and next-turn work runs, until neither has more.
  void settle() {
    for (int i = 0; i < 100; ++i) {
      size_t ran = store_.run();
      clock_.advance(0);
      if (ran == 0 && store_.queued() == 0) return;
    }
    ADD_FAILURE() << "the scheduler and the store never went quiet";
  }
  // Time passes, timers fire, and what they start settles.
  void wait(uint64_t ms) {
    clock_.advance(ms);
    settle();
  }
  std::string pod(const std::string& name) { return store_.value(pod_key(name)).value_or("<absent>"); }
  // Another writer (the registry, a predecessor) stores a pod.
  void put_pod(const std::string& name, const std::string& json) {
    store_.put(pod_key(name), json, 0, [](WriteResult&&) {});
  }
  // A pod of `priority` stored, then placed on the next offer of `host` (0.5
  // cpu), launched and running: its task id.
  std::string run_pod(RecordingChannel& agent, const std::string& host, const std::string& name, int priority) {
    size_t before = agent.events("LAUNCH").size();
    put_pod(name, stored_pod(name, "Always", "", R"(,"priority":)" + std::to_string(priority)));
    settle();
    offer(host, 0.5, 1024);
    auto launches = agent.events("LAUNCH");
    EXPECT_EQ(launches.size(), before + 1) << name;
    if (launches.size() != before + 1) return "";
    std::string task = task_of(launches.back());
    scheduler_->status_update(host, {task, "TASK_RUNNING", ""});
    settle();
    return task;
  }
  double metric(const std::string& series) {
    std::string text = metrics_.render();
    size_t at = text.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::stod(text.substr(at + series.size() + 2));
  }

  ManualClock clock_;
  FakeStore store_;
  PodWriter writer_{store_};
  MetricsRegistry metrics_;
  Router router_;
  std::unique_ptr<AgentHub> hub_;
  std::unique_ptr<PodScheduler> scheduler_;
};

TEST_F(PodSchedulerTest, APodThatFitsNowhereSaysWhyAndIsTriedAgainAfterItsBackoff) {
  start();
  put_pod("web", stored_pod("web"));
  settle();
  EXPECT_NE(pod("web").find(R"("type":"PodScheduled","status":"False")"), std::string::npos) << pod("web");
  EXPECT_NE(pod("web").find("there are no free offers"), std::string::npos) << pod("web");
  EXPECT_EQ(scheduler_->pending(), 1u);
  double tries = metric(R"(uvsched_pod_placements_total{result="unschedulable"})");
  EXPECT_EQ(tries, 1);
  wait(999);  // the first backoff is 1 s
  EXPECT_EQ(metric(R"(uvsched_pod_placements_total{result="unschedulable"})"), tries);
  wait(1);
  EXPECT_EQ(metric(R"(uvsched_pod_placements_total{result="unschedulable"})"), tries + 1);
  wait(1999);  // then 2 s
  EXPECT_EQ(metric(R"(uvsched_pod_placements_total{result="unschedulable"})"), tries + 1);
  wait(1);
  EXPECT_EQ(metric(R"(uvsched_pod_placements_total{result="unschedulable"})"), tries + 2);
}

// Pods that fit nowhere are weighed against every offer; many due at once
// are tried a slice at a time (kLooksPerPass offers weighed), the loop
// serving its I/O between slices, rather than in one pass that holds it.
TEST_F(PodSchedulerTest, ManyPodsDueAtOnceAreTriedASliceAtATime) {
  start();
  subscribe("edge-1");
  constexpr size_t kOffers = 1'000, kPods = 300;
  for (size_t i = 0; i < kOffers; ++i) offer("edge-1", 0.25, 64);  // none fits a 500m pod
  for (size_t i = 0; i < kPods; ++i) put_pod("p" + std::to_string(i), stored_pod("p" + std::to_string(i)));
  settle();
  const std::string tried = R"(uvsched_pod_placements_total{result="unschedulable"})";
  constexpr double kSlice = PodScheduler::kLooksPerPass / kOffers;
  EXPECT_EQ(metric(tried), kSlice) << "one slice in the first pass";
  wait(1);
  EXPECT_EQ(metric(tried), 2 * kSlice);
  wait(1);
  EXPECT_EQ(metric(tried), kPods) << "every pod tried, once";
  EXPECT_NE(pod("p299").find("0/1 nodes are available: 1 Insufficient cpu"), std::string::npos) << pod("p299");
}

// First come, first served: of two waiting pods the one that came first and
// fits takes the offer; the LAUNCH goes down its agent's stream and the pod
// is bound; the agent's TASK_RUNNING makes it Running; the second pod waits,
// saying why, until an offer fits it too.
TEST_F(PodSchedulerTest, AnOfferLaunchesTheFirstWaitingPodThatFitsIt) {
  start();
  auto edge = subscribe("edge-1");
  put_pod("first", stored_pod("first"));
  settle();
  put_pod("second", stored_pod("second"));
  settle();
  ASSERT_EQ(scheduler_->pending(), 2u);
  std::string answer = offer("edge-1", 0.75, 1024);  // room for one 500m pod
  ASSERT_NE(answer.find("200 OK"), std::string::npos) << answer;
  auto launches = edge->events("LAUNCH");
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_NE(launches[0].find(R"("name":"default/first")"), std::string::npos) << launches[0];
  EXPECT_NE(pod("first").find(R"("nodeName":"edge-1")"), std::string::npos) << pod("first");
  EXPECT_EQ(pod("second").find("nodeName"), std::string::npos) << pod("second");
  EXPECT_EQ(scheduler_->pending(), 1u);
  // The agent reports the task running.
  const std::string marker = R"("task_id":{"value":")";
  size_t at = launches[0].find(marker) + marker.size();
  std::string task = launches[0].substr(at, launches[0].find('"', at) - at);
  EXPECT_NE(pod("first").find(task), std::string::npos) << "the binding names the launched task";
  scheduler_->status_update("edge-1", {task, "TASK_RUNNING", ""});
  settle();
  EXPECT_NE(pod("first").find(R"("phase":"Running")"), std::string::npos) << pod("first");
  // Another offer that fits wakes the second before its backoff ends.
  offer("edge-1", 1, 1024);
  ASSERT_EQ(edge->events("LAUNCH").size(), 2u);
  EXPECT_NE(edge->events("LAUNCH")[1].find(R"("name":"default/second")"), std::string::npos);
  EXPECT_EQ(scheduler_->pending(), 0u);
}

// A pod every agent refuses for what no offer changes (here a required
// anti-affinity to a pod on the only agent) is not woken by offers: each
// one goes on to the pods that could take it, and the kept-out pod is not
// tried again for nothing (only when its back-off ends). Once the pod that
// kept it out is gone, the next offer places it. (Before, each offer woke it, it was refused again, and
// the pods behind it waited for their back-off.)
TEST_F(PodSchedulerTest, APodKeptOutByThePlacedPodsLetsOffersGoToOthersUntilThatChanges) {
  const std::string web = R"(,"labels":{"app":"web"})";
  const std::string apart =
      R"(,"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[)"
      R"({"labelSelector":{"matchLabels":{"app":"web"}},"topologyKey":"kubernetes.io/hostname"}]}})";
  const std::string tried = R"(uvsched_pod_placements_total{result="unschedulable"})";
  start();
  auto edge = subscribe("edge-1");
  put_pod("web-1", stored_pod("web-1", "Always", web, apart));
  settle();
  offer("edge-1", 0.5, 1024);
  ASSERT_EQ(edge->events("LAUNCH").size(), 1u);
  std::string web1 = task_of(edge->events("LAUNCH")[0]);
  scheduler_->status_update("edge-1", {web1, "TASK_RUNNING", ""});
  settle();

  put_pod("web-2", stored_pod("web-2", "Always", web, apart));
  settle();
  offer("edge-1", 0.5, 1024);  // weighed for web-2, and refused: web-1 is there
  EXPECT_NE(pod("web-2").find("didn't match pod anti-affinity rules"), std::string::npos) << pod("web-2");
  put_pod("big", stored_pod("big"));  // takes that offer
  settle();
  ASSERT_EQ(edge->events("LAUNCH").size(), 2u);
  put_pod("other", stored_pod("other"));  // waits: no offer is left
  settle();
  ASSERT_EQ(scheduler_->pending(), 2u);

  double tries = metric(tried);
  offer("edge-1", 0.5, 1024);
  ASSERT_EQ(edge->events("LAUNCH").size(), 3u) << "the offer went past web-2 to the pod that can take it";
  EXPECT_NE(edge->events("LAUNCH")[2].find(R"("name":"default/other")"), std::string::npos);
  offer("edge-1", 0.5, 1024);
  EXPECT_EQ(metric(tried), tries) << "the offers did not wake web-2: nothing changed";
  size_t looks = scheduler_->looks();
  std::string said = pod("web-2");
  wait(2000);  // its back-off (2 s after its second try) still runs (SPEC 4)
  EXPECT_EQ(metric(tried), tries + 1);
  EXPECT_EQ(scheduler_->looks(), looks) << "that try weighed no offer: each is of an agent that refused it since";
  EXPECT_EQ(pod("web-2"), said) << "and it says what it said";
  EXPECT_NE(pod("web-2").find(R"("phase":"Pending")"), std::string::npos);

  // web-1 is deleted; once its task is gone, an offer lets web-2 in.
  store_.del(pod_key("web-1"), false, [](WriteResult&&) {});
  settle();
  ASSERT_EQ(edge->events("KILL").size(), 1u);
  scheduler_->status_update("edge-1", {web1, "TASK_KILLED", ""});
  settle();
  offer("edge-1", 0.5, 1024);
  ASSERT_EQ(edge->events("LAUNCH").size(), 4u);
  EXPECT_NE(edge->events("LAUNCH")[3].find(R"("name":"default/web-2")"), std::string::npos);
  EXPECT_EQ(scheduler_->pending(), 0u);
}

// A create that fits is placed by the create itself (the binding goes in
// the same write) unless a waiting pod is due, which would pass that pod
// over. A pod backing off after a try is not ahead of it: the queue's next
// turn would try the new pod first too. (Before, one pod that could go
// nowhere made every create two writes and a queue turn.)
TEST_F(PodSchedulerTest, ACreateThatFitsIsPlacedAtOnceUnlessAWaitingPodIsDue) {
  start();
  auto edge = subscribe("edge-1");
  put_pod("nowhere", stored_pod("nowhere", "Always", "", R"(,"nodeSelector":{"disk":"ssd"})"));
  settle();
  offer("edge-1", 0.5, 1024);
  ASSERT_EQ(scheduler_->pending(), 1u);
  ASSERT_TRUE(edge->events("LAUNCH").empty()) << "no agent has disk=ssd";

  std::optional<JsonValue> web = JsonValue::parse(stored_pod("web"), nullptr);
  ASSERT_TRUE(web);
  auto created = scheduler_->place_on_create("default", "web", *web);
  ASSERT_TRUE(created) << "a pod backing off is not ahead of the create";
  const JsonValue* node = web->find({"spec", "nodeName"});
  ASSERT_NE(node, nullptr) << web->dump();
  EXPECT_EQ(node->text(), "edge-1");
  std::string json = web->dump();
  put_pod("web", json);
  settle();
  created(true, store_.revision(), json);
  settle();
  ASSERT_EQ(edge->events("LAUNCH").size(), 1u);
  EXPECT_NE(edge->events("LAUNCH")[0].find(R"("name":"default/web")"), std::string::npos);
  EXPECT_EQ(scheduler_->pending(), 1u) << "nowhere still waits";

  // A pod the watch just queued is due: a create now would pass it over.
  offer("edge-1", 0.5, 1024);
  put_pod("queued", stored_pod("queued"));
  store_.run();  // the watch brings it; the queue's turn has not come yet
  std::optional<JsonValue> late = JsonValue::parse(stored_pod("late"), nullptr);
  ASSERT_TRUE(late);
  EXPECT_FALSE(scheduler_->place_on_create("default", "late", *late)) << "stored as it is: it takes its turn";
  EXPECT_EQ(late->find({"spec", "nodeName"}), nullptr);
  settle();
  ASSERT_EQ(edge->events("LAUNCH").size(), 2u);
  EXPECT_NE(edge->events("LAUNCH")[1].find(R"("name":"default/queued")"), std::string::npos)
      << "the pod that came first took the offer";
}

// kubectl cordon: a cordoned agent's offers take no new pod (one that
// tolerates the cordon's taint excepted), the pod says why in
// kube-scheduler's words; uncordoned, its live offer wakes the pod at once.
// A cordon stored before the scheduler starts (by a predecessor) holds.
TEST_F(PodSchedulerTest, ACordonedAgentTakesNoNewPodUntilUncordoned) {
  store_.put(std::string(PodRegistry::kCordonPrefix) + "edge-1", "{}", 0, [](WriteResult&&) {});
  start();
  EXPECT_TRUE(hub_->cordoned("edge-1"));
  auto edge = subscribe("edge-1");
  put_pod("web", stored_pod("web"));
  settle();
  offer("edge-1", 4, 8192);
  EXPECT_TRUE(edge->events("LAUNCH").empty());  // nor is the pod woken by it: it tries again after its backoff
  wait(1000);
  EXPECT_TRUE(edge->events("LAUNCH").empty());
  EXPECT_NE(pod("web").find("0/1 nodes are available: 1 node(s) were unschedulable."), std::string::npos) << pod("web");
  // A pod that tolerates the taint (a DaemonSet's does) is placed there.
  put_pod("ds", stored_pod("ds", "Always", "",
                           R"(,"tolerations":[{"key":"node.kubernetes.io/unschedulable","operator":"Exists",)"
                           R"("effect":"NoSchedule"}])"));
  settle();
  ASSERT_EQ(edge->events("LAUNCH").size(), 1u);
  EXPECT_NE(edge->events("LAUNCH")[0].find(R"("name":"default/ds")"), std::string::npos);
  offer("edge-1", 4, 8192);  // the first offer went to the pod that tolerates it
  EXPECT_EQ(edge->events("LAUNCH").size(), 1u);
  // Uncordoned: the waiting pod is woken by the live offer, its backoff cut short.
  scheduler_->cordon_changed("edge-1", false);
  settle();
  ASSERT_EQ(edge->events("LAUNCH").size(), 2u);
  EXPECT_NE(edge->events("LAUNCH")[1].find(R"("name":"default/web")"), std::string::npos);
  EXPECT_EQ(scheduler_->pending(), 0u);
}

// kubectl taint: the taints stored are loaded at start; a pod that does not
// tolerate one waits and says so, one that tolerates them all is placed, and
// once the taint is taken off the waiting pod is woken by the live offer.
TEST_F(PodSchedulerTest, ATaintedAgentTakesOnlyPodsThatTolerateItsTaints) {
  store_.put(std::string(PodRegistry::kNodeTaintsPrefix) + "edge-1",
             R"([{"key":"dedicated","value":"gpu","effect":"NoSchedule"},{"key":"busy","effect":"PreferNoSchedule"}])",
             0, [](WriteResult&&) {});
  start();
  ASSERT_EQ(hub_->taints("edge-1").size(), 2u);
  auto edge = subscribe("edge-1");
  put_pod("web", stored_pod("web"));
  settle();
  offer("edge-1", 4, 8192);
  wait(1000);
  EXPECT_TRUE(edge->events("LAUNCH").empty());
  EXPECT_NE(pod("web").find("0/1 nodes are available: 1 node(s) had untolerated taints."), std::string::npos)
      << pod("web");
  put_pod("trainer", stored_pod("trainer", "Always", "",
                                R"(,"tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu"}])"));
  settle();
  ASSERT_EQ(edge->events("LAUNCH").size(), 1u);
  EXPECT_NE(edge->events("LAUNCH")[0].find(R"("name":"default/trainer")"), std::string::npos);
  offer("edge-1", 4, 8192);
  EXPECT_EQ(edge->events("LAUNCH").size(), 1u);
  scheduler_->taints_changed("edge-1", {{.key = "busy", .effect = "PreferNoSchedule"}});
  settle();
  ASSERT_EQ(edge->events("LAUNCH").size(), 2u) << "a preference kept the pod off";
  EXPECT_NE(edge->events("LAUNCH")[1].find(R"("name":"default/web")"), std::string::npos);
  EXPECT_EQ(scheduler_->pending(), 0u);
}

// A PreferNoSchedule taint: a pod that does not tolerate it goes to another
// agent's offer when one fits, even a later one, and to the tainted agent
// only when none does; a pod that tolerates it takes the first offer.
TEST_F(PodSchedulerTest, APreferNoScheduleTaintSendsPodsElsewhereWhenTheyFit) {
  start();
  auto busy = subscribe("edge-1");
  auto calm = subscribe("edge-2");
  scheduler_->taints_changed("edge-1", {{.key = "busy", .effect = "PreferNoSchedule"}});
  offer("edge-1", 4, 8192);
  offer("edge-2", 4, 8192);
  put_pod("plain", stored_pod("plain"));
  settle();
  ASSERT_EQ(calm->events("LAUNCH").size(), 1u);
  EXPECT_TRUE(busy->events("LAUNCH").empty());
  offer("edge-2", 0.1, 8192);  // too small
  put_pod("tolerant", stored_pod("tolerant", "Always", "", R"(,"tolerations":[{"key":"busy","operator":"Exists"}])"));
  put_pod("second", stored_pod("second"));
  settle();
  ASSERT_EQ(busy->events("LAUNCH").size(), 1u);
  EXPECT_NE(busy->events("LAUNCH")[0].find(R"("name":"default/tolerant")"), std::string::npos);
  offer("edge-1", 4, 8192);
  ASSERT_EQ(busy->events("LAUNCH").size(), 2u) << "no other agent had room: the tainted one";
  EXPECT_NE(busy->events("LAUNCH")[1].find(R"("name":"default/second")"), std::string::npos);
  EXPECT_EQ(calm->events("LAUNCH").size(), 1u);
}

// A NoExecute taint, as the taint manager treats it: a running pod that does
// not tolerate it is deleted at once (its task killed, the object marked
// until the task is gone), one that tolerates it for 60 s is deleted then,
// one that tolerates it for good stays; the taint taken off, a pod waiting
// out its toleration stays as well.
TEST_F(PodSchedulerTest, ANoExecuteTaintEvictsTheRunningPodsThatDoNotTolerateIt) {
  start();
  auto edge = subscribe("edge-1");
  auto tolerating = [](const std::string& seconds) {
    return R"(,"tolerations":[{"key":"maintenance","operator":"Exists","effect":"NoExecute")" +
           (seconds.empty() ? "" : R"(,"tolerationSeconds":)" + seconds) + "}]";
  };
  std::map<std::string, std::string> task;
  for (const auto& [name, spec] : std::vector<std::pair<std::string, std::string>>{{"plain", ""},
                                                                                   {"minute", tolerating("60")},
                                                                                   {"forever", tolerating("")},
                                                                                   {"twominutes", tolerating("120")}}) {
    put_pod(name, stored_pod(name, "Always", "", spec));
    settle();
    offer("edge-1", 0.5, 1024);
    ASSERT_FALSE(edge->events("LAUNCH").empty());
    task[name] = task_of(edge->events("LAUNCH").back());
    scheduler_->status_update("edge-1", {task[name], "TASK_RUNNING", ""});
    settle();
  }
  ASSERT_EQ(edge->events("LAUNCH").size(), 4u);
  scheduler_->taints_changed("edge-1", {{.key = "maintenance", .effect = "NoExecute"}});
  settle();
  ASSERT_EQ(edge->events("KILL").size(), 1u);
  EXPECT_NE(edge->events("KILL")[0].find(task["plain"]), std::string::npos);
  EXPECT_NE(pod("plain").find("deletionTimestamp"), std::string::npos) << pod("plain");
  EXPECT_NE(pod("plain").find(R"({"type":"DisruptionTarget","status":"True","reason":"DeletionByTaintManager",)"
                              R"("message":"Taint manager: deleting due to NoExecute taint")"),
            std::string::npos)
      << "marked as the taint manager marks it, before it is deleted: " << pod("plain");
  EXPECT_EQ(pod("minute").find("DisruptionTarget"), std::string::npos) << pod("minute");
  scheduler_->status_update("edge-1", {task["plain"], "TASK_KILLED", ""});
  settle();
  EXPECT_EQ(pod("plain"), "<absent>");
  wait(59'999);
  EXPECT_EQ(edge->events("KILL").size(), 1u);
  wait(1);
  ASSERT_EQ(edge->events("KILL").size(), 2u);
  EXPECT_NE(edge->events("KILL")[1].find(task["minute"]), std::string::npos);
  scheduler_->taints_changed("edge-1", {});  // taken off before the two minutes end
  wait(3'600'000);
  EXPECT_EQ(edge->events("KILL").size(), 2u) << "a pod was evicted by a taint that is gone, or one it tolerates";
  EXPECT_NE(pod("forever").find(R"("phase":"Running")"), std::string::npos);
  EXPECT_EQ(pod("forever").find("deletionTimestamp"), std::string::npos);
  EXPECT_EQ(pod("twominutes").find("deletionTimestamp"), std::string::npos);
}

// An offer too small for the pod is declined back to its agent when it
// expires unused, and the pod says what did not fit.
TEST_F(PodSchedulerTest, AnOfferThatFitsNoPodIsDeclinedWhenItExpires) {
  start();
  auto edge = subscribe("edge-1");
  put_pod("big", stored_pod("big"));
  settle();
  offer("edge-1", 0.25, 1024);
  EXPECT_TRUE(edge->events("LAUNCH").empty());
  wait(5'000);  // the offer's time to live
  EXPECT_EQ(edge->events("DECLINE").size(), 1u);
  EXPECT_NE(pod("big").find("cpu"), std::string::npos) << pod("big");
}

// The binding's write outlasts the offer: the launch is rolled back and the
// offer, let go unused, is declined 2×ttl later, so that the agent offers
// those resources again (it would not until its own re-offer otherwise).
TEST_F(PodSchedulerTest, AnOfferThatRanOutWhileItsBindingWasWrittenIsDeclinedLater) {
  start();
  auto edge = subscribe("edge-1");
  put_pod("slow", stored_pod("slow"));
  settle();
  post(router_, "/v1/agents/edge-1/offers", offer_body(1, 1024));
  clock_.advance(0);      // the pod takes it; its binding is written...
  clock_.advance(5'000);  // ...for longer than the offer lives
  settle();
  EXPECT_TRUE(edge->events("LAUNCH").empty());
  EXPECT_NE(pod("slow").find("OfferGone"), std::string::npos) << pod("slow");
  EXPECT_TRUE(edge->events("DECLINE").empty()) << "not before 2×ttl";
  wait(10'000);
  EXPECT_EQ(edge->events("DECLINE").size(), 1u);
}

// A running task's agent goes away and does not come back within the agent
// timeout: its task is lost, and an Always pod is unbound and waits again.
TEST_F(PodSchedulerTest, ATaskWhoseAgentGoesAwayIsLostAfterTheAgentTimeout) {
  start();
  auto edge = subscribe("edge-1");
  put_pod("web", stored_pod("web"));
  settle();
  offer("edge-1", 1, 1024);
  ASSERT_EQ(edge->events("LAUNCH").size(), 1u);
  edge->hang_up();
  wait(kAgentTimeoutMs - 1);
  EXPECT_NE(pod("web").find(R"("nodeName":"edge-1")"), std::string::npos) << "lost too soon: " << pod("web");
  wait(1);
  EXPECT_EQ(pod("web").find("nodeName"), std::string::npos) << pod("web");
  EXPECT_NE(pod("web").find(R"("phase":"Pending")"), std::string::npos) << pod("web");
  EXPECT_EQ(scheduler_->pending(), 1u);
}

// A task that fails is started again as a kubelet restarts a crashing
// container: after 10 s, then 20, 40, ... up to 5 min, the pod saying
// CrashLoopBackOff meanwhile and counting its restarts; an offer does not
// cut the wait short; 10 min without a failure and the wait starts over at
// 10 s. A lost agent's task is placed again at once, and counted.
TEST_F(PodSchedulerTest, AFailingTaskIsStartedAgainAfterACrashLoopBackoff) {
  start();
  auto edge = subscribe("edge-1");
  put_pod("crash", stored_pod("crash"));
  settle();
  auto fail_next = [&](size_t launches) {
    offer("edge-1", 1, 1024);
    EXPECT_EQ(edge->events("LAUNCH").size(), launches);
    std::string task = task_of(edge->events("LAUNCH").back());
    scheduler_->status_update("edge-1", {task, "TASK_RUNNING", ""});
    settle();
    scheduler_->status_update("edge-1", {task, "TASK_FAILED", ""});
    settle();
  };
  auto backing_off = [](const std::string& after, int restarts) {
    return R"j("state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off )j" + after +
           R"j( restarting the failed task (TASK_FAILED)"}},"ready":false,"restartCount":)j" + std::to_string(restarts);
  };
  fail_next(1);
  EXPECT_NE(pod("crash").find(backing_off("10s", 1)), std::string::npos) << pod("crash");
  EXPECT_NE(pod("crash").find(R"("phase":"Pending")"), std::string::npos) << pod("crash");
  offer("edge-1", 1, 1024);
  wait(9'999);
  EXPECT_EQ(edge->events("LAUNCH").size(), 1u) << "started again within its back-off";
  wait(1);
  fail_next(2);
  EXPECT_NE(pod("crash").find(backing_off("20s", 2)), std::string::npos) << pod("crash");
  wait(19'999);
  offer("edge-1", 1, 1024);
  EXPECT_EQ(edge->events("LAUNCH").size(), 2u) << "an offer cut the back-off short";
  wait(1);
  // It runs, and the agent reports its containers: the count stays the pod's.
  ASSERT_EQ(edge->events("LAUNCH").size(), 3u);
  std::string task = task_of(edge->events("LAUNCH").back());
  const std::string running =
      R"({"containerStatuses":[{"name":"c","ready":true,"restartCount":0,"state":{"running":{}}}]})";
  scheduler_->status_update("edge-1", {task, "TASK_RUNNING", running});
  settle();
  EXPECT_NE(pod("crash").find(R"({"name":"c","ready":true,"restartCount":2,"state":{"running":{}}})"),
            std::string::npos)
      << pod("crash");
  // Ten minutes without a failure: it starts over at 10 s.
  wait(600'001);
  scheduler_->status_update("edge-1", {task, "TASK_FAILED", ""});
  settle();
  EXPECT_NE(pod("crash").find(backing_off("10s", 3)), std::string::npos) << pod("crash");
  wait(10'000);
  fail_next(4);
  EXPECT_NE(pod("crash").find(backing_off("20s", 4)), std::string::npos) << pod("crash");
  for (uint64_t backoff : {20'000, 40'000, 80'000, 160'000, 300'000}) {
    wait(backoff);
    fail_next(edge->events("LAUNCH").size() + 1);
  }
  EXPECT_NE(pod("crash").find(backing_off("5m0s", 9)), std::string::npos) << "capped at 5 min: " << pod("crash");
  // Started again and running without a word of its containers: they run.
  wait(300'000);
  offer("edge-1", 1, 1024);
  ASSERT_EQ(edge->events("LAUNCH").size(), 10u);
  scheduler_->status_update("edge-1", {task_of(edge->events("LAUNCH").back()), "TASK_RUNNING", ""});
  settle();
  EXPECT_NE(pod("crash").find(R"("state":{"running":{"startedAt":)"), std::string::npos) << pod("crash");
  EXPECT_EQ(pod("crash").find("CrashLoopBackOff"), std::string::npos) << pod("crash");
  // A task lost with its agent is no crash: placed again at once, counted.
  edge->hang_up();
  wait(kAgentTimeoutMs);
  auto other = subscribe("edge-2");
  offer("edge-2", 1, 1024);
  ASSERT_EQ(other->events("LAUNCH").size(), 1u) << pod("crash");
  EXPECT_NE(pod("crash").find(R"("ready":false,"restartCount":10,)"), std::string::npos) << pod("crash");
}

// spec.activeDeadlineSeconds, as a kubelet enforces it: 60 s after the pod's
// startTime (stamped by its binding) its task is killed, asked again at each
// report until it ends, and the pod fails with DeadlineExceeded, its restart
// policy Always notwithstanding. A second before, nothing happens.
TEST_F(PodSchedulerTest, APodPastItsActiveDeadlineIsFailedAndItsTaskKilled) {
  start();
  auto edge = subscribe("edge-1");
  put_pod("job", stored_pod("job", "Always", "", R"(,"activeDeadlineSeconds":60)"));
  settle();
  offer("edge-1", 1, 1024);
  ASSERT_EQ(edge->events("LAUNCH").size(), 1u);
  const std::string task = task_of(edge->events("LAUNCH")[0]);
  EXPECT_NE(pod("job").find(R"("startTime":"2026-01-01T00:00:00Z")"), std::string::npos) << pod("job");
  scheduler_->status_update("edge-1", {task, "TASK_RUNNING", ""});
  settle();
  wait(59'999);
  EXPECT_TRUE(edge->events("KILL").empty()) << "killed before its deadline";
  wait(1);
  ASSERT_EQ(edge->events("KILL").size(), 1u);
  EXPECT_NE(edge->events("KILL")[0].find(task), std::string::npos);
  scheduler_->status_update("edge-1", {task, "TASK_RUNNING", ""});  // the KILL not read yet
  settle();
  EXPECT_EQ(edge->events("KILL").size(), 2u) << "a report of an expired task is answered with its KILL";
  EXPECT_NE(pod("job").find(R"("phase":"Running")"), std::string::npos) << pod("job");
  scheduler_->status_update("edge-1", {task, "TASK_KILLED", ""});
  settle();
  EXPECT_NE(pod("job").find(R"("phase":"Failed")"), std::string::npos) << pod("job");
  EXPECT_NE(pod("job").find(R"("reason":"DeadlineExceeded")"), std::string::npos) << pod("job");
  offer("edge-1", 1, 1024);
  EXPECT_EQ(edge->events("LAUNCH").size(), 1u) << "a pod past its deadline was started again";
  EXPECT_EQ(scheduler_->pending(), 0u);
}

// The deadline bounds all the time a pod is active: a pod whose task crashed
// keeps its first startTime, and fails where it waits out its back-off.
TEST_F(PodSchedulerTest, APodWaitingToStartAgainFailsWhenItsDeadlinePasses) {
  start();
  auto edge = subscribe("edge-1");
  put_pod("crash", stored_pod("crash", "Always", "", R"(,"activeDeadlineSeconds":30)"));
  settle();
  offer("edge-1", 1, 1024);
  ASSERT_EQ(edge->events("LAUNCH").size(), 1u);
  const std::string task = task_of(edge->events("LAUNCH")[0]);
  scheduler_->status_update("edge-1", {task, "TASK_RUNNING", ""});
  settle();
  wait(25'000);
  scheduler_->status_update("edge-1", {task, "TASK_FAILED", ""});  // back-off 10 s: past its deadline
  settle();
  EXPECT_NE(pod("crash").find(R"("phase":"Pending")"), std::string::npos) << pod("crash");
  EXPECT_NE(pod("crash").find(R"("startTime":"2026-01-01T00:00:00Z")"), std::string::npos) << pod("crash");
  wait(4'999);
  EXPECT_NE(pod("crash").find(R"("phase":"Pending")"), std::string::npos) << pod("crash");
  wait(1);
  EXPECT_NE(pod("crash").find(R"("phase":"Failed")"), std::string::npos) << pod("crash");
  EXPECT_NE(pod("crash").find(R"("reason":"DeadlineExceeded")"), std::string::npos) << pod("crash");
  EXPECT_EQ(scheduler_->pending(), 0u);
  wait(10'000);
  offer("edge-1", 1, 1024);
  EXPECT_EQ(edge->events("LAUNCH").size(), 1u) << "a pod past its deadline was started again";
  EXPECT_TRUE(edge->events("KILL").empty());
}

// A successor follows the deadlines of the tasks it recovers: one that passed
// while no one led is killed at the agent's first report.
TEST_F(PodSchedulerTest, ASuccessorKillsARecoveredTaskPastItsDeadline) {
  const std::string task = "pod.default.old.00000000000a";
  std::string old = bound_pod("old", task, "Always");
  old.replace(old.find(R"("restartPolicy")"), 0, R"("activeDeadlineSeconds":60,)");
  old.replace(old.find(R"("phase":"Running")"), 0, R"("startTime":"2025-12-31T23:00:00Z",)");
  put_pod("old", old);
  put_pod("young", bound_pod("young", "pod.default.young.00000000000b", "Always"));
  store_.run();
  start();
  auto edge = subscribe("edge-1");
  scheduler_->status_update("edge-1", {task, "TASK_RUNNING", ""});
  scheduler_->status_update("edge-1", {"pod.default.young.00000000000b", "TASK_RUNNING", ""});
  settle();
  ASSERT_EQ(edge->events("KILL").size(), 1u);
  EXPECT_NE(edge->events("KILL")[0].find(task), std::string::npos);
  scheduler_->status_update("edge-1", {task, "TASK_KILLED", ""});
  settle();
  EXPECT_NE(pod("old").find(R"("reason":"DeadlineExceeded")"), std::string::npos) << pod("old");
  EXPECT_NE(pod("young").find(R"("phase":"Running")"), std::string::npos) << pod("young");
}

// A running pod's deadline lowered by an update (the registry says so):
// its task is killed at the new time.
TEST_F(PodSchedulerTest, ALoweredDeadlineKillsARunningTaskThen) {
  start();
  auto edge = subscribe("edge-1");
  put_pod("long", stored_pod("long", "Never", "", R"(,"activeDeadlineSeconds":3600)"));
  settle();
  offer("edge-1", 1, 1024);
  ASSERT_EQ(edge->events("LAUNCH").size(), 1u);
  scheduler_->status_update("edge-1", {task_of(edge->events("LAUNCH")[0]), "TASK_RUNNING", ""});
  settle();
  wait(10'000);
  scheduler_->deadline_changed("default", "long", clock_.unix_ms() + 20'000);
  scheduler_->deadline_changed("default", "absent", clock_.unix_ms());  // no such task: nothing
  wait(19'999);
  EXPECT_TRUE(edge->events("KILL").empty());
  wait(1);
  EXPECT_EQ(edge->events("KILL").size(), 1u);
}

TEST_F(PodSchedulerTest, ADeletedPendingPodLeavesTheQueue) {
  start();
  put_pod("gone", stored_pod("gone"));
  settle();
  ASSERT_EQ(scheduler_->pending(), 1u);
  store_.del(pod_key("gone"), false, [](WriteResult&&) {});
  settle();
  EXPECT_EQ(scheduler_->pending(), 0u);
  double tries = metric(R"(uvsched_pod_placements_total{result="unschedulable"})");
  wait(60'000);
  EXPECT_EQ(metric(R"(uvsched_pod_placements_total{result="unschedulable"})"), tries)
      << "a deleted pod was tried again";
}

// Tasks recovered from their pods' annotations on an agent that does not
// subscribe within the agent timeout are lost: a Never pod fails, an Always
// pod is unbound and waits again. Just before the timeout nothing changes.
TEST_F(PodSchedulerTest, RecoveredTasksOfAnAgentThatNeverReturnsAreLostByTheirRestartPolicy) {
  put_pod("once", bound_pod("once", "pod.default.once.00000000000a", "Never"));
  put_pod("again", bound_pod("again", "pod.default.again.00000000000b", "Always"));
  store_.run();
  start();
  EXPECT_EQ(hub_->agents().count("edge-1"), 1u) << "the agent its tasks name is expected";
  wait(kAgentTimeoutMs - 1);
  EXPECT_NE(pod("once").find(R"("phase":"Running")"), std::string::npos) << pod("once");
  wait(1);
  EXPECT_NE(pod("once").find(R"("phase":"Failed")"), std::string::npos) << pod("once");
  EXPECT_NE(pod("again").find(R"("phase":"Pending")"), std::string::npos) << pod("again");
  EXPECT_EQ(pod("again").find("nodeName"), std::string::npos) << pod("again");
  EXPECT_EQ(pod("again").find("uvsched.io/taskId"), std::string::npos) << pod("again");
  EXPECT_EQ(hub_->agents().count("edge-1"), 0u);
}

// A TASK_STAGING for a task no pod names yet waits (its pod may be on its
// way); when the pod appears bound to it, the next status adopts it.
TEST_F(PodSchedulerTest, AStagingTaskWaitsForItsPodAndIsAdopted) {
  start();
  const std::string task = "pod.default.later.00000000002a";
  scheduler_->status_update("edge-1", {task, "TASK_STAGING", ""});
  settle();
  EXPECT_EQ(pod("later"), "<absent>");
  put_pod("later", bound_pod("later", task, "Always", "Pending"));
  settle();
  scheduler_->status_update("edge-1", {task, "TASK_RUNNING", ""});
  settle();
  EXPECT_NE(pod("later").find(R"("phase":"Running")"), std::string::npos) << pod("later");
  EXPECT_EQ(scheduler_->pending(), 0u);
}

// An agent re-subscribes while a pod's binding is being written (agents
// follow a new leader while it already places pods). The reconciliation its
// registration starts goes out before the LAUNCH, on the same stream; the
// agent answers in order, so a task it was asked about before its LAUNCH
// came would be TASK_LOST, and the pod launched a second time, its first
// task killed. A task whose LAUNCH has not gone is not asked about.
TEST_F(PodSchedulerTest, ATaskWhoseLaunchHasNotGoneIsNotReconciled) {
  start();
  subscribe("edge-1");
  put_pod("web", stored_pod("web"));
  settle();
  post(router_, "/v1/agents/edge-1/offers", offer_body(1, 1024));
  clock_.advance(0);  // the pod takes the offer; its binding is on its way to the store
  auto again = std::make_shared<RecordingChannel>();
  hub_->subscribe_on("edge-1", {}, Resources{4, 8192, {}}, "", again);
  clock_.advance(0);  // the registration's reconciliation pass
  wait(1'000);        // and its asks again, as for any task not answered
  settle();
  std::vector<std::string> launches = again->events("LAUNCH");
  ASSERT_EQ(launches.size(), 1u);
  const std::string task = task_of(launches[0]);
  // The agent, in the order of its stream: a task asked about before its
  // LAUNCH came is one it does not know.
  bool launched = false;
  size_t reconcile = 0;
  for (const std::string& type : again->types()) {
    if (type == "LAUNCH") launched = true;
    if (type != "RECONCILE") continue;
    std::string asked = again->events("RECONCILE")[reconcile++];
    if (!launched && asked.find(task) != std::string::npos) {
      ADD_FAILURE() << "asked about before its LAUNCH: " << asked;
      scheduler_->status_update("edge-1", {task, "TASK_LOST", ""});
      settle();
    }
  }
  scheduler_->status_update("edge-1", {task, "TASK_STARTING", ""});
  scheduler_->status_update("edge-1", {task, "TASK_RUNNING", ""});
  settle();
  EXPECT_EQ(again->events("LAUNCH").size(), 1u) << "launched again";
  EXPECT_TRUE(again->events("KILL").empty()) << again->events("KILL")[0];
  EXPECT_NE(pod("web").find(R"("phase":"Running")"), std::string::npos) << pod("web");
  EXPECT_NE(pod("web").find(task), std::string::npos) << pod("web");
}

// A pod's images changed (the registry stored the update) while its binding
// was being written: the LAUNCH may carry the pod as it was, so the task is
// killed as soon as it is launched. A task that ends FINISHED as it is killed
// runs again all the same, whatever its restart policy.
TEST_F(PodSchedulerTest, ATaskWhosePodsImagesChangedIsKilledAndThePodPlacedAgain) {
  start();
  auto edge = subscribe("edge-1");
  put_pod("web", stored_pod("web", "Never"));
  settle();
  post(router_, "/v1/agents/edge-1/offers", offer_body(1, 1024));
  clock_.advance(0);  // the binding is on its way
  scheduler_->images_changed("default", "web");
  settle();
  ASSERT_EQ(edge->types(), (std::vector<std::string>{"SUBSCRIBED", "LAUNCH", "KILL"}));
  const std::string task = task_of(edge->events("LAUNCH")[0]);
  EXPECT_NE(edge->events("KILL")[0].find(task), std::string::npos);
  scheduler_->images_changed("default", "web");  // once is enough
  settle();
  EXPECT_EQ(edge->events("KILL").size(), 1u);
  scheduler_->status_update("edge-1", {task, "TASK_RUNNING", ""});  // (the KILL not read yet)
  settle();
  EXPECT_EQ(edge->events("KILL").size(), 2u) << "a report of a task to replace is answered with its KILL";
  scheduler_->status_update("edge-1", {task, "TASK_FINISHED", ""});
  settle();
  EXPECT_NE(pod("web").find(R"("phase":"Pending")"), std::string::npos) << pod("web");
  EXPECT_EQ(pod("web").find("nodeName"), std::string::npos) << pod("web");
  EXPECT_EQ(pod("web").find(PodScheduler::kImagesAnnotation), std::string::npos) << pod("web");
  offer("edge-1", 1, 1024);
  ASSERT_EQ(edge->events("LAUNCH").size(), 2u);
  const std::string second = task_of(edge->events("LAUNCH")[1]);
  EXPECT_NE(second, task);
  scheduler_->status_update("edge-1", {second, "TASK_RUNNING", ""});
  settle();
  EXPECT_EQ(edge->events("KILL").size(), 2u) << "the new task is not killed";
  EXPECT_NE(pod("web").find(R"("uvsched.io/launchedImages":"[\"i\"]")"), std::string::npos) << pod("web");
}

// A successor finds a pod whose images changed after its task was launched
// (the leader that stored the change went before the task was replaced): the
// task is killed when its agent reports it, and the pod placed again, its
// restart policy Never notwithstanding. A pod whose images are those it was
// launched with, or bound before the annotation existed, is left running.
TEST_F(PodSchedulerTest, ASuccessorReplacesATaskLaunchedWithImagesItsPodNoLongerNames) {
  auto bound_with = [](const std::string& name, const std::string& task, const std::string& launched) {
    std::string extra = R"(,"annotations":{"uvsched.io/bindingHost":"edge-1","uvsched.io/taskId":")" + task +
                        R"(","uvsched.io/agentId":"edge-1-1","uvsched.io/offerId":"edge-1-o1")";
    if (!launched.empty()) extra += R"(,"uvsched.io/launchedImages":")" + launched + "\"";
    return stored_pod(name, "Never", extra + "}", R"(,"nodeName":"edge-1")", "Running");
  };
  const std::string changed = "pod.default.changed.00000000000a", same = "pod.default.same.00000000000b",
                    older = "pod.default.older.00000000000c";
  put_pod("changed", bound_with("changed", changed, R"([\"old\"])"));
  put_pod("same", bound_with("same", same, R"([\"i\"])"));
  put_pod("older", bound_with("older", older, ""));
  store_.run();
  start();
  auto edge = subscribe("edge-1");
  for (const auto& t : {changed, same, older}) scheduler_->status_update("edge-1", {t, "TASK_RUNNING", ""});
  settle();
  std::vector<std::string> kills = edge->events("KILL");
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_NE(kills[0].find(changed), std::string::npos) << kills[0];
  scheduler_->status_update("edge-1", {changed, "TASK_KILLED", ""});
  settle();
  EXPECT_NE(pod("changed").find(R"("phase":"Pending")"), std::string::npos) << pod("changed");
  EXPECT_NE(pod("same").find(R"("phase":"Running")"), std::string::npos) << pod("same");
  EXPECT_NE(pod("older").find(R"("phase":"Running")"), std::string::npos) << pod("older");
}

// While the store is down the pods cannot be loaded: the scheduler is not
// ready (statuses are refused) and tries again each second until it is back.
TEST_F(PodSchedulerTest, ItLoadsThePodsOnceTheStoreIsBack) {
  put_pod("web", stored_pod("web"));
  store_.run();
  store_.set_down("etcd is unreachable");
  hub_ = std::make_unique<AgentHub>(clock_, metrics_, AgentHub::Settings{});
  scheduler_ = std::make_unique<PodScheduler>(
      store_, clock_, *hub_, writer_, metrics_, [] { return true; }, PodScheduler::Settings{});
  hub_->set_events(scheduler_.get());
  scheduler_->start();
  settle();
  EXPECT_FALSE(scheduler_->ready());
  EXPECT_EQ(scheduler_->pending(), 0u);
  store_.set_down(std::nullopt);
  wait(1000);
  EXPECT_TRUE(scheduler_->ready());
  EXPECT_EQ(scheduler_->pending(), 1u);
}

TEST_F(PodSchedulerTest, TheQueueListsWaitingPodsInTheOrderTheyWillBeTriedWithWhy) {
  start();
  put_pod("zeta", stored_pod("zeta"));
  settle();
  wait(200);
  put_pod("alpha", stored_pod("alpha"));
  settle();
  wait(300);  // zeta (queued first, named last): tried at 0, due at 1000; alpha: tried at 200, due at 1200
  std::string answer = test::route(router_, "GET", "/v1/queue");
  ASSERT_EQ(test::status_of(answer), 200) << answer;
  std::string body = answer.substr(answer.find("\r\n\r\n") + 4);
  std::string error;
  auto v = JsonValue::parse(body, &error);
  ASSERT_TRUE(v.has_value()) << error << body;
  EXPECT_EQ(v->get("pending")->as_integer(), 2);
  const auto& pods = v->get("pods")->items();
  ASSERT_EQ(pods.size(), 2u) << body;
  EXPECT_EQ(pods[0].str("pod"), "default/zeta");
  EXPECT_EQ(pods[0].get("position")->as_integer(), 1);
  EXPECT_EQ(pods[1].str("pod"), "default/alpha");
  EXPECT_EQ(pods[0].get("next_try_in_ms")->as_integer(), 500);
  EXPECT_EQ(pods[1].get("next_try_in_ms")->as_integer(), 700);
  EXPECT_EQ(pods[0].get("waiting_seconds")->text(), "0.5");
  EXPECT_NE(pods[0].str("reason").find("0/0 nodes are available"), std::string::npos) << body;
  // Each one's PodScheduled message says its place when it was written.
  EXPECT_NE(pod("zeta").find("there are no free offers. Queue position 1 of 1 waiting when this was written "
                             "(GET /v1/queue has the order now)."),
            std::string::npos)
      << pod("zeta");
  EXPECT_NE(pod("alpha").find("Queue position 2 of 2 waiting when this was written"), std::string::npos)
      << pod("alpha");
  EXPECT_EQ(pods[0].str("reason").find("Queue position"), std::string::npos) << "the queue's reason has none";
  EXPECT_EQ(test::status_of(test::route(router_, "GET", "/v1/queue?limit=0")), 400);
  std::string one = test::route(router_, "GET", "/v1/queue?limit=1");
  EXPECT_EQ(one.find("default/alpha"), std::string::npos) << one;
}

}  // namespace
}  // namespace uvsched

namespace uvsched {
namespace {

std::string task_of(const std::string& launch) {
  const std::string marker = R"("task_id":{"value":")";
  size_t at = launch.find(marker) + marker.size();
  return launch.substr(at, launch.find('"', at) - at);
}

// A gang of three (a PodGroup with minMember 3): two offers launch none of
// it, and the third launches all three at once; the group's status follows.
TEST_F(PodSchedulerTest, AGangIsLaunchedOnlyWhenMinMemberFitAtOnce) {
  store_.put("/registry/scheduling.x-k8s.io/podgroups/default/g",
             R"({"kind":"PodGroup","apiVersion":"scheduling.x-k8s.io/v1alpha1","metadata":{"name":"g",)"
             R"("namespace":"default"},"spec":{"minMember":3},"status":{"phase":"Pending"}})",
             0, [](WriteResult&&) {});
  start();
  auto edge = subscribe("edge-1");
  for (const char* name : {"m0", "m1", "m2"})
    put_pod(name, stored_pod(name, "Always", R"(,"labels":{"scheduling.x-k8s.io/pod-group":"g"})"));
  settle();
  offer("edge-1", 0.5, 1024);
  offer("edge-1", 0.5, 1024);
  EXPECT_TRUE(edge->events("LAUNCH").empty()) << "two of three fit: none may go";
  EXPECT_NE(pod("m0").find("pod group default/g: 2 of its 3 members needed (minMember 3) fit now"), std::string::npos)
      << pod("m0");
  offer("edge-1", 0.5, 1024);
  auto launches = edge->events("LAUNCH");
  ASSERT_EQ(launches.size(), 3u);
  for (const char* name : {"m0", "m1", "m2"})
    EXPECT_NE(pod(name).find(R"("nodeName":"edge-1")"), std::string::npos) << pod(name);
  std::string group = store_.value("/registry/scheduling.x-k8s.io/podgroups/default/g").value_or("");
  EXPECT_NE(group.find(R"("phase":"Scheduled")"), std::string::npos) << group;
  for (const auto& l : launches) scheduler_->status_update("edge-1", {task_of(l), "TASK_RUNNING", ""});
  settle();
  group = store_.value("/registry/scheduling.x-k8s.io/podgroups/default/g").value_or("");
  EXPECT_NE(group.find(R"("phase":"Running")"), std::string::npos) << group;
  EXPECT_NE(group.find(R"("running":3)"), std::string::npos) << group;
}

// A pod of priority 100 that fits nowhere evicts the lowest pod whose room
// it needs (KILL, and a DisruptionTarget condition), is nominated to its
// agent, waits for that room to be offered rather than evicting elsewhere,
// and the room is its own: a waiting pod of equal priority does not take it.
TEST_F(PodSchedulerTest, APreemptorEvictsTheLowerPodAndTakesTheRoomItMade) {
  start();
  auto edge = subscribe("edge-1");
  put_pod("low", stored_pod("low", "Always", "", R"(,"priority":1)"));
  settle();
  offer("edge-1", 0.5, 1024);
  auto launches = edge->events("LAUNCH");
  ASSERT_EQ(launches.size(), 1u);
  std::string low_task = task_of(launches[0]);
  scheduler_->status_update("edge-1", {low_task, "TASK_RUNNING", ""});
  settle();
  // Another lower pod, on edge-2, of a priority between: the second choice.
  auto edge2 = subscribe("edge-2");
  offer("edge-2", 0.5, 1024);  // (first: else mid, fitting nowhere, would preempt low itself)
  put_pod("mid", stored_pod("mid", "Always", "", R"(,"priority":50)"));
  settle();
  ASSERT_EQ(edge2->events("LAUNCH").size(), 1u);
  scheduler_->status_update("edge-2", {task_of(edge2->events("LAUNCH")[0]), "TASK_RUNNING", ""});
  settle();
  put_pod("peer", stored_pod("peer", "Always", "", R"(,"priority":100,"preemptionPolicy":"Never")"));
  settle();
  put_pod("high", stored_pod("high", "Always", "", R"(,"priority":100)"));
  settle();
  auto kills = edge->events("KILL");
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_NE(kills[0].find(low_task), std::string::npos);
  EXPECT_NE(pod("low").find(R"("reason":"PreemptionByScheduler")"), std::string::npos) << pod("low");
  EXPECT_NE(pod("high").find(R"("nominatedNodeName":"edge-1")"), std::string::npos) << pod("high");
  EXPECT_EQ(metric("uvsched_preemptions_total"), 1);
  // The victim ends, and its agent offers the room again.
  scheduler_->status_update("edge-1", {low_task, "TASK_KILLED", ""});
  settle();
  // Tried again before the room is offered: it waits for it, evicting nobody
  // else (mid, on edge-2, would do).
  wait(4'000);
  EXPECT_TRUE(edge2->events("KILL").empty());
  EXPECT_EQ(metric("uvsched_preemptions_total"), 1) << pod("high");
  EXPECT_NE(pod("high").find("Waiting for the room its preemption made on edge-1"), std::string::npos) << pod("high");
  offer("edge-1", 0.5, 1024);
  launches = edge->events("LAUNCH");
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_NE(launches[1].find(R"("name":"default/high")"), std::string::npos) << launches[1];
  EXPECT_EQ(pod("peer").find("nodeName"), std::string::npos) << pod("peer");
  EXPECT_EQ(metric("uvsched_preemptions_total"), 1) << "no second preemption";
}

// A victim slow to end (a KILL that takes longer than the hold) does not use
// up the preemptor's wait for the room: the hold runs from when it ended.
TEST_F(PodSchedulerTest, APreemptorsHoldRunsFromWhenItsVictimEnded) {
  start();
  auto edge = subscribe("edge-1");
  std::string low_task = run_pod(*edge, "edge-1", "low", 1);
  ASSERT_FALSE(low_task.empty());
  auto edge2 = subscribe("edge-2");
  offer("edge-2", 0.5, 1024);
  put_pod("mid", stored_pod("mid", "Always", "", R"(,"priority":50)"));
  settle();
  ASSERT_EQ(edge2->events("LAUNCH").size(), 1u);
  scheduler_->status_update("edge-2", {task_of(edge2->events("LAUNCH")[0]), "TASK_RUNNING", ""});
  settle();
  put_pod("high", stored_pod("high", "Always", "", R"(,"priority":100)"));
  settle();
  ASSERT_EQ(edge->events("KILL").size(), 1u);
  wait(40'000);  // the KILL takes longer than the 30 s hold
  EXPECT_NE(pod("high").find("Waiting for 1 preempted pod(s) to end."), std::string::npos) << pod("high");
  scheduler_->status_update("edge-1", {low_task, "TASK_KILLED", ""});
  settle();
  wait(25'000);  // tried again (its backoff is 32 s by now), the room not yet offered
  EXPECT_TRUE(edge2->events("KILL").empty()) << pod("high");
  EXPECT_EQ(metric("uvsched_preemptions_total"), 1) << pod("high");
  EXPECT_NE(pod("high").find("Waiting for the room its preemption made on edge-1"), std::string::npos) << pod("high");
}

// A task already evicted is no one's victim again: a second, higher
// preemptor arriving before the first victim ends does not kill it twice.
TEST_F(PodSchedulerTest, AVictimAlreadyEvictedIsNotChosenAgain) {
  start();
  auto edge = subscribe("edge-1");
  std::string low_task = run_pod(*edge, "edge-1", "low", 1);
  ASSERT_FALSE(low_task.empty());
  put_pod("mid", stored_pod("mid", "Always", "", R"(,"priority":50)"));
  settle();
  ASSERT_EQ(edge->events("KILL").size(), 1u);
  put_pod("top", stored_pod("top", "Always", "", R"(,"priority":100)"));
  settle();
  wait(2'000);  // and again after its backoff
  EXPECT_EQ(edge->events("KILL").size(), 1u) << pod("top");
  EXPECT_EQ(metric("uvsched_preemptions_total"), 1);
}

}  // namespace
}  // namespace uvsched
