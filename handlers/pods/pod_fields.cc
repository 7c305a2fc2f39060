#include "handlers/pods/pod_fields.h"

namespace uvsched {

void set_condition(JsonValue& pod, const std::string& type, const std::string& status, const std::string& reason,
                   const std::string& message, const std::string& now) {
  JsonValue& conds = pod.ensure({"status"}).at("conditions");
  if (!conds.is_array()) conds = JsonValue::array();
  JsonValue c = JsonValue::object();
  c.set("type", JsonValue::string(type));
  c.set("status", JsonValue::string(status));
  if (!reason.empty()) c.set("reason", JsonValue::string(reason));
  if (!message.empty()) c.set("message", JsonValue::string(message));
  c.set("lastTransitionTime", JsonValue::string(now));
  for (auto& existing : conds.items()) {
    if (existing.str("type") == type) {
      existing = std::move(c);
      return;
    }
  }
  conds.push(std::move(c));
}

}  // namespace uvsched
