// A pod's constraints relative to other pods as the API server checks them
// (validateAffinity's podAffinity and podAntiAffinity, and
// validateTopologySpreadConstraints), now that placement weighs them: a
// maxSkew of 0 or a term without a topologyKey would otherwise hold a pod
// back forever. And what of them uvsched does not weigh, as warnings.
#pragma once

#include <string>
#include <vector>

#include "handlers/json_value.h"
#include "handlers/pods/k8s_status.h"  // FieldIssue

namespace uvsched {

// spec.affinity's podAffinity and podAntiAffinity, and spec.topologySpreadConstraints.
void validate_inter_pod(const JsonValue& spec, std::vector<FieldIssue>* out);

// Warnings for what a pod asks of its placement that uvsched does not weigh
// (preferences: preferred inter-pod terms, ScheduleAnyway spread; and a
// term's namespaceSelector), each naming the field: the pod is taken, and
// kubectl shows the user what it will not get.
std::vector<std::string> unweighed_constraints(const JsonValue& pod);

}  // namespace uvsched
