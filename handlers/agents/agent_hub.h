// The node agents (Mesos "slaves"): each subscribes with a long-lived
// newline-delimited JSON stream that carries its events (SUBSCRIBED, LAUNCH,
// KILL, RECONCILE, MESSAGE, HEARTBEAT), posts offers of its free resources,
// rescinds them, and reports task statuses. An agent whose stream closed and
// that is not back within --agent-timeout is lost: its offers are
// invalidated and its tasks reported LOST. The hub owns the agents and the
// offers registry; what tasks mean is the scheduler's business (AgentEvents).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include <simdjson.h>

#include "handlers/agents/agent_channel.h"
#include "handlers/agents/agent_wire.h"
#include "handlers/json_value.h"
#include "handlers/ops/metrics_registry.h"
#include "handlers/router.h"
#include "policy/label_edits.h"
#include "policy/label_selector.h"
#include "policy/offer_registry.h"
#include "policy/placement.h"  // kUnschedulableTaint
#include "policy/taints.h"
#include "reactor/clock.h"

namespace uvsched {

// What the hub tells the scheduler.
class AgentEvents {
 public:
  virtual ~AgentEvents() = default;
  virtual void offers_arrived(const std::vector<std::string>& offer_ids) = 0;
  virtual void status_update(const std::string& agent, const TaskStatus& status) = 0;
  // Registered, or back within the timeout (Reregistered): reconcile tasks.
  virtual void agent_registered(const std::string& agent, bool reregistered) = 0;
  virtual void agent_lost(const std::string& agent) = 0;
  // False while statuses cannot be judged yet (the pods are loading).
  virtual bool ready() const { return true; }
  // An executor on `agent` was lost: its tasks are to be reconciled now.
  virtual void executor_lost(const std::string& agent) { (void)agent; }
  // The framework an agent's SUBSCRIBED names (empty: none registered yet).
  virtual std::string framework_id() const { return {}; }
  // Why `agent` may not report this status (the task runs on another agent), or nullopt.
  virtual std::optional<std::string> refuse_status(const std::string& agent, const TaskStatus& status) const {
    (void)agent;
    (void)status;
    return std::nullopt;
  }
};

class AgentHub {
 public:
  struct Settings {
    uint64_t offer_ttl_ms = 5'000;
    uint64_t offer_linger_ms = 120'000;
    uint64_t agent_timeout_ms = 30'000;
    uint64_t heartbeat_ms = 10'000;
  };
  struct Agent {
    std::string hostname;
    std::string agent_id;
    Labels own_labels;  // what it subscribed with
    Labels labels;      // as placement and the node show them: own_labels with the operator's edits
    Resources total;
    std::shared_ptr<AgentChannel> channel;  // its event stream; null until it subscribes
    bool connected = false;
    uint64_t subscribed_unix_ms = 0;
    // When its node's Ready condition last changed (expected, subscribed or
    // disconnected): the node's status is written on a change, as a kubelet's.
    int64_t ready_since_unix_ms = 0;
    // When its stream last took a heartbeat (or it subscribed): its Lease's
    // renewTime, the node's heartbeat, as Kubernetes keeps it since 1.17;
    // 0 while expected.
    int64_t renewed_unix_ms = 0;
    std::unique_ptr<Timer> lost_timer;
    // The last few FrameworkMessages and executor losses it reported, for
    // operators (GET /v1/agents/{host}); a message's data is kept up to 1 KiB.
    struct KeptMessage {
      std::string executor_id;
      std::string data;
      size_t bytes = 0;
      int64_t unix_ms = 0;
    };
    struct KeptLoss {
      std::string executor_id;
      int64_t status = 0;
      int64_t unix_ms = 0;
    };
    // Vectors, not deques: an empty std::deque allocates ~600 B, twice per
    // agent (6 MB at 5,000 agents, nearly all of them never sent a message).
    std::vector<KeptMessage> messages;
    std::vector<KeptLoss> executor_losses;
  };

  AgentHub(Clock& clock, MetricsRegistry& metrics, Settings settings);
  ~AgentHub();
  void set_events(AgentEvents* events) { events_ = events; }
  void add_routes(Router& router);

  // An agent the store says runs tasks but that has not subscribed to this
  // daemon (it took over, or started again): as a Mesos master after a
  // failover gives agents a time to re-register, it has --agent-timeout to
  // subscribe (and keep its tasks), or it is lost and so are its tasks.
  void expect(const std::string& hostname);
  // An agent subscribes on `channel` (the subscribe route makes it from its
  // response stream; a unit test passes one that records).
  void subscribe_on(const std::string& host, Labels agent_labels, Resources total, const std::string& their_framework,
                    std::shared_ptr<AgentChannel> channel);
  // Sends one event line to the agent; false when it is not connected.
  bool send(const std::string& agent, const std::string& json_line);
  const Agent* agent(const std::string& hostname) const;
  // By hostname, in no order: placement looks agents up by name for every
  // offer it weighs, a hash away rather than a tree walk.
  using AgentMap = absl::flat_hash_map<std::string, std::unique_ptr<Agent>>;
  const AgentMap& agents() const { return agents_; }
  // The agents ordered by hostname, for listings.
  std::vector<const Agent*> sorted_agents() const;
  OfferRegistry& offers() { return offers_; }
  // A claimed offer let go unused: declined 2×ttl on (OfferRegistry::release),
  // so the offer timer is armed for that decline too.
  void release_offer(const std::string& id);
  // Agents lost (past --agent-timeout without their stream) and not back,
  // newest last, the last kLostKept of them: what the status page shows as lost.
  struct LostAgent {
    std::string hostname;
    int64_t unix_ms = 0;
  };
  static constexpr size_t kLostKept = 100;
  const std::deque<LostAgent>& recently_lost() const { return recently_lost_; }
  // Node objects for the pod registry's /api/v1/nodes.
  std::vector<JsonValue> nodes() const;
  // Each node's Lease (coordination.k8s.io/v1, in kube-node-lease), as a
  // kubelet renews it: what `kubectl describe node` shows as its heartbeat.
  // Its renewTime moves with every heartbeat, not nodes_version.
  std::vector<JsonValue> node_leases() const;
  // One node's, without making every other's; nullopt when no such agent.
  std::optional<JsonValue> node_lease(const std::string& hostname) const;
  // Moves whenever nodes() would answer otherwise (an agent expected,
  // subscribed, disconnected or lost; a label, taint or cordon changed): a
  // node watch reads the nodes again only then, not every second.
  uint64_t nodes_version() const { return nodes_version_; }
  // Cordoned agents (kubectl cordon: the node's spec.unschedulable): no new
  // pod is placed on them unless it tolerates node.kubernetes.io/unschedulable;
  // what runs there stays. By hostname, kept whether or not the agent is
  // subscribed; the pod registry stores them and the scheduler loads them.
  bool cordoned(const std::string& hostname) const { return cordoned_.count(hostname) > 0; }
  void set_cordoned(const std::string& hostname, bool on);
  void replace_cordoned(std::set<std::string> hosts) {
    cordoned_ = std::move(hosts);
    ++nodes_version_;
  }
  // Labels set or taken off a node through the API (kubectl label node), by
  // hostname: laid over what the agent subscribed with, now and whenever it
  // subscribes again. Kept whether or not the agent is subscribed; the pod
  // registry stores them and the scheduler loads them.
  void set_label_edits(const std::string& hostname, LabelEdits edits);
  void replace_label_edits(std::map<std::string, LabelEdits> all);
  // Taints put on a node through the API (kubectl taint), by hostname: no
  // new pod is placed on it unless it tolerates each NoSchedule and NoExecute
  // one. Kept whether or not the agent is subscribed; the pod registry stores
  // them and the scheduler loads them. (A cordon's taint is not among them.)
  const std::vector<Taint>& taints(const std::string& hostname) const;
  bool tainted() const { return !taints_.empty(); }  // any agent at all: placement's walk skips the lookups when none
  // Any PreferNoSchedule taint on any agent: placement looks twice, away from them first.
  bool preferences() const { return preferences_ > 0; }
  void set_taints(const std::string& hostname, std::vector<Taint> taints);
  void replace_taints(std::map<std::string, std::vector<Taint>> all);
  // Timers stop; the streams that close from now on (the stopping daemon
  // closes them) mark their agents disconnected, no more: no warning, and
  // no time-out that would lose them.
  void stop();
  // Leadership lost: every agent's stream ends (it subscribes again, to the
  // leader, through a standby's redirect), and agents and offers are forgotten.
  void drop_all();

 private:
  void subscribe(RequestContext& ctx);
  void post_offers(RequestContext& ctx);
  void rescind(RequestContext& ctx);
  void post_status(RequestContext& ctx);
  void post_message(RequestContext& ctx);
  void post_executor_lost(RequestContext& ctx);
  void list_agents(RequestContext& ctx);
  void get_agent(RequestContext& ctx);
  Agent* subscribed_or_404(RequestContext& ctx);
  void send_message(RequestContext& ctx);
  void list_offers(RequestContext& ctx);
  void disconnected(const std::string& hostname);
  void lose(const std::string& hostname);
  JsonValue node_lease(const Agent& a) const;
  // Why its node is Ready or not, for the condition's message.
  std::string ready_message(const Agent& a) const;
  // Its labels as placement and the node show them: what it subscribed with, and the operator's edits.
  void relabel(Agent& a) const;
  uint64_t nodes_version_ = 0;  // (nodes_version)
  void tick_offers();
  void arm_offer_timer(uint64_t now);
  void heartbeat();

  Clock& clock_;
  Settings settings_;
  AgentEvents* events_ = nullptr;
  bool stopped_ = false;  // stop() was called: streams closing now are the daemon's own doing
  OfferRegistry offers_;
  AgentMap agents_;
  std::deque<LostAgent> recently_lost_;
  std::set<std::string> cordoned_;
  std::map<std::string, LabelEdits> label_edits_;
  std::map<std::string, std::vector<Taint>> taints_;
  size_t preferences_ = 0;  // PreferNoSchedule taints among taints_
  std::unique_ptr<Timer> offer_timer_;
  std::unique_ptr<Timer> heartbeat_timer_;
  simdjson::dom::parser parser_;  // the agents' posts, one at a time
  CounterFamily& offer_events_;
  CounterFamily& agent_events_;
  CounterFamily& refusals_;  // what an agent tried on what is not its own
};

}  // namespace uvsched
