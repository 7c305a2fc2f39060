// A pod's constraints on where it goes relative to other pods (required
// podAffinity and podAntiAffinity terms, DoNotSchedule topology spread
// constraints), and what kube-scheduler's inter-pod filters
// (inter_pod_affinity.h, topology_spread.h) read of the pods already placed
// and of the nodes they are on. The placed pods are views, not copies: the
// caller's index outlives one pod's weighing, and a weighing is over before
// anything it viewed changes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/label_selector.h"

namespace uvsched {

// The pods a term counts: those of its namespaces whose labels its selector
// matches. A term without a labelSelector matches no pod; one with an empty
// selector, every pod of its namespaces.
struct PodSelectorTerm {
  LabelSelector selector;
  bool selects_none = false;            // labelSelector was null
  std::vector<std::string> namespaces;  // resolved: the owner's own when the term named none
  bool selects(std::string_view ns, const Labels& labels) const;
};

struct PodAffinityTerm : PodSelectorTerm {
  std::string topology_key;  // the node label whose value is the term's domain
};

// A pod's required inter-pod terms (podAffinity and podAntiAffinity's
// requiredDuringSchedulingIgnoredDuringExecution).
struct PodAffinityTerms {
  std::vector<PodAffinityTerm> affinity, anti_affinity;
  bool empty() const { return affinity.empty() && anti_affinity.empty(); }
};

struct SpreadConstraint : PodSelectorTerm {  // namespaces: the pod's own
  int32_t max_skew = 1;
  std::string topology_key;
  int32_t min_domains = 1;
  bool honor_node_affinity = true;  // nodeAffinityPolicy Honor (the default) or Ignore
  bool honor_taints = false;        // nodeTaintsPolicy Honor, or Ignore (the default)
};

// All of them: what placement reads of a pod beyond its own node's fit.
struct InterPodNeeds {
  PodAffinityTerms terms;
  std::vector<SpreadConstraint> spread;  // DoNotSchedule only
  bool empty() const { return terms.empty() && spread.empty(); }
};

// A pod on a node: placed, or being placed in the same decision (a gang's
// members planned together count each other).
struct PlacedPod {
  std::string_view ns;
  const Labels* labels = nullptr;
  std::string_view node;                    // the agent's hostname
  bool terminating = false;                 // being deleted (metadata.deletionTimestamp)
  const PodAffinityTerms* terms = nullptr;  // its own required terms, for their anti-affinity; null: none
};

// A node's labels by name; null for a node not known.
using NodeLabels = std::function<const Labels*(std::string_view node)>;

}  // namespace uvsched
