// The agent hub's orchestration without sockets or a loop: agents subscribe on
// channels that record, post through the hub's routes on exchanges with no
// connection, and a ManualClock runs the agent time-out and heartbeats. What
// the scheduler hears (AgentEvents) is recorded in order.
#include "handlers/agents/agent_hub.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "handlers/ops/metrics_registry.h"
#include "handlers/pods/pod_validation.h"
#include "reactor/log.h"
#include "reactor/manual_clock.h"
#include "tests/support/recording_channel.h"

namespace uvsched {
namespace {

using test::post;
using test::RecordingChannel;
using test::route;
using test::status_of;

constexpr uint64_t kAgentTimeoutMs = 30'000;
constexpr uint64_t kHeartbeatMs = 10'000;

// The scheduler's side, as a list of what it heard, in order.
class RecordedEvents final : public AgentEvents {
 public:
  void offers_arrived(const std::vector<std::string>& ids) override {
    heard.push_back("offers " + std::to_string(ids.size()));
    offer_ids.insert(offer_ids.end(), ids.begin(), ids.end());
  }
  void status_update(const std::string& agent, const TaskStatus& s) override {
    heard.push_back("status " + agent + " " + s.task_id + " " + s.state);
  }
  void agent_registered(const std::string& agent, bool re) override {
    heard.push_back(std::string(re ? "reregistered " : "registered ") + agent);
  }
  void agent_lost(const std::string& agent) override { heard.push_back("lost " + agent); }
  bool ready() const override { return is_ready; }
  std::string framework_id() const override { return framework; }
  std::optional<std::string> refuse_status(const std::string& agent, const TaskStatus& s) const override {
    if (s.task_id.rfind(agent + ":", 0) == 0) return std::nullopt;  // (this test's rule: ids start with their agent)
    return "task " + s.task_id + " is not " + agent + "'s";
  }

  std::vector<std::string> heard;
  std::vector<std::string> offer_ids;
  bool is_ready = true;
  std::string framework = "uvsched-1";
};

std::string offers(const std::vector<std::string>& ids) {
  std::string out = R"({"offers":[)";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ",";
    out += R"({)" + (ids[i].empty() ? std::string() : R"("id":{"value":")" + ids[i] + R"("},)") +
           R"("resources":[{"name":"cpus","type":"SCALAR","scalar":{"value":1}},)"
           R"({"name":"mem","type":"SCALAR","scalar":{"value":256}}]})";
  }
  return out + "]}";
}

std::string statuses(const std::vector<std::pair<std::string, std::string>>& s) {
  std::string out = R"({"statuses":[)";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += R"({"task_id":{"value":")" + s[i].first + R"("},"state":")" + s[i].second + R"("})";
  }
  return out + "]}";
}

class AgentHubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_configure(LogLevel::kOff, LogFormat::kText);
    AgentHub::Settings s;
    s.agent_timeout_ms = kAgentTimeoutMs;
    s.heartbeat_ms = kHeartbeatMs;
    s.offer_ttl_ms = 10 * kAgentTimeoutMs;  // offers outlive the time-out: only a loss ends them here
    hub_ = std::make_unique<AgentHub>(clock_, metrics_, s);
    hub_->set_events(&events_);
    hub_->add_routes(router_);
  }
  void TearDown() override {
    hub_->stop();
    log_configure(LogLevel::kInfo, LogFormat::kText);
  }
  std::shared_ptr<RecordingChannel> subscribe(const std::string& host, const std::string& their_framework = "") {
    auto channel = std::make_shared<RecordingChannel>();
    hub_->subscribe_on(host, {}, Resources{4, 4096, {}}, their_framework, channel);
    return channel;
  }
  int post_status(const std::string& host, const std::vector<std::pair<std::string, std::string>>& s) {
    return status_of(post(router_, "/v1/agents/" + host + "/status", statuses(s)));
  }

  ManualClock clock_;
  MetricsRegistry metrics_;
  RecordedEvents events_;
  Router router_;
  std::unique_ptr<AgentHub> hub_;
};

TEST_F(AgentHubTest, ASubscribeIsAnsweredSubscribedWithTheFrameworkAndHeardOnce) {
  auto edge = subscribe("edge-1");
  ASSERT_EQ(edge->types(), std::vector<std::string>{"SUBSCRIBED"});
  EXPECT_NE(edge->events("SUBSCRIBED")[0].find(R"("framework_id":{"value":"uvsched-1"})"), std::string::npos)
      << edge->events("SUBSCRIBED")[0];
  EXPECT_EQ(events_.heard, std::vector<std::string>{"registered edge-1"});
}

TEST_F(AgentHubTest, AnAgentOfAFrameworkThatFailedOverIsToldToShutItDown) {
  auto edge = subscribe("edge-1", "uvsched-0");
  EXPECT_EQ(edge->types(), (std::vector<std::string>{"SUBSCRIBED", "SHUTDOWN_FRAMEWORK"}));
  EXPECT_NE(edge->events("SHUTDOWN_FRAMEWORK")[0].find("uvsched-0"), std::string::npos);
  auto same = subscribe("edge-2", "uvsched-1");
  EXPECT_EQ(same->types(), std::vector<std::string>{"SUBSCRIBED"}) << "its own framework: nothing to shut down";
}

TEST_F(AgentHubTest, OffersOfASubscribedAgentAreLiveAndHeard) {
  subscribe("edge-1");
  std::string answer = post(router_, "/v1/agents/edge-1/offers", offers({"", "edge-1-mine"}));
  ASSERT_EQ(status_of(answer), 200) << answer;
  ASSERT_EQ(events_.offer_ids.size(), 2u);
  EXPECT_EQ(events_.offer_ids[1], "edge-1-mine");
  EXPECT_EQ(events_.offer_ids[0].rfind("edge-1-o", 0), 0u) << "the daemon's own id: " << events_.offer_ids[0];
  EXPECT_EQ(hub_->offers().live_count(), 2u);
  EXPECT_EQ(events_.heard.back(), "offers 2");
}

TEST_F(AgentHubTest, ABatchOfOffersIsTakenWholeOrNotAtAll) {
  subscribe("edge-1");
  subscribe("edge-2");
  struct Case {
    const char* why;
    std::string host;
    std::vector<std::string> ids;
    int status;
  } cases[] = {
      {"another agent's id prefix", "edge-1", {"edge-1-a", "edge-2-b"}, 400},
      {"an id twice in the batch", "edge-1", {"edge-1-a", "edge-1-a"}, 409},
      {"not subscribed", "edge-9", {""}, 409},
  };
  for (const auto& c : cases) {
    size_t heard = events_.heard.size();
    std::string answer = post(router_, "/v1/agents/" + c.host + "/offers", offers(c.ids));
    EXPECT_EQ(status_of(answer), c.status) << c.why << ": " << answer;
    EXPECT_EQ(hub_->offers().live_count(), 0u) << c.why << ": no offer of the batch is live";
    EXPECT_EQ(events_.heard.size(), heard) << c.why << ": nothing announced";
  }
  // An id already known refuses the batch with it, the new one included.
  ASSERT_EQ(status_of(post(router_, "/v1/agents/edge-1/offers", offers({"edge-1-a"}))), 200);
  EXPECT_EQ(status_of(post(router_, "/v1/agents/edge-1/offers", offers({"edge-1-b", "edge-1-a"}))), 409);
  EXPECT_EQ(hub_->offers().live_count(), 1u);
  EXPECT_FALSE(hub_->offers().state("edge-1-b").has_value());
}

TEST_F(AgentHubTest, AnAgentRescindsItsOwnOffersOnly) {
  subscribe("edge-1");
  subscribe("edge-2");
  ASSERT_EQ(status_of(post(router_, "/v1/agents/edge-1/offers", offers({"edge-1-a"}))), 200);
  EXPECT_EQ(status_of(route(router_, "DELETE", "/v1/agents/edge-2/offers/edge-1-a")), 403);
  EXPECT_EQ(hub_->offers().live_count(), 1u);
  EXPECT_EQ(status_of(route(router_, "DELETE", "/v1/agents/edge-1/offers/edge-1-a")), 200);
  EXPECT_EQ(hub_->offers().live_count(), 0u);
  EXPECT_EQ(status_of(route(router_, "DELETE", "/v1/agents/edge-1/offers/edge-1-zz")), 404);
}

TEST_F(AgentHubTest, StatusesAreHeardInOrderAndABatchWithAnotherAgentsTaskIsRefusedWhole) {
  subscribe("edge-1");
  EXPECT_EQ(post_status("edge-1", {{"edge-1:a", "TASK_RUNNING"}, {"edge-1:b", "TASK_FINISHED"}}), 200);
  EXPECT_EQ(post_status("edge-1", {{"edge-1:c", "TASK_RUNNING"}, {"edge-2:x", "TASK_FAILED"}}), 403);
  EXPECT_EQ(events_.heard, (std::vector<std::string>{"registered edge-1", "status edge-1 edge-1:a TASK_RUNNING",
                                                     "status edge-1 edge-1:b TASK_FINISHED"}));
}

TEST_F(AgentHubTest, StatusesWaitWhileTheSchedulerIsLoading) {
  subscribe("edge-1");
  events_.is_ready = false;
  std::string answer = post(router_, "/v1/agents/edge-1/status", statuses({{"edge-1:a", "TASK_RUNNING"}}));
  EXPECT_EQ(status_of(answer), 503) << answer;
  EXPECT_NE(answer.find("Retry-After: 1\r\n"), std::string::npos) << answer;
  EXPECT_EQ(events_.heard.size(), 1u) << "the status is not heard";
}

TEST_F(AgentHubTest, AnAgentGoneLongerThanTheTimeoutIsLostWithItsOffers) {
  auto edge = subscribe("edge-1");
  ASSERT_EQ(status_of(post(router_, "/v1/agents/edge-1/offers", offers({"edge-1-a"}))), 200);
  edge->hang_up();
  clock_.advance(kAgentTimeoutMs - 1);
  EXPECT_EQ(events_.heard.back(), "offers 1") << "not lost before its time-out";
  EXPECT_NE(hub_->agent("edge-1"), nullptr);
  clock_.advance(1);
  EXPECT_EQ(events_.heard.back(), "lost edge-1");
  EXPECT_EQ(hub_->agent("edge-1"), nullptr);
  EXPECT_EQ(hub_->offers().live_count(), 0u);
  EXPECT_EQ(status_of(post(router_, "/v1/agents/edge-1/offers", offers({""}))), 409) << "it must subscribe again";
}

TEST_F(AgentHubTest, AnAgentBackWithinTheTimeoutIsReregisteredNotLost) {
  auto edge = subscribe("edge-1");
  edge->hang_up();
  clock_.advance(kAgentTimeoutMs / 2);
  subscribe("edge-1");
  clock_.advance(kAgentTimeoutMs * 2);
  EXPECT_EQ(events_.heard, (std::vector<std::string>{"registered edge-1", "reregistered edge-1"}));
}

// A stopping daemon closes every agent's stream itself: that is no agent
// going away, so nothing is armed to lose it (a library user's loop may run
// on long after the hub stopped) and nothing is heard.
TEST_F(AgentHubTest, StreamsClosedAfterStopAreNotAgentsLost) {
  auto edge = subscribe("edge-1");
  hub_->stop();
  edge->hang_up();
  clock_.advance(kAgentTimeoutMs * 2);
  EXPECT_EQ(events_.heard, std::vector<std::string>{"registered edge-1"});
  ASSERT_NE(hub_->agent("edge-1"), nullptr);
  EXPECT_FALSE(hub_->agent("edge-1")->connected);
}

TEST_F(AgentHubTest, AnExpectedAgentThatNeverSubscribesIsLost) {
  hub_->expect("edge-7");  // a predecessor's pods name it
  clock_.advance(kAgentTimeoutMs - 1);
  EXPECT_TRUE(events_.heard.empty());
  clock_.advance(1);
  EXPECT_EQ(events_.heard, std::vector<std::string>{"lost edge-7"});
}

TEST_F(AgentHubTest, AnExpectedAgentThatSubscribesInTimeIsReregistered) {
  hub_->expect("edge-7");
  clock_.advance(kAgentTimeoutMs / 2);
  subscribe("edge-7");
  clock_.advance(kAgentTimeoutMs);
  EXPECT_EQ(events_.heard, std::vector<std::string>{"reregistered edge-7"});
}

TEST_F(AgentHubTest, ConnectedAgentsHearAHeartbeatEveryInterval) {
  auto edge = subscribe("edge-1");
  auto gone = subscribe("edge-2");
  gone->hang_up();
  clock_.advance(kHeartbeatMs * 3);
  EXPECT_EQ(edge->events("HEARTBEAT").size(), 3u);
  EXPECT_EQ(gone->events("HEARTBEAT").size(), 0u);
}

// kubectl label node: the operator's edits are laid over the agent's own
// labels, kept while it is away, and laid over what it subscribes with next;
// a node shows its hostname label once, whatever the agent says it is, and
// placement reads the labels the node shows (the hostname label included:
// nodeSelectors and inter-pod terms name it).
TEST_F(AgentHubTest, TheOperatorsLabelEditsAreLaidOverTheAgentsOwn) {
  auto channel = std::make_shared<RecordingChannel>();
  hub_->subscribe_on("edge-1", Labels{{"disk", "ssd"}, {"kubernetes.io/hostname", "other"}}, Resources{4, 4096, {}}, "",
                     channel);
  hub_->set_label_edits("edge-1", {{"zone", "a"}, {"disk", std::nullopt}});
  EXPECT_EQ(hub_->agent("edge-1")->labels, (Labels{{"kubernetes.io/hostname", "edge-1"}, {"zone", "a"}}));
  std::string node = hub_->nodes()[0].dump();
  EXPECT_NE(node.find(R"("labels":{"zone":"a","kubernetes.io/hostname":"edge-1"})"), std::string::npos) << node;
  hub_->set_label_edits("ghost", {{"zone", "b"}});  // not subscribed: kept for when it does
  hub_->subscribe_on("ghost", Labels{{"disk", "hdd"}}, Resources{4, 4096, {}}, "",
                     std::make_shared<RecordingChannel>());
  EXPECT_EQ(hub_->agent("ghost")->labels,
            (Labels{{"disk", "hdd"}, {"kubernetes.io/hostname", "ghost"}, {"zone", "b"}}));
  hub_->subscribe_on("edge-1", Labels{{"disk", "nvme"}, {"rack", "7"}}, Resources{4, 4096, {}}, "",
                     std::make_shared<RecordingChannel>());
  EXPECT_EQ(hub_->agent("edge-1")->labels,
            (Labels{{"kubernetes.io/hostname", "edge-1"}, {"rack", "7"}, {"zone", "a"}}));
  hub_->replace_label_edits({});  // a new leader's load: none stored
  EXPECT_EQ(hub_->agent("edge-1")->labels,
            (Labels{{"disk", "nvme"}, {"kubernetes.io/hostname", "edge-1"}, {"rack", "7"}}));
}

// A node watch reads the nodes again only when nodes_version moved: so
// whatever changes what nodes() answers must move it. Each step below is one
// kind of change, or none (offers, heartbeats): the version moves exactly
// when the nodes' text does.
TEST_F(AgentHubTest, TheNodesVersionMovesWheneverTheNodesChange) {
  auto text = [this] {
    std::string all;
    for (const JsonValue& n : hub_->nodes()) all += n.dump() + "\n";
    return all;
  };
  std::shared_ptr<RecordingChannel> edge;
  struct Step {
    const char* name;
    std::function<void()> run;
  };
  std::vector<Step> steps = {
      {"an agent subscribes", [&] { edge = subscribe("edge-1"); }},
      {"offers (the nodes stay)", [&] { post(router_, "/v1/agents/edge-1/offers", offers({"edge-1-a"})); }},
      {"heartbeats (the nodes stay)", [&] { clock_.advance(kHeartbeatMs); }},
      {"labelled",
       [&] {
         hub_->set_label_edits("edge-1", {{"zone", std::string("north")}});
       }},
      {"all labels replaced", [&] { hub_->replace_label_edits({}); }},
      {"cordoned", [&] { hub_->set_cordoned("edge-1", true); }},
      {"all cordons replaced", [&] { hub_->replace_cordoned({}); }},
      {"tainted", [&] { hub_->set_taints("edge-1", {{.key = "k", .effect = "NoSchedule"}}); }},
      {"all taints replaced", [&] { hub_->replace_taints({}); }},
      {"another expected", [&] { hub_->expect("edge-2"); }},
      {"disconnected", [&] { edge->hang_up(); }},
      {"lost", [&] { clock_.advance(kAgentTimeoutMs); }},
      {"subscribes again", [&] { edge = subscribe("edge-1"); }},
      {"all dropped", [&] { hub_->drop_all(); }},
  };
  for (const auto& step : steps) {
    std::string before = text();
    uint64_t version = hub_->nodes_version();
    step.run();
    EXPECT_EQ(text() != before, hub_->nodes_version() != version) << step.name;
  }
}

// A node's Ready condition carries when it last changed (a kubelet writes
// node status on a change); the heartbeat is its Lease's renewTime, moved by
// each heartbeat the open stream takes, and by none once it has closed.
TEST_F(AgentHubTest, ANodesLeaseIsRenewedByHeartbeatsAndItsConditionByChanges) {
  int64_t start = clock_.unix_ms();
  auto edge = subscribe("edge-1");
  auto lease_renewed = [this] {
    std::vector<JsonValue> leases = hub_->node_leases();
    EXPECT_EQ(leases.size(), 1u);
    const JsonValue* t = leases.empty() ? nullptr : leases[0].find({"spec", "renewTime"});
    return t ? t->text() : std::string("<none>");
  };
  auto ready = [this](const char* field) {
    std::vector<JsonValue> nodes = hub_->nodes();
    const JsonValue* c = nodes[0].find({"status", "conditions"});
    return c && !c->items().empty() ? c->items()[0].str(field) : std::string("<none>");
  };
  EXPECT_EQ(ready("lastTransitionTime"), rfc3339(start));
  EXPECT_EQ(ready("lastHeartbeatTime"), rfc3339(start));
  EXPECT_EQ(ready("message"), "the agent is subscribed");
  std::string first = lease_renewed();
  EXPECT_EQ(first.substr(19), ".000000Z") << first;
  JsonValue lease = hub_->node_leases()[0];
  EXPECT_EQ(lease.str("kind"), "Lease");
  EXPECT_EQ(lease.find({"metadata", "namespace"})->text(), "kube-node-lease");
  EXPECT_EQ(lease.find({"spec", "holderIdentity"})->text(), "edge-1");
  EXPECT_EQ(lease.find({"spec", "leaseDurationSeconds"})->dump(), std::to_string(kAgentTimeoutMs / 1000));
  EXPECT_EQ(lease.find({"metadata", "ownerReferences"})->items()[0].str("uid"), hub_->agent("edge-1")->agent_id);
  ASSERT_TRUE(hub_->node_lease("edge-1"));
  EXPECT_EQ(hub_->node_lease("edge-1")->dump(), lease.dump()) << "one node's, as in the list";
  EXPECT_FALSE(hub_->node_lease("nope"));

  clock_.advance(kHeartbeatMs);
  std::string beat = lease_renewed();
  EXPECT_GT(beat, first);
  EXPECT_EQ(beat.substr(0, 19), rfc3339(start + static_cast<int64_t>(kHeartbeatMs)).substr(0, 19));
  EXPECT_EQ(ready("lastTransitionTime"), rfc3339(start)) << "a heartbeat changes no node";

  clock_.advance(kHeartbeatMs / 2);
  edge->hang_up();
  EXPECT_EQ(ready("status"), "Unknown");
  EXPECT_EQ(ready("lastTransitionTime"), rfc3339(start + static_cast<int64_t>(kHeartbeatMs * 3 / 2)));
  EXPECT_NE(ready("message").find("event stream closed"), std::string::npos) << ready("message");
  clock_.advance(kHeartbeatMs);
  EXPECT_EQ(lease_renewed(), beat) << "no heartbeat reaches a closed stream";

  hub_->expect("edge-2");  // one a takeover waits for: no renewal yet
  std::vector<JsonValue> leases = hub_->node_leases();
  ASSERT_EQ(leases.size(), 2u);
  EXPECT_EQ(leases[1].find({"spec", "renewTime"}), nullptr) << leases[1].dump();
  EXPECT_EQ(leases[1].find({"metadata", "ownerReferences"}), nullptr) << leases[1].dump();
  EXPECT_NE(hub_->nodes()[1].dump().find("waiting for the agent, which runs tasks, to subscribe"), std::string::npos)
      << hub_->nodes()[1].dump();
}

TEST_F(AgentHubTest, ASecondSubscribeReplacesTheFirstStream) {
  auto first = subscribe("edge-1");
  auto second = subscribe("edge-1");
  EXPECT_FALSE(first->open());
  EXPECT_TRUE(hub_->send("edge-1", R"({"type":"KILL"})"));
  EXPECT_EQ(second->events("KILL").size(), 1u);
  EXPECT_EQ(first->events("KILL").size(), 0u);
  first->hang_up();  // the old stream's close comes late: the agent stays connected
  EXPECT_TRUE(hub_->agent("edge-1")->connected);
}

}  // namespace
}  // namespace uvsched
