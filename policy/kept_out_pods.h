// The waiting pods that every agent refused for what no offer changes (a
// selector, a taint, a cordon, the pods placed there: inter-pod affinity,
// anti-affinity, topology spread), and whether anything that might let one
// in has happened since it was refused. An offer adds room; room is not what
// such a pod lacks, so an offer wakes it only after a change that may matter
// (kube-scheduler's queueing hints, for its InterPodAffinity and
// PodTopologySpread plugins and the node events). Without this, every offer
// woke one such pod, which walked every placed pod and was refused again:
// a few hundred of them kept the loop busy with no user doing anything.
// Pure: the caller tells it what changed.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "policy/inter_pod_terms.h"
#include "policy/label_selector.h"

namespace uvsched {

// Whether a placed pod labelled `labels` being counted (placed, or moved to
// an agent) or no longer counted (gone, or moved away) may let in a pod with
// inter-pod constraints `waiting` (null: none of its own). A pod its affinity
// or spread selects placed may be the one it waits to be near, or the one
// that evens the spread; one its anti-affinity or spread selects gone may be
// the one that kept it out. Namespaces are not weighed: a change in another
// namespace may wake a pod for nothing, never leave one waiting.
bool may_let_in(const InterPodNeeds* waiting, const Labels& labels, bool counted);

// A set of agents by number (PodTaskRegistry::intern_agent): those that
// refused a pod kept out. A bit each: at 5,000 agents, 625 bytes a pod.
class AgentBits {
 public:
  bool has(uint32_t agent) const { return agent / 64 < words_.size() && (words_[agent / 64] >> (agent % 64) & 1); }
  void add(uint32_t agent);
  void clear() {
    words_.clear();
    count_ = 0;
  }
  bool empty() const { return count_ == 0; }
  size_t count() const { return count_; }

 private:
  std::vector<uint64_t> words_;
  size_t count_ = 0;
};

class KeptOutPods {
 public:
  // How many changes that may let a pod in have happened: a pod kept out
  // when this read s may be let in once it reads otherwise.
  uint64_t stamp() const { return changes_; }
  bool empty() const { return pods_.empty(); }

  // `key` waits, refused by agents for what no offer changes; `needs` are
  // its inter-pod constraints (null: none), `labels` its own. Returns stamp().
  uint64_t add(const std::string& key, std::shared_ptr<const InterPodNeeds> needs, const Labels& labels);
  void remove(const std::string& key);
  void clear();

  // A placed pod with the label set numbered `set` (made when `born`,
  // LabelSets::born) was counted or no longer counted. `anti_affinity`: its
  // own required anti-affinity terms (null: none), which keep out every pod
  // they select (the symmetric rule): when it is no longer counted, those
  // pods may be let in.
  void placed_changed(uint32_t set, uint64_t born, const Labels& labels, bool counted,
                      const PodAffinityTerms* anti_affinity = nullptr);
  // An agent came, or a node's labels, taints or cordon changed: any pod may be let in.
  void nodes_changed() { ++changes_; }

 private:
  struct Pod {
    std::shared_ptr<const InterPodNeeds> needs;
    Labels labels;
  };
  absl::flat_hash_map<std::string, Pod> pods_;
  // What may_let_in said of a label set for the pods kept out now, so a
  // placement of a workload's thousandth pod is one lookup, not a walk over
  // the pods kept out. Forgotten when a pod is added (it may be let in by
  // what let none of the others in).
  struct Verdict {
    uint64_t born = 0;
    bool if_counted = false;
    bool if_uncounted = false;
  };
  absl::flat_hash_map<uint32_t, Verdict> by_set_;
  uint64_t changes_ = 0;
};

}  // namespace uvsched
