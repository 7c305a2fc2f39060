// The disruption controller and the Eviction API's budget check, for the
// PodDisruptionBudgets the ObjectRegistry stores:
//  - each budget's status (how many of its pods are healthy, how many it
//    needs, how many may be disrupted: policy/disruption_budget.h) is kept
//    current while this daemon leads, computed again a moment after a pod in
//    its namespace changes, after the budget itself does, and when a
//    recorded disruption times out; written only when it changed;
//  - an eviction of a pod a budget covers is weighed against that budget as
//    stored now (over the pods kept for it), and a disruption it spends is
//    recorded in the budget's status.disruptedPods by a write over the
//    revision read: two evictions at once cannot both spend the last one.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "handlers/json_value.h"
#include "handlers/pods/disruption_budget_objects.h"
#include "handlers/pods/namespace_pods.h"
#include "handlers/pods/pod_writer.h"
#include "reactor/clock.h"
#include "reactor/http_message.h"
#include "storage/prefix_informer.h"
#include "storage/store.h"

namespace uvsched {

class DisruptionBudgets {
 public:
  // How long pod changes are gathered before the budgets of their namespaces are computed again.
  static constexpr uint64_t kSettleMs = 200;

  DisruptionBudgets(Store& store, Clock& clock, PodWriter& writer);
  ~DisruptionBudgets();
  DisruptionBudgets(const DisruptionBudgets&) = delete;
  DisruptionBudgets& operator=(const DisruptionBudgets&) = delete;

  // Keeps the statuses (the leader does); stop() leaves them as written.
  void start();
  void stop();

  // nullopt: the pod may be evicted (any disruption it spends is recorded
  // first, unless `dry_run`); otherwise the refusal to send: 429 when it
  // would break its budget (or when the budget changed under it
  // PodWriter::kAttempts times), 500 when two budgets cover it, 403 when too
  // many disruptions are unconfirmed, 503 when the store cannot be read. The
  // pods are those kept for the budgets, or read from the store before then.
  using Verdict = std::function<void(std::optional<HttpResponse> refusal)>;
  void admit_eviction(const std::string& ns, const JsonValue& pod, bool dry_run, Verdict done);

 private:
  struct Eviction;
  // The one budget covering the pod, at `key`, against its namespace's pods:
  // spent (and recorded) or refused, over the budget's latest revision.
  void weigh(std::shared_ptr<Eviction> e, const std::string& key,
             std::shared_ptr<const std::vector<BudgetPodView>> pods);
  // The pods kept of `ns` (pods_), or null until they are read.
  std::shared_ptr<const std::vector<BudgetPodView>> kept_pods(const std::string& ns) const;

  void on_budget(const std::string& key, const std::string* value);
  void mark(const std::string& ns);
  void flush();
  // Computes the status of every budget in `ns` from its pods as kept (pods_).
  void recompute(const std::string& ns);
  // A recorded disruption in `ns` times out then: the budget is computed again.
  void expire_at(const std::string& ns, const DisruptedPods& disrupted);
  void arm_expiry();

  Store& store_;
  Clock& clock_;
  PodWriter& writer_;
  const std::string prefix_;  // where the budgets are stored
  PrefixInformer budgets_;
  std::map<std::string, std::string> specs_;  // budget key -> its spec as last seen
  std::map<std::string, size_t> namespaces_;  // the namespaces with budgets, and how many
  std::set<std::string> dirty_;
  NamespacePods pods_;  // of the namespaces with budgets
  std::unique_ptr<Timer> settle_;
  std::unique_ptr<Timer> expiry_;
  std::map<std::string, int64_t> expiries_;  // namespace -> when (unix ms) a recorded disruption times out
  bool running_ = false;
};

}  // namespace uvsched
