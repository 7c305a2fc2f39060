// The few fields of a stored pod both halves of the pod scheduler read and
// write (pod_scheduler.cc places pods, pod_task_lifecycle.cc follows their tasks).
#pragma once

#include <string>

#include "handlers/json_value.h"

namespace uvsched {

inline std::string annotation(const JsonValue& pod, const char* key) {
  const JsonValue* a = pod.find({"metadata", "annotations"});
  return a ? a->str(key) : "";
}

inline std::string phase_of(const JsonValue& pod) {
  const JsonValue* p = pod.find({"status", "phase"});
  return p ? p->text() : "";
}

// Sets the pod's status condition of that type (replacing one there), as
// of `now` (RFC 3339); an empty reason or message is left out.
void set_condition(JsonValue& pod, const std::string& type, const std::string& status, const std::string& reason,
                   const std::string& message, const std::string& now);

}  // namespace uvsched
