#include "handlers/pods/node_label_edits.h"

#include "handlers/json_value.h"

namespace uvsched {

std::string label_edits_json(const LabelEdits& edits) {
  JsonValue o = JsonValue::object();
  for (const auto& [key, value] : edits) o.set(key, value ? JsonValue::string(*value) : JsonValue());
  return o.dump();
}

std::optional<LabelEdits> parse_label_edits(std::string_view json) {
  std::string error;
  std::optional<JsonValue> o = JsonValue::parse(json, &error);
  if (!o || !o->is_object()) return std::nullopt;
  LabelEdits edits;
  for (const auto& [key, value] : o->members()) {
    if (value.is_null()) {
      edits[key] = std::nullopt;
    } else if (value.is_string()) {
      edits[key] = value.text();
    } else {
      return std::nullopt;
    }
  }
  return edits;
}

}  // namespace uvsched
