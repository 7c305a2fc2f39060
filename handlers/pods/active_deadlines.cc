#include "handlers/pods/active_deadlines.h"

#include "handlers/pods/pod_validation.h"

namespace uvsched {

std::optional<int64_t> active_deadline_unix_ms(const JsonValue& pod) {
  const JsonValue* ads = pod.find({"spec", "activeDeadlineSeconds"});
  const JsonValue* start = pod.find({"status", "startTime"});
  if (!ads || !start || !start->is_string()) return std::nullopt;
  std::optional<int64_t> seconds = ads->as_integer();
  std::optional<int64_t> started = parse_rfc3339_ms(start->text());
  // (Validation bounds the seconds to an int32, so the sum cannot overflow.)
  if (!seconds || *seconds < 0 || *seconds > INT32_MAX || !started) return std::nullopt;
  return *started + *seconds * 1000;
}

void stamp_start_time(JsonValue& pod, const std::string& now_rfc3339) {
  JsonValue& status = pod.ensure({"status"});
  if (const JsonValue* st = status.get("startTime"); st && st->is_string()) return;
  status.set("startTime", JsonValue::string(now_rfc3339));
}

void fail_past_deadline(JsonValue& pod, const std::string& now_rfc3339) {
  JsonValue& status = pod.ensure({"status"});
  status.set("phase", JsonValue::string("Failed"));
  status.set("reason", JsonValue::string(std::string(kDeadlineExceeded)));
  status.set("message", JsonValue::string(std::string(kDeadlineExceededMessage)));
  if (JsonValue* conditions = status.get("conditions"); conditions && conditions->is_array()) {
    for (auto& c : conditions->items()) {
      if (!c.is_object()) continue;
      std::string type = c.str("type");
      if ((type == "Ready" || type == "ContainersReady") && c.str("status") != "False") {
        c.set("status", JsonValue::string("False"));
        c.set("reason", JsonValue::string("PodCompleted"));
        c.set("lastTransitionTime", JsonValue::string(now_rfc3339));
      }
    }
  }
  if (JsonValue* statuses = status.get("containerStatuses"); statuses && statuses->is_array()) {
    for (auto& cs : statuses->items()) {
      if (!cs.is_object()) continue;
      cs.set("ready", JsonValue::boolean(false));
      cs.set("started", JsonValue::boolean(false));
      if (cs.find({"state", "terminated"})) continue;
      // Killed: what a kubelet shows of a container it stopped.
      JsonValue terminated = JsonValue::object();
      terminated.set("exitCode", JsonValue::integer(137));
      terminated.set("reason", JsonValue::string("Error"));
      if (const JsonValue* started = cs.find({"state", "running", "startedAt"}); started && started->is_string()) {
        terminated.set("startedAt", JsonValue::string(started->text()));
      }
      terminated.set("finishedAt", JsonValue::string(now_rfc3339));
      JsonValue state = JsonValue::object();
      state.set("terminated", std::move(terminated));
      cs.set("state", std::move(state));
    }
  }
}

}  // namespace uvsched
