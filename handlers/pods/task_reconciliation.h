// Task reconciliation, as a Mesos framework does it: explicit on every agent
// (re)registration (after a restart the tasks recovered from the pods'
// annotations are unconfirmed until their agents answer; an agent that does
// not answer is asked again, with backoff), and implicit every
// --reconcile-interval (an empty RECONCILE: "report all your tasks"). Agents
// that (re)register in one loop turn are handled in one pass over the tasks:
// after a restart thousands re-subscribe at once. Only tasks whose LAUNCH
// has gone are asked about. The schedule is
// policy/reconciler's; this unit asks the agents and hears the answers.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "handlers/agents/agent_hub.h"
#include "policy/pod_task_registry.h"
#include "policy/reconciler.h"
#include "reactor/clock.h"
#include "reactor/clock_turn.h"

namespace uvsched {

class TaskReconciliation {
 public:
  // `tasks` are the scheduler's: which tasks each agent is asked about.
  TaskReconciliation(Clock& clock, AgentHub& hub, const PodTaskRegistry& tasks, uint64_t implicit_interval_ms);
  TaskReconciliation(const TaskReconciliation&) = delete;
  TaskReconciliation& operator=(const TaskReconciliation&) = delete;

  // The implicit schedule starts from now.
  void start();
  void stop();
  // Forgets the agents waiting for their pass (leadership moved).
  void clear() { to_ask_.clear(); }
  // Its tasks are asked about on the coming turn, with every other agent's
  // that (re)registered in this one.
  void agent_registered(const std::string& agent);
  // An answer about the task came: it is not asked about again.
  void reported(const std::string& task_id) { reconciler_.reported(task_id); }

 private:
  void ask_registered();  // for the agents in to_ask_
  void due();
  void arm();

  Clock& clock_;
  AgentHub& hub_;
  const PodTaskRegistry& tasks_;
  Reconciler reconciler_;
  ClockTurn pass_;
  std::set<std::string> to_ask_;  // agents (re)registered since the last pass
  std::unique_ptr<Timer> timer_;
};

}  // namespace uvsched
