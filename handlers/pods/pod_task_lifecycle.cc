#include "handlers/pods/pod_task_lifecycle.h"

#include <algorithm>
#include <string>

#include "handlers/agents/agent_events.h"
#include "handlers/pods/active_deadlines.h"
#include "handlers/pods/container_restarts.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/pod_binding.h"
#include "handlers/pods/pod_deletion.h"
#include "handlers/pods/pod_fields.h"
#include "handlers/pods/pod_needs.h"
#include "handlers/pods/pod_registry.h"
#include "handlers/pods/pod_validation.h"
#include "policy/taints.h"
#include "reactor/log.h"
#include "storage/unwaited.h"

namespace uvsched {

PodTaskLifecycle::PodTaskLifecycle(Store& store, Clock& clock, AgentHub& hub, PodWriter& writer, PodTaskRegistry& tasks,
                                   SchedulingLog& recent, uint64_t reconcile_interval_ms, Placement placement)
    : store_(store),
      clock_(clock),
      hub_(hub),
      writer_(writer),
      tasks_(tasks),
      recent_(recent),
      placement_(std::move(placement)),
      deadlines_(clock, [this](const std::string& pod) { deadline_passed(pod); }),
      evictions_(clock, [this](const std::string& pod) { toleration_ended(pod); }),
      reconciliation_(clock, hub, tasks, reconcile_interval_ms) {}

void PodTaskLifecycle::start() { reconciliation_.start(); }

void PodTaskLifecycle::stop() {
  deadlines_.clear();
  evictions_.clear();
  reconciliation_.stop();
}

void PodTaskLifecycle::clear() {
  crash_backoff_ = PodBackoff(kCrashLoopBackoff);
  restart_due_.clear();
  deadlines_.clear();
  evictions_.clear();
  reconciliation_.clear();
}

void PodTaskLifecycle::forget(const std::string& pod) {
  restart_due_.erase(pod);
  deadlines_.forget(pod);
  evictions_.forget(pod);
}

std::optional<uint64_t> PodTaskLifecycle::held_for_restart(const std::string& pod, uint64_t now) {
  auto due = restart_due_.find(pod);
  if (due == restart_due_.end()) return std::nullopt;
  if (due->second > now) return due->second;
  restart_due_.erase(due);
  return std::nullopt;
}

void PodTaskLifecycle::end(const std::string& pod, PodTask& task, const Transition& t) { apply(pod, task, t, nullptr); }

void PodTaskLifecycle::kill(const std::string& key, const PodTask& task) {
  hub_.send(tasks_.agent_of(task), kill_event(PodTaskRegistry::id_of(key, task), task.grace_s));
}

void PodTaskLifecycle::deadline_passed(const std::string& key) {
  if (PodTask* task = tasks_.by_pod(key)) {
    if (task->deleted || task->expired || task->state == TaskState::kGone || task->state == TaskState::kFinished)
      return;
    task->expired = true;
    log_info("task_deadline_exceeded").kv("pod", key).kv("task", PodTaskRegistry::id_of(key, *task));
    // Not launched yet: its binding is being written; it is killed once launched (bound()).
    if (task->launched) kill(key, *task);
    return;
  }
  // No task: a pod waiting to start again fails where it waits. The stored
  // pod decides, so a deadline left by a binding that was never stored, or
  // one raised meanwhile, fails nothing.
  int64_t now = clock_.unix_ms();
  update_pod(
      PodRegistry::kPodPrefix + key,
      [now, stamp = rfc3339(now)](JsonValue& p) {
        std::optional<int64_t> deadline = active_deadline_unix_ms(p);
        if (!deadline || *deadline > now || p.find({"metadata", "deletionTimestamp"})) return false;
        if (const std::string phase = phase_of(p); phase == "Succeeded" || phase == "Failed") return false;
        if (!annotation(p, kTaskAnnotation).empty()) return false;  // bound: its task's end decides
        fail_past_deadline(p, stamp);
        return true;
      },
      [this, key](const PodWriter::Result& r) {
        // The watch brings this write back as a waiting pod's own, which it
        // does not read again: the pod leaves the queue here.
        if (r.written()) placement_.failed_waiting(key);
      });
}

void PodTaskLifecycle::deadline_changed(const std::string& ns, const std::string& name,
                                        std::optional<int64_t> deadline_unix_ms) {
  std::string key = ns + "/" + name;
  if (!tasks_.has_pod(key)) return;  // a waiting pod's change is read from the watch
  if (deadline_unix_ms) {
    deadlines_.at_unix(key, *deadline_unix_ms);
  } else {
    deadlines_.forget(key);
  }
}

bool PodTaskLifecycle::handle_delete(const std::string& ns, const std::string& name, std::optional<int64_t> grace,
                                     std::function<void(HttpResponse&&)> done) {
  std::string key = ns + "/" + name;
  PodTask* task = tasks_.by_pod(key);
  if (!task || task->state == TaskState::kGone || task->state == TaskState::kFinished) return false;
  tasks_.mark_deleted(key, *task);
  // The object stays, marked, until the task is gone (TASK_KILLED, or the
  // agent is lost). The KILL goes once the mark is stored: sent before, a
  // quick agent's TASK_KILLED removed the pod before this read it, and the
  // client heard 404 for a delete that worked. A store that failed is said,
  // so the client asks again (and the task, still reporting, is killed then).
  delete_pod_object(store_, PodRegistry::kPodPrefix + key, clock_.unix_ms(), DeleteHold{grace},
                    [this, done = std::move(done), name, key](PodDeletion&& d) mutable {
                      if (d.status.code == StoreCode::kInvalid)
                        return done(k8s_error(500, "InternalError", d.status.message));
                      if (!d.status.ok()) return done(k8s_error(503, "ServiceUnavailable", "the store is unavailable"));
                      if (PodTask* t = tasks_.by_pod(key); t && t->deleted && t->state != TaskState::kGone) {
                        if (d.found)
                          t->grace_s = static_cast<uint32_t>(std::clamp<int64_t>(d.grace_seconds, 0, UINT32_MAX));
                        kill(key, *t);
                      }
                      if (!d.found) return done(pod_not_found(name));
                      done(k8s_object(200, std::move(d.object)));
                    });
  return true;
}

void PodTaskLifecycle::images_changed(const std::string& ns, const std::string& name) {
  std::string key = ns + "/" + name;
  PodTask* task = tasks_.by_pod(key);
  if (!task || task->deleted || task->restart || task->state == TaskState::kGone || task->state == TaskState::kFinished)
    return;
  task->restart = true;
  log_info("task_restarting").kv("pod", key).kv("why", "its pod's container images changed");
  // Not launched yet: its binding is being written, and the LAUNCH may carry
  // the pod as it was; it is killed once launched (bound()).
  if (task->launched) kill(key, *task);
}

// The taint manager's work, for the pods running on `agent` now that its
// taints changed: each is read for its tolerations; one that does not
// tolerate a NoExecute taint is deleted, one that tolerates it for a while
// is deleted then (a time set before stays, unless this one is sooner), and
// one that tolerates them all for good, or on an agent with none, stays.
void PodTaskLifecycle::taints_changed(const std::string& agent) {
  std::optional<uint32_t> index = tasks_.agent_index(agent);
  if (!index) return;
  bool noexecute = has_noexecute(hub_.taints(agent));
  for (const auto& [pod, task] : tasks_.on_agent(*index)) {
    if (task->deleted) continue;
    std::string key(pod);
    if (!noexecute) {
      evictions_.forget(key);
      continue;
    }
    store_.get(PodRegistry::kPodPrefix + key, {}, [this, key, agent, serial = task->serial](RangeResult&& r) {
      PodTask* now = tasks_.by_pod(key);
      if (!r.status.ok() || r.kvs.empty() || !now || now->serial != serial || now->deleted) return;
      std::string error;
      std::optional<JsonValue> p = JsonValue::parse(r.kvs[0].value, &error);
      if (!p) return;
      std::optional<uint64_t> stay = noexecute_stay_ms(pod_needs(*p).tolerations, hub_.taints(agent));
      if (!stay) return evictions_.forget(key);
      if (*stay == 0) return toleration_ended(key);
      std::optional<uint64_t> due = evictions_.due_at(key);
      if (!due || *due > clock_.now_ms() + *stay) evictions_.after(key, *stay);
    });
  }
}

// A pod on an agent with a NoExecute taint it does not (or no longer)
// tolerates is deleted, as the taint manager deletes it: first it is marked
// with the DisruptionTarget condition (a Job's podFailurePolicy reads it, to
// tell an eviction from a failure of the pod's own), then its task is
// killed and the object goes once the task is gone.
void PodTaskLifecycle::toleration_ended(const std::string& key) {
  PodTask* task = tasks_.by_pod(key);
  if (!task || task->deleted) return;
  std::string agent = tasks_.agent_of(*task);
  if (!has_noexecute(hub_.taints(agent)))
    return;  // taken off meanwhile (an alarm left by a binding that was not stored)
  log_info("pod_evicted").kv("pod", key).kv("agent", agent).kv("why", "a NoExecute taint");
  recent_.add(clock_.unix_ms(), SchedulingLog::Kind::kTaintEviction, key, agent);
  auto mark = [stamp = rfc3339(clock_.unix_ms())](JsonValue& p) {
    set_condition(p, "DisruptionTarget", "True", "DeletionByTaintManager",
                  "Taint manager: deleting due to NoExecute taint", stamp);
    return true;
  };
  update_pod(PodRegistry::kPodPrefix + key, mark, [this, key, serial = task->serial](const PodWriter::Result&) {
    // (Marked or not, it goes: a store that failed fails the delete too, said below.)
    PodTask* now = tasks_.by_pod(key);
    if (!now || now->serial != serial || now->deleted) return;  // ended meanwhile: not on the agent any more
    size_t slash = key.find('/');
    handle_delete(key.substr(0, slash), key.substr(slash + 1), std::nullopt, [key](HttpResponse&& r) {
      if (r.status >= 300) log_warn("pod_eviction_failed").kv("pod", key).kv("status", static_cast<uint64_t>(r.status));
    });
  });
}

void PodTaskLifecycle::status_update(const std::string& agent, const TaskStatus& status) {
  const std::string& id = status.task_id;
  const std::string& state = status.state;
  reconciliation_.reported(id);
  PodTask* task = tasks_.by_id(id);
  if (!task) return adopt_or_kill(agent, status);
  // A deleted pod's task still running missed its KILL (its agent was away,
  // or following a new leader): it gets it again with each report.
  // So does a task its pod's new images are to replace, or past its deadline.
  if ((task->deleted || task->restart || task->expired) && !ends_task(state) && state != "TASK_KILLING")
    kill(*PodTaskRegistry::pod_of(id), *task);
  Transition t = apply_status(*task, state);
  apply(*PodTaskRegistry::pod_of(id), *task, t, &status);
}

std::optional<std::string> PodTaskLifecycle::refuse_status(const std::string& agent, const TaskStatus& status) const {
  const PodTask* task = tasks_.by_id(status.task_id);
  if (!task || tasks_.agent_of(*task) == agent) return std::nullopt;
  return "task " + status.task_id + " was not launched on agent " + agent;
}

void PodTaskLifecycle::adopt_or_kill(const std::string& agent, const TaskStatus& status) {
  if (ends_task(status.state)) return;  // it is over: nothing to keep or kill
  std::optional<std::string> pod = PodTaskRegistry::pod_of(status.task_id);
  auto kill_unknown = [this, agent](const std::string& id, const char* why) {
    log_warn("unknown_task_killed").kv("task", id).kv("agent", agent).kv("why", why);
    hub_.send(agent, kill_event(id));
  };
  if (!pod) return kill_unknown(status.task_id, "not a task id of ours");
  store_.get(PodRegistry::kPodPrefix + *pod, {}, [this, agent, status, key = *pod, kill_unknown](RangeResult&& r) {
    if (!r.status.ok()) {
      // The store cannot say: nothing is killed now; the agent's next report asks again.
      log_warn("unknown_task_unjudged").kv("task", status.task_id).kv("error", r.status.message);
      return;
    }
    if (PodTask* known = tasks_.by_id(status.task_id)) {  // adopted meanwhile
      Transition t = apply_status(*known, status.state);
      return apply(key, *known, t, &status);
    }
    std::optional<RecoveredTask> recovered = r.kvs.empty() ? std::nullopt : placement_.recover_task(r.kvs[0]);
    const PodTask* t = recovered ? &recovered->task : nullptr;
    if (!t || PodTaskRegistry::id_of(key, *t) != status.task_id || tasks_.has_pod(key)) {
      if (status.state == "TASK_STAGING" || status.state == "TASK_STARTING") {
        // Its pod, or its binding, may still be on its way into the store
        // (a create carries both): its next report decides.
        log_info("unknown_task_waiting").kv("task", status.task_id).kv("agent", agent);
        return;
      }
      return kill_unknown(status.task_id, r.kvs.empty() ? "its pod is gone" : "its pod names another task");
    }
    if (tasks_.agent_of(*t) != agent) {
      // Another agent's task (its pod says where it runs): neither adopted nor killed from here.
      log_warn("agent_refused")
          .kv("agent", agent)
          .kv("what", "status of another agent's task")
          .kv("task", status.task_id);
      return;
    }
    if (t->deleted) return kill_unknown(status.task_id, "its pod is being deleted");
    log_info("task_adopted").kv("task", status.task_id).kv("agent", agent);
    tasks_.add(key, *t, &recovered->labels);
    PodTask* adopted = tasks_.by_pod(key);
    if (adopted->restart) kill(key, *adopted);  // launched with images its pod no longer names
    Transition tr = apply_status(*adopted, status.state);
    apply(key, *adopted, tr, &status);
  });
}

void PodTaskLifecycle::apply(std::string pod, PodTask& task, const Transition& t, const TaskStatus* status) {
  if (t.action == TaskAction::kError) {
    log_error("task_status_rejected").kv("task", PodTaskRegistry::id_of(pod, task)).kv("why", t.note);
    return;
  }
  if (t.action == TaskAction::kNone || t.action == TaskAction::kBind) return;  // TASK_STARTING: nothing to write
  std::string key = PodRegistry::kPodPrefix + pod;
  placement_.task_moved(pod);  // (its gang's counts)
  switch (t.action) {
    case TaskAction::kNone:
    case TaskAction::kBind:
    case TaskAction::kError:
      return;  // above
    case TaskAction::kMarkRunning: {
      // The agent may send the pod's status as a JSON object in `data` (read
      // and bounded by read_statuses). Shared, not copied, by the edits below
      // and every retry.
      std::shared_ptr<const JsonValue> extra;
      if (status && !status->data.empty()) {
        std::string error;
        std::optional<JsonValue> parsed = JsonValue::parse(status->data, &error);
        if (parsed && parsed->is_object()) extra = std::make_shared<const JsonValue>(std::move(*parsed));
      }
      // Once running, a pod changes rarely (it ends, or is deleted): its copy
      // leaves the cache, and those rare updates read it first.
      bool merge = extra != nullptr;
      auto running = [extra, stamp = rfc3339(clock_.unix_ms())](JsonValue& st) {
        int64_t restarts = restart_count(st);
        if (extra) {
          // Conditions merge by type (their patch strategy): the agent's
          // replace theirs, and those it does not report (PodScheduled, a
          // DisruptionTarget from a preemption) stay.
          JsonValue before = st.get("conditions") ? *st.get("conditions") : JsonValue::array();
          st.merge_patch(*extra);
          JsonValue* after = st.get("conditions");
          if (after && after->is_array() && before.is_array()) {
            for (auto& c : before.items()) {
              bool reported = false;
              for (const auto& n : after->items()) reported = reported || n.str("type") == c.str("type");
              if (!reported) after->push(std::move(c));
            }
          }
        }
        keep_restarts(st, restarts, stamp);
        st.set("phase", JsonValue::string("Running"));
        return true;
      };
      // Text edits, so the pod's spec and metadata are not parsed and written
      // again: the phase alone (the common case: a pod that never restarted,
      // on an agent that says nothing of its containers), or the status object.
      PodWriter::TextEdit edit = [running, merge](std::string_view s) {
        return merge || s.find(R"("containerStatuses")") != std::string_view::npos
                   ? JsonValue::with_object_at(s, {"status"}, running)
                   : JsonValue::with_string_at(s, {"status", "phase"}, "Running");
      };
      update_pod(
          key, std::move(edit), [running](JsonValue& p) { return running(p.ensure({"status"})); },
          [this, key](const PodWriter::Result&) { writer_.forget(key); });
      return;
    }
    case TaskAction::kMarkSucceeded:
      if (task.restart) {  // it ended as it was killed: the pod runs again all the same
        tasks_.erase_pod(pod);
        requeue_or_fail(pod, "its container images changed", TaskEnd::kReplaced);
        return;
      }
      update_pod(key, [](JsonValue& p) {
        p.ensure({"status"}).set("phase", JsonValue::string("Succeeded"));
        return true;
      });
      tasks_.erase_pod(pod);
      deadlines_.forget(pod);
      evictions_.forget(pod);
      return;
    case TaskAction::kRemoveDeleted:
      tasks_.erase_pod(pod);
      deadlines_.forget(pod);
      evictions_.forget(pod);
      delete_pod_object(store_, key, clock_.unix_ms(), std::nullopt,
                        unwaited<PodDeletion>("pod_delete", key));  // kept if finalizers hold it
      return;
    case TaskAction::kRemoveFailed: {
      if (task.expired) {  // killed past its deadline (or it ended meanwhile): failed, whatever its restart policy
        tasks_.erase_pod(pod);
        deadlines_.forget(pod);
        evictions_.forget(pod);
        recent_.add(clock_.unix_ms(), SchedulingLog::Kind::kTaskEnded, pod, std::string(kDeadlineExceeded));
        update_pod(key, [stamp = rfc3339(clock_.unix_ms())](JsonValue& p) {
          fail_past_deadline(p, stamp);
          return true;
        });
        return;
      }
      TaskEnd end = task.restart                        ? TaskEnd::kReplaced
                    : status && is_crash(status->state) ? TaskEnd::kCrashed
                                                        : TaskEnd::kLost;
      tasks_.erase_pod(pod);
      evictions_.forget(pod);  // (its deadline stays: it bounds the pod's restarts too)
      requeue_or_fail(pod, end == TaskEnd::kReplaced ? "its container images changed" : t.note, end);
      return;
    }
  }
}

void PodTaskLifecycle::requeue_or_fail(const std::string& pod, const std::string& why, TaskEnd end) {
  recent_.add(clock_.unix_ms(), SchedulingLog::Kind::kTaskEnded, pod, why);
  update_pod(PodRegistry::kPodPrefix + pod, [this, pod, why, end](JsonValue& p) {
    const JsonValue* rp = p.find({"spec", "restartPolicy"});
    if (end != TaskEnd::kReplaced && rp && rp->text() == "Never") {
      JsonValue& st = p.ensure({"status"});
      st.set("phase", JsonValue::string("Failed"));
      st.set("reason", JsonValue::string(why));
      return true;
    }
    // Always / OnFailure: back to the queue, unbound; its containers run no
    // more, and will have restarted once more when they do. A crash waits
    // out its back-off first (taken once: a retry of this update finds it).
    std::string waiting, message;
    if (end == TaskEnd::kCrashed) {
      uint64_t now = clock_.now_ms();
      auto due = restart_due_.find(pod);
      if (due == restart_due_.end() || due->second <= now) {
        due = restart_due_.insert_or_assign(pod, now + crash_backoff_.next_delay(pod, now)).first;
      }
      waiting = kCrashLoopBackOff;
      message = "back-off " + go_duration(due->second - now) + " restarting the failed task (" + why + ")";
    }
    unbind(p);
    int64_t restarts = p.get("status") ? restart_count(*p.get("status")) : 0;
    p.ensure({"status"}).set("phase", JsonValue::string("Pending"));
    write_restarting(p, restarts + 1, waiting, message);
    return true;
  });
}

void PodTaskLifecycle::agent_registered(const std::string& agent) { reconciliation_.agent_registered(agent); }

void PodTaskLifecycle::agent_lost(const std::string& agent) {
  std::vector<std::string> pods;
  for (const auto& [key, t] : tasks_) {
    if (tasks_.agent_of(t) == agent) pods.emplace_back(key);
  }
  for (const auto& key : pods) {
    PodTask* task = tasks_.by_pod(key);
    if (task) apply(key, *task, apply_status(*task, "TASK_LOST"), nullptr);
  }
}

void PodTaskLifecycle::update_pod(const std::string& key, std::function<bool(JsonValue&)> mutate,
                                  PodWriter::Done done) {
  update_pod(key, nullptr, std::move(mutate), std::move(done));
}

void PodTaskLifecycle::update_pod(const std::string& key, PodWriter::TextEdit edit,
                                  std::function<bool(JsonValue&)> mutate, PodWriter::Done done) {
  bool waiting = placement_.waiting(key.substr(std::string_view(PodRegistry::kPodPrefix).size()));
  writer_.update(kept_pod_update(key, std::move(edit), std::move(mutate), waiting, std::move(done)));
}

}  // namespace uvsched
