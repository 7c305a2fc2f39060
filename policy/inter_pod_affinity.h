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

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/strings/string_view.h>

#include <optional>
#include <string>
#include <string_view>
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
  // Topology domains, (topologyKey, value), by key then value: asked of
  // each node weighed without building a string, and an existing
  // anti-affinity is one lookup per key, not a walk over every domain (at
  // 5,000 agents, each holding a pod with anti-affinity to the next, that
  // walk was 25 million comparisons a pod).
  class Domains {
   public:
    void add(const std::string& key, const std::string& value) { by_key_[key].insert(value); }
    bool has(std::string_view key, std::string_view value) const {
      // (Debian's Abseil has a string_view of its own.)
      auto k = by_key_.find(absl::string_view(key.data(), key.size()));
      return k != by_key_.end() && k->second.contains(absl::string_view(value.data(), value.size()));
    }
    bool empty() const { return by_key_.empty(); }
    // The first key whose domain `node_labels` lies in, or nullptr.
    const std::string* containing(const Labels& node_labels) const;

   private:
    absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> by_key_;
  };
  const PodAffinityTerms* terms_ = nullptr;  // null when it has none
  Domains affinity_;                         // where placed pods matching every affinity term are, by each term's key
  Domains anti_;                             // where placed pods an anti-affinity term of its own selects are
  Domains existing_anti_;                    // where placed pods whose anti-affinity selects it are
  bool matches_own_affinity_ = false;        // it matches each of its own affinity terms
};

}  // namespace uvsched
