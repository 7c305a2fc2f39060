// The taints put on a node through the API (kubectl taint), as a node shows
// them (spec.taints) and as the store keeps them, under
// PodRegistry::kNodeTaintsPrefix + the node's name: a JSON array of taints.
// A cordon's taint (node.kubernetes.io/unschedulable) is not among them: it
// is spec.unschedulable's, and shown from it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "handlers/json_value.h"
#include "policy/taints.h"

namespace uvsched {

// The taints of a node's spec.taints (validated), the cordon's left out.
std::vector<Taint> taints_of(const JsonValue* list);
std::string taints_json(const std::vector<Taint>& taints);
// nullopt when the text is not such an array.
std::optional<std::vector<Taint>> parse_taints(std::string_view json);

}  // namespace uvsched
