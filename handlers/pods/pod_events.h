// Events, as `kubectl describe pod` and `kubectl get events` read them, made
// from what the pods themselves record rather than stored apart: a pending
// pod's PodScheduled=False condition is a Warning FailedScheduling (its
// message says why), a bound pod's binding a Normal Scheduled, a preemption
// victim's DisruptionTarget condition a Normal Preempted naming the preemptor,
// the taint manager's a Normal TaintManagerEviction, and a pod failed past its
// activeDeadlineSeconds a Normal DeadlineExceeded.
#pragma once

#include <string>
#include <vector>

#include "handlers/json_value.h"

namespace uvsched {

// One core/v1 Event of `pod` (named after the pod and the reason, as a
// recorded event's name would be stable).
JsonValue pod_event(const JsonValue& pod, const std::string& type, const std::string& reason,
                    const std::string& message, const std::string& when);
// The core/v1 Events a pod (as stored, with its resourceVersion) stands for.
std::vector<JsonValue> pod_events(const JsonValue& pod);

// The fields an event list's fieldSelector may name: the API server's
// (its event strategy's selectable fields), which `kubectl events --for`
// names three of.
const std::vector<std::string>& event_selectable_fields();
// The value of a selectable field ("involvedObject.name") of an event, or
// "": a dotted path, but `source`, which is the source's component (else the
// reporting controller), as the API server selects it.
std::string event_field(const JsonValue& event, const std::string& dotted);

}  // namespace uvsched
