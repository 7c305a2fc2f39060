// PodDisruptionBudget (policy/v1) as an API object: its description for the
// ObjectRegistry (validation as the API server's, the columns of `kubectl
// get pdb`, a status that is the controller's and not the client's), and
// what the budget's arithmetic (policy/disruption_budget.h) reads of it and
// of the pods it selects.
#pragma once

#include <optional>
#include <string>

#include "handlers/json_value.h"
#include "handlers/pods/object_registry.h"
#include "policy/disruption_budget.h"
#include "policy/label_selector.h"

namespace uvsched {

ObjectKind pod_disruption_budget_kind();

// A stored budget as its arithmetic reads it.
struct Budget {
  std::string name;
  BudgetSpec spec;
  // policy/v1: no selector selects no pod; an empty one, every pod of the namespace.
  std::optional<LabelSelector> selector;
  DisruptedPods disrupted;  // status.disruptedPods
  int64_t generation = 1;
  bool selects(const Labels& labels) const { return selector && selector->matches(labels); }
};
// nullopt for what validation would refuse (an object stored some other way).
std::optional<Budget> read_budget(const JsonValue& pdb);

// A pod as a budget reads it, with the labels its selector matches.
struct BudgetPodView {
  BudgetPod pod;
  Labels labels;
  bool ended = false;  // Succeeded or Failed
  bool pending = false;
};
BudgetPodView budget_pod_view(const JsonValue& pod);

// The status to store for `status`, keeping the DisruptionAllowed
// condition's lastTransitionTime from `old` (the stored status, or null)
// when the condition did not change.
JsonValue budget_status_json(const BudgetStatus& status, int64_t generation, const JsonValue* old, int64_t now_unix_ms);

}  // namespace uvsched
