#include "handlers/pods/pod_scheduler.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "handlers/agents/agent_events.h"
#include "handlers/json_response.h"
#include "handlers/pods/cluster_view.h"
#include "handlers/pods/container_restarts.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/node_label_edits.h"
#include "handlers/pods/node_taints.h"
#include "handlers/pods/pod_deletion.h"
#include "handlers/pods/pod_fields.h"
#include "handlers/pods/pod_needs.h"
#include "handlers/pods/pod_registry.h"
#include "handlers/pods/pod_validation.h"
#include "policy/gang.h"
#include "policy/preemption.h"
#include "policy/unscheduled.h"
#include "reactor/json_writer.h"
#include "reactor/log.h"
#include "reactor/secure_random.h"
#include "reactor/url.h"
#include "storage/unwaited.h"

namespace uvsched {
namespace {

std::string key_of(const JsonValue& pod) {
  const JsonValue* ns = pod.find({"metadata", "namespace"});
  const JsonValue* name = pod.find({"metadata", "name"});
  return (ns ? ns->text() : "default") + "/" + (name ? name->text() : "");
}

// The pod's container images as kImagesAnnotation holds them: a JSON array.
std::string launched_images(const JsonValue& pod) {
  JsonValue list = JsonValue::array();
  for (std::string& image : container_images(pod)) list.push(JsonValue::string(std::move(image)));
  return list.dump();
}

// Made once: a pod storm counts a placement attempt per pod.
const std::string& placed_label() {
  static const std::string l = labels({{"result", "placed"}});
  return l;
}
const std::string& unschedulable_label() {
  static const std::string l = labels({{"result", "unschedulable"}});
  return l;
}

uint64_t new_task_serial() {
  // Task ids are seen by every reader (the pod's annotations): their random
  // part must not let anyone predict the next.
  return secure_random_u64() >> 16;  // the 48 bits an id holds
}

int32_t priority_of(const JsonValue& pod) {
  const JsonValue* p = pod.find({"spec", "priority"});
  auto n = p ? p->as_integer() : std::nullopt;
  return n ? static_cast<int32_t>(std::clamp<int64_t>(*n, INT32_MIN, INT32_MAX)) : 0;
}

bool preempt_never(const JsonValue& pod) {
  const JsonValue* p = pod.find({"spec", "preemptionPolicy"});
  return p && p->text() == "Never";
}

// What is_unscheduled asks of a pod (`phase` is phase_of(pod), kept alive by the caller).
PodFacts facts_of(const JsonValue& pod, const std::string& phase) {
  const JsonValue* gates = pod.find({"spec", "schedulingGates"});
  return {phase, !annotation(pod, PodScheduler::kTaskAnnotation).empty(),
          pod.find({"metadata", "deletionTimestamp"}) != nullptr,
          gates && gates->is_array() && !gates->items().empty()};
}

// What a waiting pod's PodScheduled message adds to the reason: its place in
// the queue when the message was written. Only a change of the reason is
// written (a place changes at every try), so it says when it held.
constexpr std::string_view kPositionNote = " Queue position ";
constexpr size_t kPositionsCounted = 1000;  // the walk to find a place stops here

// The message of the pod's PodScheduled=False condition, if it has one, less
// its queue position: the reason it was last said to wait, so an unchanged
// reason is not written again.
std::string unschedulable_message(const JsonValue& pod) {
  const JsonValue* conds = pod.find({"status", "conditions"});
  if (!conds || !conds->is_array()) return "";
  for (const auto& c : conds->items()) {
    if (c.str("type") == "PodScheduled" && c.str("status") == "False") {
      std::string m = c.str("message");
      if (size_t at = m.find(kPositionNote); at != std::string::npos) m.resize(at);
      return m;
    }
  }
  return "";
}

}  // namespace

PodScheduler::PodScheduler(Store& store, Clock& clock, AgentHub& hub, PodWriter& writer, MetricsRegistry& metrics,
                           std::function<bool()> is_leader, Settings settings)
    : store_(store),
      clock_(clock),
      hub_(hub),
      is_leader_(std::move(is_leader)),
      queue_timer_(clock.new_timer()),
      pass_(clock, [this] { schedule_due(); }),
      placements_(metrics.counter("uvsched_pod_placements_total", "Scheduling attempts by result.")),
      writer_(writer),
      settings_(settings),
      groups_(
          store, clock, writer, [this](const std::string&, const std::set<std::string>& m) { return count_members(m); },
          [this](const std::string& group) {
            // Its waiting members are tried on the next pass.
            uint64_t now = clock_.now_ms();
            if (const PodGroups::Group* g = groups_.find(group)) {
              for (const auto& m : g->members) {
                if (pending_.count(m)) queue_.breakout(m, now);
              }
            }
            pass_.schedule();
          }),
      preemptions_(metrics.counter("uvsched_preemptions_total", "Lower-priority pods evicted to place a pod.")),
      preemption_decisions_(metrics.histogram("uvsched_preemption_decision_seconds",
                                              "Time to weigh the agents and choose the victims for a pod that fits "
                                              "nowhere.",
                                              {1e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 5e-2})),
      lifecycle_(store, clock, hub, writer, tasks_, recent_, settings.reconcile_interval_ms,
                 {.waiting = [this](const std::string& pod) { return pending_.count(pod) != 0; },
                  .failed_waiting =
                      [this](const std::string& pod) {
                        // The watch brings this write back as a waiting pod's own,
                        // which it does not read again: the pod leaves the queue here.
                        pod_ended(pod, "Failed");
                        drop_pending(pod);
                      },
                  .recover_task = [this](const KeyValue& kv) { return recover_task(kv); },
                  .task_moved =
                      [this](const std::string& pod) {
                        if (auto g = group_of_.find(pod); g != group_of_.end()) groups_.touch(g->second);
                      }}),
      framework_(store, clock, settings.failover_timeout_ms),
      load_timer_(clock.new_timer()) {
  metrics.gauge("uvsched_pods_pending", "Pods waiting for a place.",
                [this](const GaugeEmit& emit) { emit("", static_cast<double>(pending_.size())); });
  metrics.gauge("uvsched_pod_tasks", "Pod tasks launched on agents by state.", [this](const GaugeEmit& emit) {
    double pending = 0, running = 0;
    for (const auto& [key, t] : tasks_) (t.state == TaskState::kRunning ? running : pending) += 1;
    emit(labels({{"state", "launched"}}), pending);
    emit(labels({{"state", "running"}}), running);
  });
  observe_tasks();
}

void PodScheduler::observe_tasks() {
  tasks_.observe_placed([this](std::string_view pod_key, uint32_t set, PodTaskRegistry::PlacedChange change) {
    placed_changed(pod_key, set, change);
  });
}

void PodScheduler::placed_changed(std::string_view pod_key, uint32_t set, PodTaskRegistry::PlacedChange change) {
  if (kept_out_.empty()) return;
  bool counted = change == PodTaskRegistry::PlacedChange::kCounted;
  const PodAffinityTerms* anti_affinity = nullptr;
  if (!counted) {
    auto holder = anti_affinity_.find(absl::string_view(pod_key.data(), pod_key.size()));
    if (holder != anti_affinity_.end() && holder->second) anti_affinity = &holder->second->terms;
  }
  kept_out_.placed_changed(set, tasks_.label_set_born(set), tasks_.label_set(set), counted, anti_affinity);
}

PodScheduler::~PodScheduler() {
  hub_.set_events(nullptr);  // (set by whoever wires it: app/daemon.cc, or a test)
  if (watching_) store_.cancel_watch(watch_);
}

void PodScheduler::stop() {
  queue_timer_->stop();
  lifecycle_.stop();
  groups_.stop();
  framework_.stop();
  load_timer_->stop();
  if (watching_) store_.cancel_watch(watch_);
  watching_ = false;
}

void PodScheduler::forget_everything() {
  std::vector<std::string> keys;
  for (const auto& [key, p] : pending_) keys.push_back(key);
  for (const auto& key : keys) drop_pending(key);
  tasks_ = PodTaskRegistry();
  observe_tasks();
  kept_out_.clear();
  queue_ = DelayQueue();
  backoff_ = PodBackoff();
  lifecycle_.clear();
  writer_.clear();
  group_of_.clear();
  anti_affinity_.clear();
}

void PodScheduler::leadership_changed(bool leading) {
  stop();
  forget_everything();
  log_info(leading ? "scheduler_taking_over" : "scheduler_standing_by");
  if (leading) start();
}

void PodScheduler::start() {
  framework_.start();
  groups_.start();
  lifecycle_.start();
  load();
}

// Reads every pod, then follows their changes from there. Runs at start, and
// again when the watch is lost (etcd compacted the history it was to resume
// from): what changed unseen meanwhile is learnt from the new listing.
void PodScheduler::load() {
  RangeOptions all;
  all.prefix = true;
  // The cordoned agents first: no pod loaded below is to be placed on one.
  store_.get(PodRegistry::kCordonPrefix, all, [this](RangeResult&& c) {
    if (!c.status.ok()) return load_again_after(c.status);
    std::set<std::string> cordoned;
    for (const auto& kv : c.kvs) cordoned.insert(kv.key.substr(std::string_view(PodRegistry::kCordonPrefix).size()));
    hub_.replace_cordoned(std::move(cordoned));
    load_label_edits();
  });
}

// The operator's node labels next: a pod that needs one is placed only where it is.
void PodScheduler::load_label_edits() {
  RangeOptions all;
  all.prefix = true;
  store_.get(PodRegistry::kNodeLabelsPrefix, all, [this](RangeResult&& r) {
    if (!r.status.ok()) return load_again_after(r.status);
    std::map<std::string, LabelEdits> edits;
    for (const auto& kv : r.kvs) {
      std::string node = kv.key.substr(std::string_view(PodRegistry::kNodeLabelsPrefix).size());
      if (std::optional<LabelEdits> e = parse_label_edits(kv.value)) {
        edits[node] = std::move(*e);
      } else {
        log_warn("node_labels_unreadable").kv("node", node);
      }
    }
    hub_.replace_label_edits(std::move(edits));
    load_taints();
  });
}

// The operator's taints next: a pod that does not tolerate one is not placed there.
void PodScheduler::load_taints() {
  RangeOptions all;
  all.prefix = true;
  store_.get(PodRegistry::kNodeTaintsPrefix, all, [this](RangeResult&& r) {
    if (!r.status.ok()) return load_again_after(r.status);
    std::map<std::string, std::vector<Taint>> taints;
    for (const auto& kv : r.kvs) {
      std::string node = kv.key.substr(std::string_view(PodRegistry::kNodeTaintsPrefix).size());
      if (std::optional<std::vector<Taint>> t = parse_taints(kv.value)) {
        taints[node] = std::move(*t);
      } else {
        log_warn("node_taints_unreadable").kv("node", node);
      }
    }
    hub_.replace_taints(std::move(taints));
    load_pods();
  });
}

// The store could not be read: the whole load again in a second.
void PodScheduler::load_again_after(const StoreStatus& failure) {
  log_warn("scheduler_load_failed").kv("error", failure.message);
  load_timer_->start(1000, [this] { load(); });
}

void PodScheduler::load_pods() {
  RangeOptions all;
  all.prefix = true;
  store_.get(PodRegistry::kPodPrefix, all, [this](RangeResult&& r) {
    if (!r.status.ok()) return load_again_after(r.status);
    size_t recovered = 0;
    // Only a reload has pods to forget (and 100k keys are worth not copying at start).
    bool reload = !pending_.empty() || tasks_.size() != 0;
    std::set<std::string> listed;
    for (const auto& kv : r.kvs) {
      std::string key = kv.key.substr(std::string_view(PodRegistry::kPodPrefix).size());
      if (reload) listed.insert(key);
      if (tasks_.has_pod(key)) continue;  // (a reload) followed already: its statuses tell the rest
      if (std::optional<RecoveredTask> t = recover_task(kv)) {
        tasks_.add(key, t->task, &t->labels);
        ++recovered;
        continue;
      }
      on_pod(kv, false);
    }
    if (reload) forget_unlisted(listed);
    log_info("scheduler_started")
        .kv("tasks_recovered", static_cast<uint64_t>(recovered))
        .kv("pending", static_cast<uint64_t>(pending_.size()));
    // Agents that re-subscribed while the pods were loading asked before their
    // tasks were known: ask them now (later ones ask when they subscribe).
    for (const auto& [host, a] : hub_.agents()) {
      if (a->connected) lifecycle_.agent_registered(host);
    }
    // The others with tasks have the agent timeout to come back.
    std::set<std::string> hosts;
    for (const auto& [key, t] : tasks_) hosts.insert(tasks_.agent_of(t));
    for (const auto& host : hosts) {
      if (!host.empty()) hub_.expect(host);
    }
    watch_ = store_.watch(
        PodRegistry::kPodPrefix, r.revision + 1,
        [this](const StoreStatus& st, const std::vector<WatchEvent>& events) {
          if (!st.ok()) {
            log_warn("scheduler_watch_ended").kv("error", st.message).kv("then", "reload");
            watching_ = false;
            load_timer_->start(0, [this] { load(); });
            return;
          }
          for (const auto& e : events) {
            on_pod(e.type == WatchEvent::Type::kDelete && e.prev_kv ? *e.prev_kv : e.kv,
                   e.type == WatchEvent::Type::kDelete);
          }
        },
        /*deleted_values=*/false);  // a deleted pod's key is all it needs
    watching_ = true;
  });
}

// Failover: a bound pod names its task; the task is known again from it.
std::optional<RecoveredTask> PodScheduler::recover_task(const KeyValue& kv) {
  std::string error;
  auto pod = JsonValue::parse(kv.value, &error);
  if (!pod) return std::nullopt;
  std::string task_id = annotation(*pod, kTaskAnnotation);
  if (task_id.empty() || phase_of(*pod) == "Succeeded" || phase_of(*pod) == "Failed") return std::nullopt;
  std::string key = key_of(*pod);
  auto serial = PodTaskRegistry::serial_of(task_id);
  if (!serial || PodTaskRegistry::pod_of(task_id) != key) {
    // Not an id made for this pod: no status could ever name it.
    log_warn("task_not_recovered").kv("pod", key).kv("task", task_id);
    return std::nullopt;
  }
  PodTask t;
  t.serial = *serial;
  t.agent = tasks_.intern_agent(annotation(*pod, kHostAnnotation));
  t.launched = t.bound = true;
  t.state = phase_of(*pod) == "Running" ? TaskState::kRunning : TaskState::kPending;
  t.deleted = pod->find({"metadata", "deletionTimestamp"}) != nullptr;
  // Its images changed after it was launched, and the leader that stored
  // the change went before the task was replaced. (Pods bound before the
  // annotation existed say nothing, and are left as they run.)
  if (std::string launched = annotation(*pod, kImagesAnnotation);
      !launched.empty() && launched != launched_images(*pod)) {
    t.restart = true;
    log_info("task_restarting").kv("pod", key).kv("task", task_id).kv("why", "its pod's container images changed");
  }
  t.priority = priority_of(*pod);
  t.grace_s = termination_grace_seconds(*pod);
  // Its deadline is followed again (one that passed meanwhile kills it now).
  if (std::optional<int64_t> deadline = active_deadline_unix_ms(*pod)) lifecycle_.follow_deadline(key, *deadline);
  PodNeeds needs = pod_needs(*pod);
  t.cpus = static_cast<float>(needs.cpus);
  t.mem_mib = static_cast<float>(needs.mem_mib);
  // A NoExecute taint on its agent (loaded before the pods) is weighed again from now.
  if (hub_.tainted()) {
    if (auto stay = noexecute_stay_ms(needs.tolerations, hub_.taints(annotation(*pod, kHostAnnotation)))) {
      lifecycle_.follow_stay(key, *stay);
    }
  }
  if (std::string group = PodGroups::group_of(*pod); !group.empty()) {
    t.grouped = true;
    group_of_[key] = group;
    groups_.join(group, key);
  }
  // Its anti-affinity binds the pods placed after it (an entry for a task not added after all is pruned).
  if (needs.inter_pod && !needs.inter_pod->terms.anti_affinity.empty()) anti_affinity_[key] = needs.inter_pod;
  return RecoveredTask{t, std::move(needs.labels)};
}

// Pods followed before a reload and gone from its listing were deleted unseen.
void PodScheduler::forget_unlisted(const std::set<std::string>& listed) {
  std::vector<std::string> gone;
  for (const auto& [key, p] : pending_) {
    if (!listed.count(key)) gone.push_back(key);
  }
  for (const auto& [key, t] : tasks_) {
    if (!listed.count(std::string(key))) gone.emplace_back(key);
  }
  for (const auto& key : gone) {
    KeyValue kv;
    kv.key = PodRegistry::kPodPrefix + key;
    on_pod(kv, /*deleted=*/true);
  }
}

// Every pod change goes through here: pending ones are queued, deleted ones
// leave the queue (releasing an offer they held) or have their task killed.
void PodScheduler::on_pod(const KeyValue& kv, bool deleted) {
  std::string key = kv.key.substr(std::string_view(PodRegistry::kPodPrefix).size());
  if (auto p = pending_.find(key); p != pending_.end() && p->second.from_create) {
    p->second.from_create = false;
    // The create that queued it (a key's first version): what placement
    // needs was read from it then. Anything else is news, read below.
    if (!deleted && kv.version == 1) return;
  }
  // Our own update of a waiting pod (its PodScheduled condition) coming back:
  // the spec placement reads is unchanged, so the pod is not parsed again.
  if (writer_.own_write_returned(kv.key, deleted ? nullptr : &kv.value) && pending_.count(key)) {
    writer_.refresh(kv.key, kv.mod_revision, kv.value);
    return;
  }
  if (deleted) {
    writer_.forget(kv.key);
  } else if (!writer_.refresh(kv.key, kv.mod_revision, kv.value) && !tasks_.has_pod(key)) {
    writer_.keep(kv.key, kv.mod_revision, kv.value);  // a pod to place: its binding will be one CAS
  }
  if (deleted) {
    drop_pending(key);
    lifecycle_.forget(key);
    if (auto g = group_of_.find(key); g != group_of_.end()) {
      groups_.leave(g->second, key);
      group_of_.erase(g);
    }
    if (const Offer* held = hub_.offers().held_by(key)) hub_.release_offer(held->id);
    if (PodTask* task = tasks_.by_pod(key); task && !task->deleted) {
      tasks_.mark_deleted(key, *task);
      lifecycle_.kill(key, *task);  // deleted behind our back (straight in the store)
    }
    return;
  }
  // A pod whose task we follow changes by our own writes and its task's
  // statuses: nothing here to learn from it, so it is not even parsed.
  if (tasks_.has_pod(key)) return;
  std::string error;
  auto pod = JsonValue::parse(kv.value, &error);
  if (!pod) return;
  const std::string phase = phase_of(*pod);
  if (phase == "Succeeded" || phase == "Failed") pod_ended(key, phase);
  if (!is_unscheduled(facts_of(*pod, phase))) {
    drop_pending(key);
    return;
  }
  // What placement needs is kept, not the pod: 100k waiting pods as parsed
  // trees took over a gigabyte. The binding reads the stored pod.
  Pending& entry = pending_entry(key);
  entry.needs = pod_needs(*pod);
  entry.kept_out_at.reset();  // what kept it out may not any more: the next offer may wake it
  entry.refused_on.clear();
  kept_out_.remove(key);
  entry.priority = priority_of(*pod);
  entry.grace_s = termination_grace_seconds(*pod);
  entry.preempt_never = preempt_never(*pod);
  std::string group = PodGroups::group_of(*pod);
  if (group != entry.group) {
    if (!entry.group.empty()) groups_.leave(entry.group, key);
    entry.group = group;
    if (group.empty()) {
      group_of_.erase(key);
    } else {
      group_of_[key] = group;
      groups_.join(group, key);
    }
  }
  if (entry.last_reason.empty()) entry.last_reason = unschedulable_message(*pod);  // (after a restart)
  // A pod that started before (it waits to start again) is still bound by its deadline.
  if (std::optional<int64_t> deadline = active_deadline_unix_ms(*pod)) lifecycle_.follow_deadline(key, *deadline);
  uint64_t now = clock_.now_ms();
  queue_.add(key, lifecycle_.held_for_restart(key, now).value_or(now));  // an update keeps its place
  pass_.schedule();
}

void PodScheduler::pod_ended(const std::string& key, const std::string& phase) {
  writer_.forget(PodRegistry::kPodPrefix + key);  // done: nothing to update
  lifecycle_.forget(key);
  if (auto g = group_of_.find(key); g != group_of_.end()) {
    groups_.leave(g->second, key, phase);
    group_of_.erase(g);
  }
}

PodScheduler::Pending& PodScheduler::pending_entry(const std::string& key) {
  auto [it, fresh] = pending_.try_emplace(key);
  if (fresh) it->second.waiting_since_ms = clock_.now_ms();
  return it->second;
}

void PodScheduler::add_routes(Router& router) {
  router.add("GET", "/v1/queue", [this](RequestContext& ctx) { list_queue(ctx); });
  router.add("GET", "/v1/cluster", [this](RequestContext& ctx) {
    std::string error, field;
    auto q = parse_cluster_query(ctx.request.query(), &error, &field);
    if (!q) return ctx.reply(json_error(400, error, field));
    ctx.reply(json_response(200, cluster_view_json(hub_, tasks_, pending_.size(), *q)));
  });
  router.add("GET", "/v1/scheduling-events", [this](RequestContext& ctx) {
    size_t limit = SchedulingLog::kKept;
    if (auto l = query_param(ctx.request.query(), "limit")) {
      long n = std::strtol(l->c_str(), nullptr, 10);
      if (n < 1 || n > static_cast<long>(SchedulingLog::kKept) ||
          l->find_first_not_of("0123456789") != std::string::npos)
        return ctx.reply(
            json_error(400, "limit must be a whole number from 1 to " + std::to_string(SchedulingLog::kKept), "limit"));
      limit = static_cast<size_t>(n);
    }
    JsonWriter w;
    w.begin_object();
    recent_.write(w, limit);
    w.end_object();
    ctx.reply(json_response(200, w.take()));
  });
}

// The queue as an operator reads it: each waiting pod's position (the order
// it will be tried in), when its next try is, how long it has waited and why.
void PodScheduler::list_queue(RequestContext& ctx) {
  size_t limit = 500;
  if (auto l = query_param(ctx.request.query(), "limit")) {
    long n = std::strtol(l->c_str(), nullptr, 10);
    if (n < 1 || n > 100'000)
      return ctx.reply(json_error(400, "limit must be a whole number from 1 to 100000", "limit"));
    limit = static_cast<size_t>(n);
  }
  uint64_t now = clock_.now_ms();
  JsonWriter w;
  w.begin_object().key("pending").value(static_cast<uint64_t>(pending_.size())).key("pods").begin_array();
  size_t position = 0;
  auto write = [&](const std::string& key, const Pending& p, std::optional<uint64_t> due) {
    w.begin_object().key("position").value(static_cast<uint64_t>(++position)).key("pod").value(key);
    w.key("next_try_in_ms").value(due ? (*due > now ? *due - now : 0) : 0);
    w.key("waiting_seconds").value(static_cast<double>(now - std::min(now, p.waiting_since_ms)) / 1000);
    w.key("priority").value(static_cast<int64_t>(p.priority));
    if (!p.group.empty()) w.key("group").value(p.group);
    if (const Nominations::Nomination* n = nominations_.of(key)) w.key("nominated_node").value(n->agent);
    w.key("reason").value(p.last_reason).end_object();
  };
  // The order they will be tried in: by when each is due, and among those
  // due together by priority (schedule_due).
  std::vector<std::pair<std::string, uint64_t>> order = queue_.in_order(limit);
  auto priority = [this](const std::string& key) {
    auto it = pending_.find(key);
    return it == pending_.end() ? 0 : it->second.priority;
  };
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    uint64_t da = std::max(a.second, now), db = std::max(b.second, now);
    if (da != db) return da < db;
    return priority(a.first) > priority(b.first);
  });
  for (const auto& [key, due] : order) {
    if (auto it = pending_.find(key); it != pending_.end()) write(key, it->second, due);
  }
  // Being tried this very turn (out of the queue until it fails again): last.
  for (const auto& [key, p] : pending_) {
    if (position >= limit) break;
    if (!queue_.contains(key)) write(key, p, std::nullopt);
  }
  w.end_array().end_object();
  ctx.reply(json_response(200, w.take()));
}

void PodScheduler::drop_pending(const std::string& key) {
  hub_.offers().unlisten(key);  // before the entry its filter points into goes
  nominations_.forget(key);
  affinity_waiters_.erase(key);
  kept_out_.remove(key);
  pending_.erase(key);
  queue_.remove(key);
}

void PodScheduler::arm_queue_timer() {
  auto next = queue_.next_due();
  if (!next) {
    queue_timer_->stop();
    return;
  }
  uint64_t now = clock_.now_ms();
  queue_timer_->start(*next > now ? *next - now : 0, [this] { schedule_due(); });
}

void PodScheduler::schedule_due() {
  if (!is_leader_()) {
    queue_timer_->start(1000, [this] { schedule_due(); });
    return;
  }
  uint64_t now = clock_.now_ms();
  backoff_.gc(now);
  lifecycle_.gc(now);
  std::vector<std::string> due = queue_.pop_due(now);
  // Of the pods due, the higher priority goes first; equals keep their turn.
  std::stable_sort(due.begin(), due.end(), [this](const std::string& a, const std::string& b) {
    auto pa = pending_.find(a), pb = pending_.find(b);
    int32_t x = pa == pending_.end() ? 0 : pa->second.priority, y = pb == pending_.end() ? 0 : pb->second.priority;
    return x > y;
  });
  groups_tried_.clear();
  offered_this_pass_.reset();
  size_t tried = 0;
  for (size_t looks_at_start = looks_; tried < due.size() && looks_ - looks_at_start < kLooksPerPass; ++tried) {
    try_place(due[tried]);
  }
  offered_this_pass_.reset();
  if (tried == due.size()) return arm_queue_timer();
  // The rest are due still, first in line, and tried once the loop has
  // served what came meanwhile: 1 ms on, since libuv before 1.48 runs a
  // zero-delay timer started in a timer's callback at once, before any I/O.
  for (size_t i = tried; i < due.size(); ++i) {
    if (pending_.count(due[i])) queue_.add(due[i], now, DelayQueue::Mode::kReplaceExisting);
  }
  queue_timer_->start(1, [this] { schedule_due(); });
}

void PodScheduler::try_place(const std::string& key) {
  auto it = pending_.find(key);
  if (it == pending_.end() || tasks_.has_pod(key)) return;
  Pending& entry = it->second;
  uint64_t now = clock_.now_ms();
  if (auto due = lifecycle_.held_for_restart(key, now)) {  // its crashed task backs off: no offer wakes it sooner
    queue_.add(key, *due, DelayQueue::Mode::kReplaceExisting);
    return;
  }
  if (!entry.group.empty()) {
    if (groups_tried_.insert(entry.group).second) try_group(entry.group, now);
    return;
  }
  auto& offers = hub_.offers();
  const Offer* offer = offers.held_by(key);  // a pod that holds a valid offer keeps it
  if (offer && !fits(entry.needs, *offer)) {
    hub_.release_offer(offer->id);
    offer = nullptr;
  }
  if (offer) {  // the pods placed since it took the offer may keep it from that agent now
    const AgentHub::Agent* agent = hub_.agent(offer->agent);
    auto inter = inter_pod_filters(key, entry.needs);
    if (inter && agent && inter->misfit(*agent)) {
      hub_.release_offer(offer->id);
      offer = nullptr;
    }
  }
  Search search;
  bool refused_everywhere = false;
  if (!offer) {
    refused_everywhere = refused_by_every_offer(entry, now);
    if (!refused_everywhere) offer = (search = search_offers(entry.needs, {key, entry.priority, true}, now)).offer;
  }
  if (offer) {
    placements_.add(placed_label());
    Offer chosen = *offer;
    launch(key, entry.needs, chosen);
    return;
  }
  std::string reason = refused_everywhere ? entry.last_why : why_pending(search, entry.needs);
  entry.last_why = reason;
  std::vector<uint32_t> refused;
  if (!refused_everywhere) refused = refused_until_change(search.seen);  // (read while the offers it names are there)
  if (!entry.preempt_never) {
    if (std::string preempted = preempt_for(key, entry, now); !preempted.empty()) reason += " " + preempted;
  }
  wait_and_say(key, entry, reason, now, refused);
}

// A pod kept out (PendingReason::refused_until_change) by every agent that
// has an offer now, with nothing changed since that may let it in: a search
// would weigh each offer to refuse it again, building its inter-pod filters
// over every placed pod first. Its back-off still runs (SPEC 4), and it says
// what its last search said. (At 5,000 agents each such try took tens of
// milliseconds, and 500 such pods kept the loop a third busy and stalled it
// for half a second at a time.)
bool PodScheduler::refused_by_every_offer(const Pending& entry, uint64_t now) {
  if (entry.kept_out_at != kept_out_.stamp() || entry.refused_on.empty() || entry.last_why.empty()) return false;
  size_t weighed = 0;
  const Offer* other = hub_.offers().find_first(
      [&](const Offer& o) {
        ++weighed;
        std::optional<uint32_t> agent = tasks_.agent_index(o.agent);
        return !agent || !entry.refused_on.has(*agent);
      },
      now);
  looks_ += weighed / 8;  // (a bit each: as cheap as a placed pod counted)
  return !other && weighed > 0;
}

std::vector<uint32_t> PodScheduler::refused_until_change(const PendingReason& seen) {
  std::vector<uint32_t> agents;
  agents.reserve(seen.refused_until_change().size());
  for (std::string_view name : seen.refused_until_change()) agents.push_back(tasks_.intern_agent(name));
  return agents;
}

void PodScheduler::wait_and_say(const std::string& key, Pending& entry, const std::string& reason, uint64_t now,
                                const std::vector<uint32_t>& refused) {
  bool news = wait_for_offer(key, entry, reason, now, refused);
  // A pod that waits gives its cached copy up (a backlog of waiting pods
  // would hold them all); its binding, when an offer comes, reads it first.
  std::string cache_key = PodRegistry::kPodPrefix + key;
  if (!news) {
    writer_.forget(cache_key);
    return;
  }
  std::string stamp = rfc3339(clock_.unix_ms());
  update_pod(
      cache_key,
      [message = with_position(key, reason), stamp](JsonValue& p) {
        if (phase_of(p) != "Pending") return false;
        set_condition(p, "PodScheduled", "False", "Unschedulable", message, stamp);
        return true;
      },
      [this, cache_key](const PodWriter::Result&) { writer_.forget(cache_key); });
}

std::string PodScheduler::with_position(const std::string& key, const std::string& reason) const {
  std::optional<size_t> at = queue_.position(key, kPositionsCounted);
  std::string out = reason;
  if (!out.empty() && out.back() != '.') out += '.';
  out += kPositionNote;
  out += at ? std::to_string(*at) : "beyond " + std::to_string(kPositionsCounted);
  out += " of " + std::to_string(pending_.size()) + " waiting when this was written (GET /v1/queue has the order now).";
  return out;
}

GangCounts PodScheduler::count_members(const std::set<std::string>& members) const {
  GangCounts c;
  for (const auto& m : members) {
    const PodTask* t = tasks_.by_pod(m);
    if (!t) continue;
    ++c.scheduled;
    if (t->state == TaskState::kRunning) ++c.running;
  }
  return c;
}

PodScheduler::GroupPlan PodScheduler::plan_group(const std::vector<std::string>& waiting, uint64_t now) {
  std::vector<GangMember> shapes;
  for (const auto& m : waiting) shapes.push_back({pending_.at(m).needs.cpus, pending_.at(m).needs.mem_mib});
  // Each member on an offer of its own, none claimed until the group goes.
  std::set<std::string> taken;
  std::vector<InterPodFilters::Planned> planned;  // what the members planned so far are, for the next one's filters
  GroupPlan p;
  p.plan.reserve(waiting.size());  // (planned views its agents)
  for (size_t i : gang_try_order(shapes)) {
    const std::string& m = waiting[i];
    const PodNeeds& needs = pending_.at(m).needs;
    Seeker who{m, pending_.at(m).priority, false};
    Search s = search_offers(needs, who, now, &taken, &planned);
    if (s.offer) {
      taken.insert(s.offer->id);
      p.plan.emplace_back(m, *s.offer);
      planned.push_back({m, &needs, p.plan.back().second.agent});
    } else if (p.first_reason.empty()) {
      // Weighed again against every offer, the others' included: why it fits none of them.
      Search all = search_offers(needs, who, now, nullptr, &planned);
      p.first_reason =
          all.offer ? "every offer it fits is taken by another member of the group" : why_pending(all, needs);
    }
  }
  return p;
}

std::string PodScheduler::preview_group(const JsonValue& group) {
  const JsonValue* ns = group.find({"metadata", "namespace"});
  const JsonValue* name = group.find({"metadata", "name"});
  std::string key = (ns ? ns->text() : "default") + "/" + (name ? name->text() : "");
  int64_t min = pod_group_spec(group).min_member;
  std::vector<std::string> waiting;
  size_t placed = 0;
  if (const PodGroups::Group* g = groups_.find(key)) {
    for (const auto& m : g->members) {
      if (tasks_.has_pod(m)) {
        ++placed;
      } else if (pending_.count(m)) {
        waiting.push_back(m);
      }
    }
  }
  if (waiting.empty() && placed == 0) {
    return "pending: no member pods yet (a pod joins with the label " + std::string(kPodGroupLabel) + ": " +
           (name ? name->text() : "") + ")";
  }
  GroupPlan p = plan_group(waiting, clock_.now_ms());
  if (!judge_gang(min, placed, p.plan.size()).place)
    return "pending: " + gang_waiting_message(key, min, placed, p.plan.size(), p.first_reason, 0);
  std::string out = "would place " + std::to_string(p.plan.size()) + " members now:";
  for (const auto& [m, offer] : p.plan) out += " " + m.substr(m.find('/') + 1) + " on " + offer.agent + ",";
  out.pop_back();
  return out;
}

void PodScheduler::try_group(const std::string& group, uint64_t now) {
  const PodGroups::Group* g = groups_.find(group);
  if (!g) return;
  std::vector<std::string> waiting;
  size_t placed = 0;
  for (const auto& m : g->members) {
    if (tasks_.has_pod(m)) {
      ++placed;
    } else if (pending_.count(m) && !lifecycle_.held_for_restart(m, now)) {
      waiting.push_back(m);
    }
  }
  if (waiting.empty()) return;
  if (!g->exists) {
    std::string reason = "pod group " + group + " does not exist: its pods wait until it is created";
    for (const auto& m : waiting) wait_and_say(m, pending_.at(m), reason, now);
    return;
  }
  if (g->members.size() < static_cast<size_t>(std::max<int64_t>(1, g->spec.min_member))) {
    // Not all its members exist yet: each one created tries the group again,
    // so a waiting member says why once, not at every sibling's arrival (a
    // gang of 8 created pod by pod would rewrite its members 28 times).
    std::string reason = "pod group " + group + ": " + std::to_string(g->members.size()) + " of its " +
                         std::to_string(g->spec.min_member) + " members exist (minMember " +
                         std::to_string(g->spec.min_member) + ")";
    for (const auto& m : waiting) {
      Pending& e = pending_.at(m);
      if (e.last_reason.empty()) {
        wait_and_say(m, e, reason, now);
      } else {
        wait_for_offer(m, e, e.last_reason, now);  // (keeps what it said)
      }
    }
    return;
  }
  GroupPlan planned = plan_group(waiting, now);
  auto& plan = planned.plan;
  const std::string& first_reason = planned.first_reason;
  GangVerdict verdict = judge_gang(g->spec.min_member, placed, plan.size());
  if (verdict.place) {
    groups_.placed(group);
    std::set<std::string> launched;
    for (auto& [m, offer] : plan) {
      const Offer* claimed =
          hub_.offers().acquire_first([id = offer.id](const Offer& o) { return o.id == id; }, m, now);
      if (!claimed) continue;  // (cannot happen within one turn: it was found live just now)
      queue_.remove(m);
      placements_.add(placed_label());
      launched.insert(m);
      Offer chosen = *claimed;
      launch(m, pending_.at(m).needs, chosen);
    }
    for (const auto& m : waiting) {  // past the quorum, the rest go as they fit
      if (!launched.count(m) && pending_.count(m)) wait_and_say(m, pending_.at(m), first_reason, now);
    }
    return;
  }
  groups_.waiting(group, now);
  groups_.touch(group);  // (its status says when it times out)
  std::string reason = gang_waiting_message(group, g->spec.min_member, placed, plan.size(), first_reason,
                                            groups_.timed_out_after_s(group, now));
  for (const auto& m : waiting) wait_and_say(m, pending_.at(m), reason, now);
}

std::string PodScheduler::preempt_for(const std::string& key, Pending& entry, uint64_t now) {
  // Victims still going: the room they leave is this pod's to take, not a reason to evict more.
  bool had_victims = !entry.victims.empty();
  entry.victims.erase(std::remove_if(entry.victims.begin(), entry.victims.end(),
                                     [this](const auto& v) {
                                       PodTask* t = tasks_.by_pod(v.first);
                                       return !t || t->serial != v.second;
                                     }),
                      entry.victims.end());
  if (!entry.victims.empty()) {
    return "Waiting for " + std::to_string(entry.victims.size()) + " preempted pod(s) to end.";
  }
  // The hold runs from when its last victim was seen gone, not from the
  // preemption: under load a KILL can take longer than the hold itself.
  if (had_victims) nominations_.hold_from(key, now);
  // Its victims are gone, but their room comes back only with the agent's
  // next offer: it waits for that (a while), rather than evicting elsewhere.
  if (const Nominations::Nomination* n = nominations_.of(key)) {
    const AgentHub::Agent* agent = hub_.agent(n->agent);
    if (agent && agent->connected && now < n->since_ms + kNominationHoldMs)
      return "Waiting for the room its preemption made on " + n->agent + " to be offered.";
    nominations_.forget(key);
  }
  // No possible victim below this pod's priority: nothing to weigh (most pods, most of the time).
  if (std::optional<int32_t> lowest = tasks_.lowest_victim_priority(); !lowest || *lowest >= entry.priority) return "";
  // A measurement of this loop's own work, not a time it acts on: read
  // from the steady clock, not the injected one.
  auto started = std::chrono::steady_clock::now();
  if (!offered_this_pass_) offered_this_pass_ = offered_by_agent(hub_.offers());
  // An agent already evicting for another pod of at least this priority:
  // its victims' room is that pod's (and its victims are on their way out).
  // Nor one the placed pods keep it from (inter-pod affinity, spread):
  // evicting for room there would not place it. (kube-scheduler also weighs
  // evicting the pods its anti-affinity selects; uvsched does not.)
  std::optional<InterPodFilters> inter = inter_pod_filters(key, entry.needs);
  auto reserved = [this, &key, &entry, &inter](const std::string& agent) {
    if (!nominations_.empty() && nominations_.reserved_for_other(agent, key, entry.priority)) return true;
    const AgentHub::Agent* a = inter ? hub_.agent(agent) : nullptr;
    return a && inter->misfit(*a).has_value();
  };
  constexpr size_t kCandidateAgents = 100;
  PreemptionCandidates candidates =
      preemption_candidates(tasks_, hub_, entry.needs, entry.priority, *offered_this_pass_, reserved, kCandidateAgents);
  std::optional<PreemptionChoice> choice =
      choose_preemption(entry.needs.cpus, entry.needs.mem_mib, entry.priority, candidates.nodes);
  preemption_decisions_.observe("", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (!choice) return "";
  const std::string node = candidates.agents[choice->node];
  std::vector<std::string> victims;  // (copies: evicting changes the task registry the views point into)
  for (size_t v : choice->victims) victims.emplace_back(candidates.pods[v]);
  for (const auto& victim : victims) {
    if (PodTask* t = tasks_.by_pod(victim)) entry.victims.emplace_back(victim, t->serial);
    evict(victim, key, entry.priority, node);
  }
  nominations_.nominate(key, node, entry.priority, clock_.now_ms());
  preemptions_.add("", static_cast<double>(victims.size()));
  update_pod(PodRegistry::kPodPrefix + key, [node](JsonValue& p) {
    p.ensure({"status"}).set("nominatedNodeName", JsonValue::string(node));
    return true;
  });
  log_info("pods_preempted").kv("preemptor", key).kv("node", node).kv("victims", static_cast<uint64_t>(victims.size()));
  return "Preempting " + std::to_string(victims.size()) + " lower-priority pod(s) on " + node + ".";
}

// A victim of preemption: told why (the DisruptionTarget condition, which
// `kubectl describe` shows as a Preempted event) and killed; its restart
// policy then decides, as for any task killed under it.
void PodScheduler::evict(const std::string& victim, const std::string& preemptor, int32_t priority,
                         const std::string& node) {
  std::string stamp = rfc3339(clock_.unix_ms());
  std::string message = "Preempted by " + preemptor + " (priority " + std::to_string(priority) + ") on node " + node;
  update_pod(PodRegistry::kPodPrefix + victim, [stamp, message](JsonValue& p) {
    set_condition(p, "DisruptionTarget", "True", "PreemptionByScheduler", message, stamp);
    return true;
  });
  recent_.add(clock_.unix_ms(), SchedulingLog::Kind::kPreempted, victim, message);
  if (PodTask* task = tasks_.by_pod(victim)) {
    tasks_.mark_evicted(*task);
    lifecycle_.kill(victim, *task);
  }
}

bool PodScheduler::fits(const PodNeeds& needs, const Offer& offer) const {
  const AgentHub::Agent* agent = hub_.agent(offer.agent);
  return agent && agent->connected && !cordon_misfit(needs, hub_.cordoned(offer.agent)) &&
         (!hub_.tainted() || !taint_misfit(needs, hub_.taints(offer.agent))) && !misfit(needs, offer, agent->labels);
}

std::optional<InterPodFilters> PodScheduler::inter_pod_filters(const std::string& key, const PodNeeds& needs,
                                                               const std::vector<InterPodFilters::Planned>* planned) {
  // The filters pass over holders whose task is gone, so dropping them is
  // only for memory: once a second, not on every search (each holder is a
  // lookup, and every create searches).
  if (uint64_t now = clock_.now_ms(); !anti_affinity_.empty() && now >= holders_pruned_ms_ + 1000) {
    InterPodFilters::prune(anti_affinity_, tasks_);
    holders_pruned_ms_ = now;
  }
  static const std::vector<InterPodFilters::Planned> kNone;
  auto f = InterPodFilters::build(key, needs, tasks_, hub_, anti_affinity_, planned ? *planned : kNone);
  // Counting the placed pods is work as weighing offers is: the pass yields after enough of either.
  if (f) looks_ += f->counted() / 8;
  return f;
}

void PodScheduler::wake_affinity_waiters(const std::string& placed, const PodNeeds& needs) {
  if (affinity_waiters_.empty()) return;
  std::string_view ns = std::string_view(placed).substr(0, placed.find('/'));
  uint64_t now = clock_.now_ms();
  for (const auto& key : affinity_waiters_) {
    auto p = pending_.find(key);
    if (p == pending_.end() || !p->second.needs.inter_pod) continue;
    const auto& terms = p->second.needs.inter_pod->terms.affinity;
    if (std::any_of(terms.begin(), terms.end(),
                    [&](const PodAffinityTerm& t) { return t.selects(ns, needs.labels); })) {
      queue_.add(key, now, DelayQueue::Mode::kReplaceExisting);
    }
  }
  arm_queue_timer();
}

PodScheduler::Search PodScheduler::search_offers(const PodNeeds& needs, const Seeker& who, uint64_t now,
                                                 const std::set<std::string>* taken,
                                                 const std::vector<InterPodFilters::Planned>* planned) {
  Search s;
  std::optional<InterPodFilters> inter = inter_pod_filters(who.key, needs, planned);
  bool avoiding = hub_.preferences();  // first, the agents whose PreferNoSchedule taints it tolerates
  auto look = [&](const Offer& o) {
    ++looks_;
    if (taken && taken->count(o.id)) return false;
    if (!nominations_.empty() && nominations_.reserved_for_other(o.agent, who.key, who.priority)) {
      s.seen.saw(o, MisfitKind::kCpu);  // as kube-scheduler counts a nominated pod's requests as used
      return false;
    }
    const AgentHub::Agent* agent = hub_.agent(o.agent);
    if (!agent || !agent->connected) {
      s.seen.saw(o, std::nullopt);
      return false;
    }
    auto m = cordon_misfit(needs, hub_.cordoned(o.agent));
    if (!m && hub_.tainted()) m = taint_misfit(needs, hub_.taints(o.agent));
    if (!m) m = misfit_of(needs, o, agent->labels);
    if (!m && inter) m = inter->misfit(*agent);
    if (!m) return !avoiding || !prefers_elsewhere(needs.tolerations, hub_.taints(o.agent));
    s.seen.saw(o, m->kind);
    return false;
  };
  auto& offers = hub_.offers();
  s.offer = who.claim ? offers.acquire_first(look, who.key, now) : offers.find_first(look, now);
  if (!s.offer && avoiding) {
    // Only agents with a PreferNoSchedule taint it does not tolerate have room: one of them, then.
    avoiding = false;
    s.seen = PendingReason();
    s.offer = who.claim ? offers.acquire_first(look, who.key, now) : offers.find_first(look, now);
  }
  return s;
}

std::string PodScheduler::why_pending(const Search& s, const PodNeeds& needs) const {
  return s.seen.message(needs, hub_.agents().size());
}

bool PodScheduler::wait_for_offer(const std::string& key, Pending& entry, const std::string& reason, uint64_t now,
                                  const std::vector<uint32_t>& refused) {
  placements_.add(unschedulable_label());
  // The agents that refused it, as long as nothing changed that may let it
  // in: kube-scheduler's queueing hints, by agent, because here an agent's
  // offers are its node events.
  if (entry.kept_out_at != kept_out_.stamp()) entry.refused_on.clear();
  for (uint32_t agent : refused) entry.refused_on.add(agent);
  if (entry.refused_on.empty()) {
    entry.kept_out_at.reset();
    kept_out_.remove(key);
  } else {
    entry.kept_out_at = kept_out_.add(key, entry.needs.inter_pod, entry.needs.labels);
  }
  // Its back-off runs as for any pod (SPEC 4: 1 s, doubling to 60 s): the
  // offers of agents that refused it are what no longer wake it.
  uint64_t delay = backoff_.next_delay(key, now);
  queue_.add(key, now + delay, DelayQueue::Mode::kReplaceExisting);
  if (entry.needs.inter_pod && !entry.needs.inter_pod->terms.affinity.empty()) affinity_waiters_.insert(key);
  // Two pointers: small enough for std::function to keep without allocating.
  // The filter goes (unlisten) before the pending entry does (drop_pending).
  // An offer of an agent that refused the pod passes it over and goes on to
  // wake another, until something changed that may let the pod in.
  hub_.offers().listen(key, [this, e = &entry](const Offer& o) {
    if (e->kept_out_at == kept_out_.stamp()) {
      std::optional<uint32_t> agent = tasks_.agent_index(o.agent);
      if (agent && e->refused_on.has(*agent)) return false;
    }
    return fits(e->needs, o);
  });
  if (entry.last_reason == reason) return false;
  entry.last_reason = reason;
  recent_.add(clock_.unix_ms(), SchedulingLog::Kind::kFailedScheduling, key, reason);
  return true;
}

void PodScheduler::resync(const std::string& key) {
  store_.get(PodRegistry::kPodPrefix + key, {}, [this, key](RangeResult&& r) {
    if (!r.status.ok()) {
      // The watch brings whatever holds the name now, once the store is back.
      log_warn("pod_resync_failed").kv("pod", key).kv("error", r.status.message);
      return;
    }
    if (!r.kvs.empty()) on_pod(r.kvs[0], false);
  });
}

// The binding is made durable before the agent hears of the task, so after a
// crash the pods' annotations name every task an agent may be running.
void PodScheduler::launch(const std::string& key, const PodNeeds& needs, const Offer& offer) {
  auto entry = pending_.find(key);
  PreparedLaunch p = entry == pending_.end()
                         ? prepare_launch(key, needs, offer, 0, 30)
                         : prepare_launch(key, needs, offer, entry->second.priority, entry->second.grace_s);
  update_pod(PodRegistry::kPodPrefix + key, std::move(p.bind),
             [this, key, serial = p.serial, offer = std::move(p.offer_id), head = std::move(p.launch_head)](
                 const PodWriter::Result& r) { bound(key, serial, offer, r.written(), launch_event(head, r.stored)); });
}

// A pod just created through the API is placed by its create when the
// scheduler leads and is watching:
//  - it fits an offer and no waiting pod is due (so none is passed over:
//    first come, first served): the create carries the binding, one write
//    not two. Pods backing off after a try are not ahead of it: the queue's
//    next turn would try it before them too, as kube-scheduler's active
//    queue goes before its unschedulable pods. So one pod that can go
//    nowhere does not double what every other create costs;
//  - it fits no offer: that was its first try, and the create carries its
//    PodScheduled=False condition saying why, again one write not two;
//  - it fits but pods are due: it is stored as it is and takes its turn.
PodScheduler::CreateOutcome PodScheduler::place_on_create(const std::string& ns, const std::string& name,
                                                          JsonValue& pod) {
  std::string key = ns + "/" + name;
  if (!is_leader_() || !watching_ || pending_.count(key) || tasks_.has_pod(key)) return nullptr;
  if (const std::string phase = phase_of(pod); !is_unscheduled(facts_of(pod, phase))) return nullptr;
  // A group's member is placed with its group (the watch queues it).
  if (!PodGroups::group_of(pod).empty()) return nullptr;
  PodNeeds needs = pod_needs(pod);
  uint64_t now = clock_.now_ms();
  std::optional<uint64_t> next_due = queue_.next_due();
  bool first_in_line = !next_due || *next_due > now;
  Search search = search_offers(needs, {key, priority_of(pod), first_in_line}, now);
  if (search.offer && !first_in_line) return nullptr;
  if (search.offer) {
    placements_.add(placed_label());
    Offer chosen = *search.offer;
    PreparedLaunch p = prepare_launch(key, needs, chosen, priority_of(pod), termination_grace_seconds(pod));
    p.bind(pod);
    return [this, key, serial = p.serial, offer = std::move(p.offer_id), head = std::move(p.launch_head)](
               bool written, int64_t revision, const std::string& json) {
      // Known now, the stored pod makes its next update (TASK_RUNNING) one compare-and-swap.
      if (written) writer_.keep(PodRegistry::kPodPrefix + key, revision, json);
      bound(key, serial, offer, written, launch_event(head, json));
    };
  }
  Pending& entry = pending_entry(key);
  entry.needs = std::move(needs);
  entry.priority = priority_of(pod);
  entry.grace_s = termination_grace_seconds(pod);
  entry.preempt_never = preempt_never(pod);
  entry.from_create = true;
  std::string reason = why_pending(search, entry.needs);
  wait_for_offer(key, entry, reason, now, refused_until_change(search.seen));
  arm_queue_timer();
  set_condition(pod, "PodScheduled", "False", "Unschedulable", with_position(key, reason), rfc3339(clock_.unix_ms()));
  return [this, key](bool written, int64_t, const std::string&) {
    if (written) return;
    // Not stored (the name is taken, or the store failed): it was never ours to queue.
    drop_pending(key);
    backoff_.reset(key);
    resync(key);
  };
}

std::string PodScheduler::preview_placement(const JsonValue& pod) {
  if (const JsonValue* node = pod.find({"spec", "nodeName"}); node && !node->text().empty()) {
    return "bound: " + node->text();
  }
  PodNeeds needs = pod_needs(pod);
  const JsonValue* ns = pod.find({"metadata", "namespace"});
  const JsonValue* name = pod.find({"metadata", "name"});
  std::string key = (ns && !ns->text().empty() ? ns->text() : "default") + "/" + (name ? name->text() : "");
  Search search = search_offers(needs, {key, priority_of(pod), false}, clock_.now_ms());
  if (search.offer) return search.offer->agent;
  return "pending: " + why_pending(search, needs);
}

PodScheduler::PreparedLaunch PodScheduler::prepare_launch(const std::string& key, const PodNeeds& needs,
                                                          const Offer& offer, int32_t priority, uint32_t grace_s) {
  const AgentHub::Agent* agent = hub_.agent(offer.agent);
  std::string agent_id = agent ? agent->agent_id : "";
  recent_.add(clock_.unix_ms(), SchedulingLog::Kind::kScheduled, key, offer.agent);
  PodTask task;
  task.serial = new_task_serial();
  task.agent = tasks_.intern_agent(offer.agent);
  task.cpus = static_cast<float>(needs.cpus);
  task.mem_mib = static_cast<float>(needs.mem_mib);
  task.priority = priority;
  task.grace_s = grace_s;
  if (auto p = pending_.find(key); p != pending_.end()) task.grouped = !p->second.group.empty();
  std::string id = PodTaskRegistry::id_of(key, task);
  std::string head = launch_event_head(id, key, agent_id, needs.cpus, needs.mem_mib, needs.host_ports);
  hub_.offers().unlisten(key);
  std::string stamp = rfc3339(clock_.unix_ms());
  auto bind = [this, key, host = offer.agent, id, agent_id, offer_id = offer.id, stamp](JsonValue& p) {
    p.ensure({"spec"}).set("nodeName", JsonValue::string(host));
    stamp_start_time(p, stamp);  // (kept from its first start through its restarts)
    // Followed from now; a binding that is not stored leaves a deadline that finds no task (deadline_passed).
    if (std::optional<int64_t> deadline = active_deadline_unix_ms(p)) lifecycle_.follow_deadline(key, *deadline);
    JsonValue& ann = p.ensure({"metadata", "annotations"});
    ann.set(kHostAnnotation, JsonValue::string(host));
    ann.set(kTaskAnnotation, JsonValue::string(id));
    ann.set(kAgentAnnotation, JsonValue::string(agent_id));
    ann.set(kOfferAnnotation, JsonValue::string(offer_id));
    ann.set(kImagesAnnotation, JsonValue::string(launched_images(p)));
    set_condition(p, "PodScheduled", "True", "", "", stamp);
    return true;
  };
  tasks_.add(key, task, &needs.labels);
  if (needs.inter_pod && !needs.inter_pod->terms.anti_affinity.empty()) anti_affinity_[key] = needs.inter_pod;
  wake_affinity_waiters(key, needs);
  // Placed, it tolerates the agent's NoExecute taints: for good, or for their tolerationSeconds.
  if (hub_.tainted()) {
    if (auto stay = noexecute_stay_ms(needs.tolerations, hub_.taints(offer.agent))) lifecycle_.follow_stay(key, *stay);
  }
  return PreparedLaunch{tasks_.by_pod(key)->serial, offer.id, std::move(head), std::move(bind)};
}

void PodScheduler::bound(const std::string& key, uint64_t serial, const std::string& offer_id, bool written,
                         const std::string& launch) {
  // The offer is checked again now that the binding is stored, as upstream's
  // binder did: one the agent rescinded, or that ran out, while the binding
  // was being written no longer promises its resources.
  bool usable = hub_.offers().still_held(offer_id, key, clock_.now_ms());
  // A binding that was not stored (a create refused, a conflict) used
  // nothing: the offer goes back for others instead of being lost with it.
  if (written && (usable || hub_.offers().rescinded(offer_id))) {
    hub_.offers().consume(offer_id);
  } else {
    hub_.release_offer(offer_id);
  }
  PodTask* found = tasks_.by_pod(key);
  if (!found || found->serial != serial) return;  // its agent was lost meanwhile
  if (written && !usable && !found->deleted) return roll_back(key, serial, offer_id);
  PodTask& task = *found;
  if (task.deleted) {  // deleted before it ever ran: nothing to kill, the object goes
    lifecycle_.end(key, task, Transition{TaskAction::kRemoveDeleted, "deleted before launch"});
    return;
  }
  uint64_t now = clock_.now_ms();
  if (!written) {
    // Not bound (the store is down, or the pod changed under us): unscheduled again.
    tasks_.erase_pod(key);
    if (pending_.count(key) != 0)
      queue_.add(key, now + backoff_.next_delay(key, now), DelayQueue::Mode::kReplaceExisting);
    arm_queue_timer();
    return;
  }
  drop_pending(key);
  backoff_.reset(key);
  if (auto g = group_of_.find(key); g != group_of_.end()) groups_.touch(g->second);  // one more scheduled
  if (!hub_.send(tasks_.agent_of(task), launch)) {
    // The agent left after the offer: the task is lost like the agent's others.
    lifecycle_.end(key, task, apply_status(task, "TASK_LOST"));
    return;
  }
  task.launched = true;
  if (task.restart || task.expired)
    lifecycle_.kill(key, task);         // its images changed, or its deadline passed, meanwhile
  if (log_enabled(LogLevel::kDebug)) {  // the id is built only for a line that is written
    log_debug("task_launched").kv("task", PodTaskRegistry::id_of(key, task)).kv("agent", tasks_.agent_of(task));
  }
}

// A binding stored for an offer that went meanwhile: the task is never
// launched; the binding is taken back (the task kept until then, so the
// pod's events stay ours) and the pod, pending again, takes its turn anew.
void PodScheduler::roll_back(const std::string& key, uint64_t serial, const std::string& offer_id) {
  placements_.add(labels({{"result", "rolled_back"}}));
  log_info("launch_rolled_back")
      .kv("pod", key)
      .kv("offer", offer_id)
      .kv("why", "the offer was rescinded or ran out while the binding was written");
  std::string stamp = rfc3339(clock_.unix_ms());
  update_pod(
      PodRegistry::kPodPrefix + key,
      [stamp](JsonValue& p) {
        unbind(p);
        set_condition(p, "PodScheduled", "False", "OfferGone", "its offer was rescinded or ran out before the launch",
                      stamp);
        return true;
      },
      [this, key, serial](const PodWriter::Result& r) {
        PodTask* task = tasks_.by_pod(key);
        if (!task || task->serial != serial) return;
        if (!r.written()) {  // still bound in the store: lost, like a task whose agent left
          lifecycle_.end(key, *task, apply_status(*task, "TASK_LOST"));
          return;
        }
        tasks_.erase_pod(key);
        resync(key);  // pending again: it is read and queued as any unbound pod
      });
}

// ---- agent events -----------------------------------------------------------------

void PodScheduler::cordon_changed(const std::string& agent, bool cordoned) {
  hub_.set_cordoned(agent, cordoned);
  if (cordoned) return;  // what runs there stays; what waits is weighed without it from now on
  kept_out_.nodes_changed();
  std::vector<std::string> room;  // its live offers: pods waiting for room are woken as for new ones
  hub_.offers().for_each_live([&](const Offer& o) {
    if (o.agent == agent) room.push_back(o.id);
  });
  offers_arrived(room);
}

void PodScheduler::taints_changed(const std::string& agent, std::vector<Taint> taints) {
  hub_.set_taints(agent, std::move(taints));
  lifecycle_.taints_changed(agent);
  kept_out_.nodes_changed();
  std::vector<std::string> room;  // its live offers: pods waiting for a taint to go are woken
  hub_.offers().for_each_live([&](const Offer& o) {
    if (o.agent == agent) room.push_back(o.id);
  });
  offers_arrived(room);
}

void PodScheduler::node_labels_changed(const std::string& agent, LabelEdits edits) {
  hub_.set_label_edits(agent, std::move(edits));
  kept_out_.nodes_changed();
  std::vector<std::string> room;  // its live offers: pods waiting for a label it now has are woken
  hub_.offers().for_each_live([&](const Offer& o) {
    if (o.agent == agent) room.push_back(o.id);
  });
  offers_arrived(room);
}

void PodScheduler::offers_arrived(const std::vector<std::string>& offer_ids) {
  uint64_t now = clock_.now_ms();
  for (const auto& id : offer_ids) {
    for (const auto& key : hub_.offers().wake(id)) queue_.breakout(key, now);  // skip the rest of the backoff
    // Room on an agent a preemption was for: its preemptors are tried now too.
    if (const std::string* agent = nominations_.empty() ? nullptr : hub_.offers().agent_of(id)) {
      for (const auto& key : nominations_.pods_on(*agent)) queue_.breakout(key, now);
    }
  }
  pass_.schedule();
}

void PodScheduler::update_pod(const std::string& key, std::function<bool(JsonValue&)> mutate, PodWriter::Done done) {
  update_pod(key, nullptr, std::move(mutate), std::move(done));
}

void PodScheduler::update_pod(const std::string& key, PodWriter::TextEdit edit, std::function<bool(JsonValue&)> mutate,
                              PodWriter::Done done) {
  // Only a waiting pod's own write is looked for when the watch brings it back.
  bool own = pending_.count(key.substr(std::string_view(PodRegistry::kPodPrefix).size())) != 0;
  writer_.update(kept_pod_update(key, std::move(edit), std::move(mutate), own, std::move(done)));
}

void PodScheduler::agent_registered(const std::string& agent, bool reregistered) {
  log_debug("agent_registered").kv("agent", agent).kv("reregistered", reregistered ? "yes" : "no");
  kept_out_.nodes_changed();  // a node more (its labels, a topology domain) may let a pod kept out in
  lifecycle_.agent_registered(agent);
}

}  // namespace uvsched
