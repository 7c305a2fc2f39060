// kube-scheduler's PodTopologySpread filter: a pod's topologySpreadConstraints
// with whenUnsatisfiable DoNotSchedule. Each counts the pods it selects (of
// the pod's own namespace, not being deleted) in each domain of its
// topologyKey, over the nodes that have every constraint's key and pass its
// inclusion policies (by default, the pod's nodeSelector and required node
// affinity; taints ignored). A node may take the pod when, for each
// constraint, it has the key and its domain's count, plus one if the pod
// matches the selector itself, exceeds the smallest domain's by at most
// maxSkew; the smallest counts as 0 while there are fewer domains than
// minDomains. ScheduleAnyway constraints are preferences, which weigh
// nothing here.
//
// Built once per pod weighed (kube's PreFilter), then asked of each
// candidate node (its Filter). Pure.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/inter_pod_terms.h"
#include "policy/placement.h"

namespace uvsched {

// A node as the constraints read it.
struct SpreadNode {
  std::string_view name;
  const Labels* labels = nullptr;
  bool matches_node_affinity = true;  // the pod's nodeSelector and required node affinity
  bool taints_tolerated = true;       // its NoSchedule and NoExecute taints (a cordon included)
};

class TopologySpread {
 public:
  // For a pod of namespace `ns` with `labels` and its DoNotSchedule
  // constraints, against the placed pods and every node.
  TopologySpread(std::string_view ns, const Labels& labels, const std::vector<SpreadConstraint>& constraints,
                 const std::vector<PlacedPod>& placed, const std::vector<SpreadNode>& nodes);

  // Why a node with `node_labels` cannot take the pod, or nullopt.
  std::optional<Misfit> misfit(const Labels& node_labels) const;

 private:
  struct Counted {
    const SpreadConstraint* c;
    bool self = false;  // the pod matches its selector
    // Every eligible domain, 0 included, by its value (a view of a node's
    // label: the nodes outlive the weighing).
    absl::flat_hash_map<std::string_view, int64_t> by_domain;
    int64_t least = 0;  // the smallest count, or 0 while there are fewer domains than minDomains
  };
  std::vector<Counted> counted_;
};

}  // namespace uvsched
