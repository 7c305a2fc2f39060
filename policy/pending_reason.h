// Why a pod waits, in kube-scheduler's words and with numbers, so people and
// tools recognise it: "0/5 nodes are available: 3 Insufficient cpu, 2
// node(s) didn't match Pod's node affinity/selector." followed by what would
// be needed: "pod requests cpu 6, memory 1024Mi; the largest free offer is
// cpu 4, memory 7168Mi on sim-1." Agents are the nodes; each is counted once,
// by the first of its offers the pod was weighed against. Pure: the walk over
// the offers is the caller's, which tells this what it saw.
#pragma once

#include <absl/container/flat_hash_set.h>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "policy/placement.h"

namespace uvsched {

class PendingReason {
 public:
  // An offer of `agent` weighed for the pod; `misfit` is why it did not fit
  // (nullopt: the agent is not connected). The offer's agent name is kept as
  // a view: a PendingReason is read within the search that fed it, while the
  // offers it saw are still there.
  void saw(const Offer& offer, std::optional<MisfitKind> misfit);
  // How many offers were weighed.
  size_t offers() const { return offers_; }
  // The message, for a pod that needs `pod`, with `agents` agents known.
  std::string message(const PodNeeds& pod, size_t agents) const;
  // The agents weighed that refused the pod for what stays as it is until
  // the nodes or the placed pods change (a selector, a taint, a cordon,
  // inter-pod terms): a new offer of theirs, with more room, would change
  // nothing. Not those short of room or not connected.
  const std::vector<std::string_view>& refused_until_change() const { return refused_until_change_; }

 private:
  static constexpr size_t kKinds = 13;  // MisfitKind's twelve, and not connected
  std::array<size_t, kKinds> counts_{};
  // Those counted. A view each, not a copy: a pod that fits nowhere is
  // weighed against every offer on each try, and copying thousands of names
  // into a tree was most of the cost of a try.
  absl::flat_hash_set<std::string_view> agents_;
  std::vector<std::string_view> refused_until_change_;
  size_t offers_ = 0;
  // The offer with the most cpus, then memory, of those weighed.
  bool any_ = false;
  double largest_cpus_ = 0, largest_mem_mib_ = 0;
  std::string largest_agent_;
};

}  // namespace uvsched
