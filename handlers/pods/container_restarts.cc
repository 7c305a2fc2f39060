#include "handlers/pods/container_restarts.h"

#include <algorithm>

namespace uvsched {

int64_t restart_count(const JsonValue& status) {
  int64_t most = 0;
  const JsonValue* statuses = status.get("containerStatuses");
  if (!statuses || !statuses->is_array()) return 0;
  for (const auto& cs : statuses->items()) {
    if (const JsonValue* n = cs.get("restartCount")) most = std::max(most, n->as_integer().value_or(0));
  }
  return most;
}

void write_restarting(JsonValue& pod, int64_t restarts, std::string_view waiting_reason, std::string_view message) {
  JsonValue statuses = JsonValue::array();
  if (const JsonValue* containers = pod.find({"spec", "containers"}); containers && containers->is_array()) {
    for (const auto& c : containers->items()) {
      // The members in the order the API server writes them.
      JsonValue cs = JsonValue::object();
      cs.set("name", JsonValue::string(c.str("name")));
      JsonValue state = JsonValue::object();
      if (!waiting_reason.empty()) {
        JsonValue waiting = JsonValue::object();
        waiting.set("reason", JsonValue::string(std::string(waiting_reason)));
        waiting.set("message", JsonValue::string(std::string(message)));
        state.set("waiting", std::move(waiting));
      }
      cs.set("state", std::move(state));
      cs.set("ready", JsonValue::boolean(false));
      cs.set("restartCount", JsonValue::integer(restarts));
      cs.set("image", JsonValue::string(c.str("image")));
      cs.set("imageID", JsonValue::string(""));
      cs.set("started", JsonValue::boolean(false));
      statuses.push(std::move(cs));
    }
  }
  // (The spec is read before status is ensured: a new member may move it.)
  pod.ensure({"status"}).set("containerStatuses", std::move(statuses));
}

void keep_restarts(JsonValue& status, int64_t restarts, const std::string& now_rfc3339) {
  JsonValue* statuses = status.get("containerStatuses");
  if (!statuses || !statuses->is_array()) return;
  for (auto& cs : statuses->items()) {
    if (!cs.is_object()) continue;
    const JsonValue* n = cs.get("restartCount");
    if (!n || n->as_integer().value_or(0) < restarts) cs.set("restartCount", JsonValue::integer(restarts));
    const JsonValue* waiting = cs.find({"state", "waiting"});
    if (waiting && waiting->str("reason") == kCrashLoopBackOff) {
      JsonValue running = JsonValue::object();
      running.set("startedAt", JsonValue::string(now_rfc3339));
      JsonValue state = JsonValue::object();
      state.set("running", std::move(running));
      cs.set("state", std::move(state));
    }
  }
}

std::string go_duration(uint64_t ms) {
  uint64_t s = ms / 1000;
  if (s < 60) return std::to_string(s) + "s";
  if (s < 3600) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h" + std::to_string(s / 60 % 60) + "m" + std::to_string(s % 60) + "s";
}

}  // namespace uvsched
