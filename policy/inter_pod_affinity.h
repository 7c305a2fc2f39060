// kube-scheduler's InterPodAffinity filter, its required half: a pod's
// podAffinity terms each need a pod they select already in the candidate
// node's domain (the nodes sharing its value of the term's topologyKey), its
// podAntiAffinity terms need none there, and no placed pod's anti-affinity
// may select it within that pod's domain. As there, a pod whose affinity
// selects no placed pod at all may still go where it is the first, if it
// matches its own terms (the first of a set that wants to be together), and
// a node without a term's topologyKey has no domain: an affinity term fails
// there and an anti-affinity term holds. Preferences weigh nothing here:
// placement takes the first offer that fits.
//
// Built once per pod weighed (kube's PreFilter: the placed pods counted by
// domain), then asked of each candidate node (its Filter). Pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "policy/inter_pod_terms.h"
#include "policy/placement.h"

namespace uvsched {

class InterPodAffinity {
 public:
  // For a pod of namespace `ns` with `labels` and its own `terms` (null:
  // none), against the pods placed and the labels of their nodes.
  InterPodAffinity(std::string_view ns, const Labels& labels, const PodAffinityTerms* terms,
                   const std::vector<PlacedPod>& placed, const NodeLabels& node_labels);

  // Nothing to weigh: the pod has no terms and no placed pod's anti-affinity selects it.
  bool trivial() const { return !terms_ && existing_anti_.empty(); }
  // Why a node with `node_labels` cannot take the pod, or nullopt.
  std::optional<Misfit> misfit(const Labels& node_labels) const;

 private:
  using Domain = std::pair<std::string, std::string>;  // (topologyKey, value)
  const PodAffinityTerms* terms_ = nullptr;            // null when it has none
  std::map<Domain, int> affinity_;       // placed pods matching every affinity term, by each term's domain
  std::map<Domain, int> anti_;           // placed pods an anti-affinity term of its own selects
  std::map<Domain, int> existing_anti_;  // domains of placed pods whose anti-affinity selects it
  bool matches_own_affinity_ = false;    // it matches each of its own affinity terms
};

}  // namespace uvsched
