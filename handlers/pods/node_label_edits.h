// The operator's label edits of a node (kubectl label node) as the store
// keeps them, under PodRegistry::kNodeLabelsPrefix + the node's name: a JSON
// object with a string per label set and null per label taken off.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "policy/label_edits.h"

namespace uvsched {

std::string label_edits_json(const LabelEdits& edits);
// nullopt when the text is not such an object.
std::optional<LabelEdits> parse_label_edits(std::string_view json);

}  // namespace uvsched
