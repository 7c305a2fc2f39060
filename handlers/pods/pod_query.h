// What a list or watch of pods asks for: label and field selectors, paging,
// and whether the answer is a Table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "handlers/json_value.h"
#include "handlers/pods/pod_table.h"
#include "policy/label_selector.h"

namespace uvsched {

// An object's metadata.labels (values as their text; none when absent).
Labels labels_of(const JsonValue& obj);

struct PodQuery {
  LabelSelector labels;
  std::vector<FieldRequirement> fields;  // over metadata.name, metadata.namespace, spec.nodeName, status.phase
  int64_t limit = 0;
  std::string continue_after;  // a key
  bool table = false;
  RowObject row = RowObject::kMetadata;  // of the Table's rows

  // From a list's query string (labelSelector, fieldSelector, limit,
  // continue); nullopt, with the API server's words in *error, when one is bad.
  static std::optional<PodQuery> parse(std::string_view query, std::string* error);

  bool selects(const JsonValue& pod) const;
  bool filters() const { return !labels.empty() || !fields.empty(); }
};

}  // namespace uvsched
