#include "handlers/pods/node_taints.h"

#include "policy/placement.h"  // kUnschedulableTaint

namespace uvsched {

std::vector<Taint> taints_of(const JsonValue* list) {
  std::vector<Taint> out;
  if (!list || !list->is_array()) return out;
  for (const JsonValue& t : list->items()) {
    if (!t.is_object() || t.str("key") == kUnschedulableTaint) continue;
    out.push_back(
        {.key = t.str("key"), .value = t.str("value"), .effect = t.str("effect"), .time_added = t.str("timeAdded")});
  }
  return out;
}

std::string taints_json(const std::vector<Taint>& taints) {
  JsonValue list = JsonValue::array();
  for (const Taint& t : taints) {
    JsonValue o = JsonValue::object();
    o.set("key", JsonValue::string(t.key));
    if (!t.value.empty()) o.set("value", JsonValue::string(t.value));
    o.set("effect", JsonValue::string(t.effect));
    if (!t.time_added.empty()) o.set("timeAdded", JsonValue::string(t.time_added));
    list.push(std::move(o));
  }
  return list.dump();
}

std::optional<std::vector<Taint>> parse_taints(std::string_view json) {
  std::string error;
  std::optional<JsonValue> list = JsonValue::parse(json, &error);
  if (!list || !list->is_array()) return std::nullopt;
  for (const JsonValue& t : list->items()) {
    if (!t.is_object()) return std::nullopt;
    for (const char* k : {"key", "value", "effect", "timeAdded"}) {
      if (const JsonValue* v = t.get(k); v && !v->is_string()) return std::nullopt;
    }
  }
  return taints_of(&*list);
}

}  // namespace uvsched
