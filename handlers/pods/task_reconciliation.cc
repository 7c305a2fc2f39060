#include "handlers/pods/task_reconciliation.h"

#include <map>
#include <vector>

#include "reactor/json_writer.h"
#include "reactor/log.h"

namespace uvsched {

TaskReconciliation::TaskReconciliation(Clock& clock, AgentHub& hub, const PodTaskRegistry& tasks,
                                       uint64_t implicit_interval_ms)
    : clock_(clock),
      hub_(hub),
      tasks_(tasks),
      reconciler_({.implicit_interval_ms = implicit_interval_ms}),
      pass_(clock, [this] { ask_registered(); }),
      timer_(clock.new_timer()) {}

void TaskReconciliation::start() {
  reconciler_.start(clock_.now_ms());
  arm();
}

void TaskReconciliation::stop() { timer_->stop(); }

void TaskReconciliation::agent_registered(const std::string& agent) {
  log_debug("reconcile_requested").kv("agent", agent);
  to_ask_.insert(agent);
  pass_.schedule();
}

void TaskReconciliation::ask_registered() {
  std::map<std::string, std::vector<std::string>> ids;  // agent -> its tasks
  for (const auto& agent : to_ask_) ids[agent];
  for (const auto& [key, t] : tasks_) {
    // A task whose LAUNCH has not gone (its binding still being written)
    // goes on the stream the agent has now, after this ask: the agent,
    // answering in order, would call it lost.
    if (!t.launched) continue;
    auto it = ids.find(tasks_.agent_of(t));
    if (it != ids.end()) it->second.push_back(PodTaskRegistry::id_of(key, t));
  }
  to_ask_.clear();
  uint64_t now = clock_.now_ms();
  for (auto& [agent, tasks] : ids) reconciler_.request_explicit(agent, std::move(tasks), now);
  arm();
}

void TaskReconciliation::arm() {
  auto next = reconciler_.next_deadline();
  if (!next) return;
  uint64_t now = clock_.now_ms();
  timer_->start(*next > now ? *next - now : 0, [this] { due(); });
}

void TaskReconciliation::due() {
  Reconciler::Ask ask = reconciler_.due(clock_.now_ms());
  std::map<std::string, JsonWriter> per_agent;
  for (const auto& id : ask.tasks) {
    const PodTask* task = tasks_.by_id(id);
    if (!task) {
      reconciler_.reported(id);  // gone meanwhile: nothing to ask
      continue;
    }
    JsonWriter& w = per_agent[tasks_.agent_of(*task)];
    if (w.str().empty()) w.begin_object().key("type").value("RECONCILE").key("tasks").begin_array();
    w.begin_object().key("task_id").begin_object().key("value").value(id).end_object();
    w.key("state").value(task->state == TaskState::kRunning ? "TASK_RUNNING" : "TASK_STAGING").end_object();
  }
  for (auto& [agent, w] : per_agent) {
    w.end_array().end_object();
    hub_.send(agent, w.take());
  }
  if (ask.implicit) {
    for (const auto& [host, a] : hub_.agents()) {
      if (a->connected) hub_.send(host, R"({"type":"RECONCILE","tasks":[]})");  // empty: report all
    }
  }
  arm();
}

}  // namespace uvsched
