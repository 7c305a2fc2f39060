// What a list or watch of pods asks for: label and field selectors, paging,
// and whether the answer is a Table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "handlers/json_value.h"
#include "policy/label_selector.h"

namespace uvsched {

struct PodQuery {
  LabelSelector labels;
  std::vector<FieldRequirement> fields;  // over metadata.name, metadata.namespace, spec.nodeName, status.phase
  int64_t limit = 0;
  std::string continue_after;  // a key
  bool table = false;

  bool selects(const JsonValue& pod) const;
  bool filters() const { return !labels.empty() || !fields.empty(); }
};

}  // namespace uvsched
