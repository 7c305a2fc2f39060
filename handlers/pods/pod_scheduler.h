// The pod scheduler (the seed's KubernetesScheduler): pending pods, seen
// through the store's watch (so kubectl's pods are seen at once), wait in a
// delay queue; each is placed first-come-first-serve on an offer, launched
// on the agent's stream and bound (spec.nodeName and the uvsched.io/*
// annotations); task statuses move the pod's phase; a pod that fits nowhere
// backs off (1 s doubling to 60 s), says why in its PodScheduled condition,
// and is woken early by an offer that fits. Deleting a launched pod sends
// KILL with the pod's grace period; its object goes when the task is gone. On start, tasks are recovered
// from the pods' annotations in every namespace. What it launched is
// followed to its end by its PodTaskLifecycle (pod_task_lifecycle.h), which
// shares its task registry; the agents' events and the registry's hooks
// about launched pods go there.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "handlers/agents/agent_hub.h"
#include "handlers/json_value.h"
#include "handlers/ops/metrics_registry.h"
#include "handlers/pods/active_deadlines.h"
#include "handlers/pods/framework_registration.h"
#include "handlers/pods/inter_pod_filters.h"
#include "handlers/pods/pod_binding.h"
#include "handlers/pods/pod_groups.h"
#include "handlers/pods/pod_task_lifecycle.h"
#include "handlers/pods/pod_writer.h"
#include "handlers/pods/preemption_candidates.h"
#include "handlers/pods/scheduling_log.h"
#include "handlers/router.h"
#include "policy/delay_queue.h"
#include "policy/kept_out_pods.h"
#include "policy/nominations.h"
#include "policy/pending_reason.h"
#include "policy/placement.h"
#include "policy/pod_task.h"
#include "policy/pod_task_registry.h"
#include "reactor/clock.h"
#include "reactor/clock_turn.h"
#include "reactor/http_server.h"
#include "storage/store.h"

namespace uvsched {

class PodScheduler final : public AgentEvents {
 public:
  // (pod_binding.h)
  static constexpr const char* kHostAnnotation = uvsched::kHostAnnotation;
  static constexpr const char* kTaskAnnotation = uvsched::kTaskAnnotation;
  static constexpr const char* kAgentAnnotation = uvsched::kAgentAnnotation;
  static constexpr const char* kOfferAnnotation = uvsched::kOfferAnnotation;
  static constexpr const char* kImagesAnnotation = uvsched::kImagesAnnotation;
  // Offers weighed in one pass over the due pods before the rest wait for the
  // loop's next turn: a pod that fits nowhere is weighed against every offer,
  // and thousands of them due together (their backoffs end together) held the
  // loop, and every API answer, for a second or more. About 10 ms of work.
  static constexpr size_t kLooksPerPass = 100'000;

  struct Settings {
    uint64_t reconcile_interval_ms = 300'000;  // implicit reconciliation; 0: only once, 15 s after start
    uint64_t failover_timeout_ms = 120'000;    // the framework id's lifetime in the store
  };

  PodScheduler(Store& store, Clock& clock, AgentHub& hub, PodWriter& writer, MetricsRegistry& metrics,
               std::function<bool()> is_leader, Settings settings);
  ~PodScheduler() override;
  void start();
  void stop();
  // Leadership moved. Taking over: everything followed as a standby is
  // dropped and the pods, the tasks their annotations name and the framework
  // id are loaded afresh before anything acts (pods the old leader bound since
  // start are known then). Stepping down: it stops acting and forgets.
  void leadership_changed(bool leading);
  // False until the pods are loaded: statuses are refused then (503), so no
  // task is killed for being unknown before its pod could be read.
  bool ready() const override { return watching_; }
  std::optional<std::string> refuse_status(const std::string& agent, const TaskStatus& status) const override {
    return lifecycle_.refuse_status(agent, status);
  }

  // The registry asks before deleting a pod: true when the pod has a live
  // task, in which case a KILL goes out and `done` is given the answer.
  // `grace` is the DeleteOptions' gracePeriodSeconds, when given: the pod's
  // own (spec.terminationGracePeriodSeconds) otherwise; 0 removes the object
  // at once, as a forced delete does, while the KILL still goes.
  bool handle_delete(const std::string& ns, const std::string& name, std::optional<int64_t> grace,
                     std::function<void(HttpResponse&&)> done) {
    return lifecycle_.handle_delete(ns, name, grace, std::move(done));
  }
  // An update changed the pod's container images (stored): as a kubelet
  // restarts such containers whatever the restart policy, its task is killed
  // and the pod placed again, to run what it now names.
  void images_changed(const std::string& ns, const std::string& name) { lifecycle_.images_changed(ns, name); }
  // An update changed when the pod's active deadline passes (lowered, set,
  // or its startTime written): a running pod's task is killed then.
  void deadline_changed(const std::string& ns, const std::string& name, std::optional<int64_t> deadline_unix_ms) {
    lifecycle_.deadline_changed(ns, name, deadline_unix_ms);
  }

  // The registry asks before storing a new pod. A non-null answer means the
  // pod was changed in place — bound, or marked unschedulable with why — and
  // is to be called with the create's outcome (and the stored revision and JSON).
  using CreateOutcome = std::function<void(bool written, int64_t revision, const std::string& json)>;
  CreateOutcome place_on_create(const std::string& ns, const std::string& name, JsonValue& pod);
  // Where `pod` would be placed now, claiming nothing: the agent of the first
  // live offer it fits, or "pending: " and why it would wait (a dry run).
  std::string preview_placement(const JsonValue& pod);
  // The same for a PodGroup (a dry run of its create or update): whether its
  // waiting members would be placed now, and where, or why they would wait.
  std::string preview_group(const JsonValue& group);

  // kubectl cordon or uncordon stored: an uncordoned agent's offers wake the
  // pods waiting for room, as new offers would.
  void cordon_changed(const std::string& agent, bool cordoned);
  // kubectl label node stored (all the node's edits): placement sees the
  // labels from now on, and its live offers wake the pods waiting for room.
  void node_labels_changed(const std::string& agent, LabelEdits edits);
  // kubectl taint stored (all the node's taints): placement sees them from
  // now on, and its live offers wake the pods waiting for room.
  void taints_changed(const std::string& agent, std::vector<Taint> taints);
  void offers_arrived(const std::vector<std::string>& offer_ids) override;
  void status_update(const std::string& agent, const TaskStatus& status) override {
    lifecycle_.status_update(agent, status);
  }
  void agent_registered(const std::string& agent, bool reregistered) override;
  void agent_lost(const std::string& agent) override { lifecycle_.agent_lost(agent); }

  size_t pending() const { return pending_.size(); }
  // The placement work done so far (offers weighed, placed pods counted): a pass's budget is in it.
  size_t looks() const { return looks_; }
  // GET /v1/queue: the waiting pods in the order they will be tried.
  void add_routes(Router& router);
  // The pods are loaded and their changes followed.
  bool watching() const { return watching_; }
  size_t tasks() const { return tasks_.size(); }
  std::string framework_id() const override { return framework_.id(); }
  // Its tasks are reconciled now.
  void executor_lost(const std::string& agent) override { lifecycle_.agent_registered(agent); }

 private:
  // How long a preemptor waits for the room its victims left to be offered
  // before it may preempt elsewhere.
  static constexpr uint64_t kNominationHoldMs = 30'000;
  struct Pending {
    PodNeeds needs;         // what placement reads of the pod
    std::string group;      // the pod group it belongs to ("ns/name"), or ""
    int32_t priority = 0;   // spec.priority: the queue's order, and whom it may preempt
    uint32_t grace_s = 30;  // spec.terminationGracePeriodSeconds, for its task
    bool preempt_never = false;
    std::vector<std::pair<std::string, uint64_t>> victims;  // the tasks (pod, serial) it preempted, until they end
    std::string last_reason;
    std::string last_why;           // why its last search found no offer (last_reason before any preemption's note)
    bool from_create = false;       // queued by its create: the watch's copy of the create is nothing new
    uint64_t waiting_since_ms = 0;  // monotonic: when it was first queued
    // The agents that refused it for what no offer changes
    // (PendingReason::refused_until_change), over its tries since the
    // kept_out_ stamp last moved (kept_out_at: the stamp then). An offer of
    // one of them does not wake it until the stamp moves again.
    std::optional<uint64_t> kept_out_at;
    AgentBits refused_on;
  };
  // The agents `seen` says refused a pod until something changes, by number.
  std::vector<uint32_t> refused_until_change(const PendingReason& seen);
  // Whether every live offer is of an agent that refused `entry` until
  // something changes, and nothing has: a search would refuse it again.
  bool refused_by_every_offer(const Pending& entry, uint64_t now);
  // One walk over the live offers for a pod: the first that fits (claimed
  // for `claimant` when given), or else what was seen and why it failed.
  struct Search {
    const Offer* offer = nullptr;
    PendingReason seen;  // the offers weighed and why each did not fit
  };
  // The PodScheduled message of a waiting pod: the reason, and its place in the queue now.
  std::string with_position(const std::string& key, const std::string& reason) const;
  // Why a pod that needs `needs` waits, in kube-scheduler's words (PendingReason).
  std::string why_pending(const Search& s, const PodNeeds& needs) const;

  void load();
  void load_label_edits();
  void load_taints();
  void load_pods();
  void load_again_after(const StoreStatus& failure);
  void forget_everything();
  void list_queue(RequestContext& ctx);
  Pending& pending_entry(const std::string& key);  // the pod's entry, made (and stamped) when new
  // Failover: the task a bound pod's annotations name, known again (its
  // deadline, its stay on a tainted agent and its group followed again).
  std::optional<RecoveredTask> recover_task(const KeyValue& kv);
  void forget_unlisted(const std::set<std::string>& listed);
  void on_pod(const KeyValue& kv, bool deleted);
  // A pod that ran its course (`phase` Succeeded or Failed): nothing is kept for it but its queue entry.
  void pod_ended(const std::string& key, const std::string& phase);
  void schedule_due();
  void arm_queue_timer();
  void try_place(const std::string& key);
  // Places a pod group whole or not at all (policy/gang.h): every waiting
  // member is weighed, on an offer of its own, and all that fit are launched
  // only if the group reaches minMember with them; else none claims anything.
  void try_group(const std::string& group, uint64_t now);
  // Which of a group's waiting members fit now, each on an offer of its own
  // (the largest first), claiming nothing; and why the first that did not fit waits.
  struct GroupPlan {
    std::vector<std::pair<std::string, Offer>> plan;
    std::string first_reason;
  };
  GroupPlan plan_group(const std::vector<std::string>& waiting, uint64_t now);
  // A waiting pod says why (its PodScheduled condition, once per new reason)
  // and backs off until an offer that fits arrives.
  // `refused`: the agents that refused it until something changes (refused_until_change).
  void wait_and_say(const std::string& key, Pending& entry, const std::string& reason, uint64_t now,
                    const std::vector<uint32_t>& refused = {});
  // A pod that fits nowhere, with lower-priority pods running: evicts the
  // fewest and lowest on one agent (policy/preemption.h), records the node
  // as status.nominatedNodeName, and says what it did; empty when it cannot.
  // It preempts again only once its earlier victims are gone.
  std::string preempt_for(const std::string& key, Pending& entry, uint64_t now);
  void evict(const std::string& victim, const std::string& preemptor, int32_t priority, const std::string& node);
  GangCounts count_members(const std::set<std::string>& members) const;
  bool fits(const PodNeeds& needs, const Offer& offer) const;
  // Who looks: its key (claiming what it finds when `claim`) and its
  // priority. Agents nominated for another pod of at least its priority are
  // passed over: the room a preemption made there is that pod's.
  struct Seeker {
    const std::string& key;
    int32_t priority = 0;
    bool claim = false;
  };
  // `taken`: offers planned for others; `planned`: pods placed with it
  // (a gang's), counted by the inter-pod filters as if placed.
  Search search_offers(const PodNeeds& needs, const Seeker& who, uint64_t now,
                       const std::set<std::string>* taken = nullptr,
                       const std::vector<InterPodFilters::Planned>* planned = nullptr);
  // The inter-pod filters for a pod (inter_pod_filters.h), or nullopt when it has none to weigh.
  std::optional<InterPodFilters> inter_pod_filters(const std::string& key, const PodNeeds& needs,
                                                   const std::vector<InterPodFilters::Planned>* planned = nullptr);
  // A pod was placed: the waiting pods whose required affinity selects it may fit now, and are tried again.
  void wake_affinity_waiters(const std::string& placed, const PodNeeds& needs);
  // A pod no offer fits: counted, backed off, queued for its next try and
  // listening for an offer that fits. True when `reason` is news to the pod.
  bool wait_for_offer(const std::string& key, Pending& entry, const std::string& reason, uint64_t now,
                      const std::vector<uint32_t>& refused = {});
  // The placed pods changed (PodTaskRegistry's observer): a pod kept out may be let in.
  void placed_changed(std::string_view pod_key, uint32_t label_set, PodTaskRegistry::PlacedChange change);
  void observe_tasks();  // tasks_'s observer, set again whenever tasks_ is made anew
  // Reads the pod back and handles it as the watch would (after a create
  // that queued it failed, whatever holds the name now is what counts).
  void resync(const std::string& key);
  void launch(const std::string& key, const PodNeeds& needs, const Offer& offer);
  // Forgets a waiting pod: its queue place, its offer listener, its entry.
  void drop_pending(const std::string& key);
  struct PreparedLaunch {
    uint64_t serial;
    std::string offer_id;                  // claimed: used once the binding is stored, released if not
    std::string launch_head;               // the LAUNCH event but its pod (launch_event_head)
    std::function<bool(JsonValue&)> bind;  // writes the binding into the pod
  };
  // The task is added; the binding is not yet written, and the offer stays claimed until it is.
  // `priority` (spec.priority) is the task's, for preemption to weigh;
  // `grace_s` (spec.terminationGracePeriodSeconds) the grace its KILLs give.
  PreparedLaunch prepare_launch(const std::string& key, const PodNeeds& needs, const Offer& offer, int32_t priority,
                                uint32_t grace_s);
  // A guarded update of a pod through the writer, from its kept copy; `mutate`
  // false: nothing to write. `done`, when given, hears what became of it.
  void update_pod(const std::string& key, std::function<bool(JsonValue&)> mutate, PodWriter::Done done = nullptr);
  // The same, trying `edit` on the stored text first (PodWriter::TextEdit).
  void update_pod(const std::string& key, PodWriter::TextEdit edit, std::function<bool(JsonValue&)> mutate,
                  PodWriter::Done done);
  void bound(const std::string& pod, uint64_t serial, const std::string& offer_id, bool written,
             const std::string& launch);
  void roll_back(const std::string& pod, uint64_t serial, const std::string& offer_id);

  Store& store_;
  Clock& clock_;
  AgentHub& hub_;
  std::function<bool()> is_leader_;
  std::map<std::string, Pending> pending_;  // ns/name -> unscheduled pod
  PodTaskRegistry tasks_;                   // the task of each pod we launched (or recovered)
  DelayQueue queue_;
  PodBackoff backoff_;
  std::unique_ptr<Timer> queue_timer_;
  ClockTurn pass_;
  Store::WatchId watch_ = 0;
  bool watching_ = false;
  CounterFamily& placements_;
  // Writes pods, keeping the latest copy of each pod to place or bound from
  // the watch (as an informer keeps them): an update is then one
  // compare-and-swap, not a read and a compare-and-swap. It knows this
  // scheduler's writes to waiting pods when the watch brings them back, so a
  // waiting pod's own condition update is not parsed again (a storm of
  // unschedulable pods would parse every pod three times).
  PodWriter& writer_;
  Settings settings_;
  PodGroups groups_;
  std::map<std::string, std::string> group_of_;  // member pod -> its group, for the pods in groups
  std::set<std::string> groups_tried_;           // in this pass: one try of a group for all its members due
  size_t looks_ = 0;                             // offers weighed (search_offers), for kLooksPerPass
  Nominations nominations_;                      // the waiting pods a preemption made room for, and where
  AntiAffinityHolders anti_affinity_;            // the placed pods with required anti-affinity
  uint64_t holders_pruned_ms_ = 0;               // when anti_affinity_ last dropped the holders that are gone
  std::set<std::string> affinity_waiters_;       // waiting pods with a required podAffinity
  KeptOutPods kept_out_;                         // waiting pods no offer wakes until something changes
  // What each agent has on offer, summed once per pass for the preemptions
  // weighed in it (an offer's arrival or use within a pass is not seen).
  std::optional<OfferedByAgent> offered_this_pass_;
  CounterFamily& preemptions_;
  HistogramFamily& preemption_decisions_;  // how long choosing victims takes
  SchedulingLog recent_;                   // for the status page (GET /v1/scheduling-events)
  PodTaskLifecycle lifecycle_;             // what was launched, to its end
  FrameworkRegistration framework_;
  std::unique_ptr<Timer> load_timer_;  // a failed load, or a lost watch, tries again
};

}  // namespace uvsched
