// Whether a pod is one the scheduler should place: what the watch of pods
// and the create path both ask, decided once. Pure: facts read from the pod
// in, the answer out.
#pragma once

#include <string_view>

namespace uvsched {

struct PodFacts {
  std::string_view phase;      // status.phase
  bool names_a_task = false;   // carries the task annotation: bound already (by us or a predecessor)
  bool being_deleted = false;  // metadata.deletionTimestamp is set
  bool gated = false;          // spec.schedulingGates is not empty: held until they are all removed
};

// Pending, not bound to a task, not held by a scheduling gate, and not on its way out.
constexpr bool is_unscheduled(const PodFacts& pod) {
  return pod.phase == "Pending" && !pod.names_a_task && !pod.being_deleted && !pod.gated;
}

}  // namespace uvsched
