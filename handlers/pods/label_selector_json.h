// A metav1.LabelSelector as stored ({"matchLabels": {...}, "matchExpressions":
// [...]}) read into a LabelSelector, for the objects that select pods by one:
// disruption budgets, inter-pod affinity terms, topology spread constraints.
#pragma once

#include <optional>

#include "handlers/json_value.h"
#include "policy/label_selector.h"

namespace uvsched {

// nullopt when there is no selector (null or absent: it selects nothing);
// an empty one selects everything. Validation has refused bad operators; an
// unknown one stored before it did reads as DoesNotExist.
std::optional<LabelSelector> label_selector_of(const JsonValue* selector);

}  // namespace uvsched
