// Preemption, as kube-scheduler's DefaultPreemption plugin decides it: a
// pending pod that fits nowhere may have lower-priority pods on one node
// evicted to make room. On each node every lower-priority pod is a victim at
// first; then victims are reprieved, the highest priority first, while the
// pod still fits without them. The node chosen needs the fewest victims, then
// the lowest highest victim priority, then the lowest sum of priorities, then
// comes first. Pure: the nodes and their pods are passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace uvsched {

struct PreemptionCandidate {
  size_t id = 0;  // the caller's name for the pod
  int32_t priority = 0;
  double cpus = 0;
  double mem_mib = 0;
  bool protected_ = false;  // never a victim (a gang member: a gang is kept whole)
};

struct PreemptionNode {
  size_t id = 0;         // the caller's name for the node
  double free_cpus = 0;  // on offer there now
  double free_mem_mib = 0;
  std::vector<PreemptionCandidate> pods;  // running there
};

struct PreemptionChoice {
  size_t node = 0;
  std::vector<size_t> victims;  // candidate ids, lowest priority first
};

std::optional<PreemptionChoice> choose_preemption(double cpus, double mem_mib, int32_t priority,
                                                  const std::vector<PreemptionNode>& nodes);

}  // namespace uvsched
