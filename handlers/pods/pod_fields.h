// The few fields of a stored pod both halves of the pod scheduler read
// (pod_scheduler.cc places pods, pod_task_lifecycle.cc follows their tasks).
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

}  // namespace uvsched
