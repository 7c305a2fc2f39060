// First-come-first-serve placement: the first live, unclaimed offer that
// fits a pod. Fits means: the cpus and memory summed over the offer cover the
// pod's, every hostPort lies in an offered range (and none twice), nodeName
// (if set) is the agent's hostname, nodeSelector matches the agent's labels
// and the required node affinity the agent (node_affinity.h); and, weighed
// apart, a cordon or a taint the pod does not tolerate (taints.h), and the
// pods already placed (inter_pod_affinity.h, topology_spread.h). Pure: the
// caller supplies offers, agent labels and taints.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/inter_pod_terms.h"
#include "policy/label_selector.h"
#include "policy/node_affinity.h"
#include "policy/offer_registry.h"
#include "policy/taints.h"

namespace uvsched {

struct PodNeeds {
  double cpus = 0;
  double mem_mib = 0;
  std::vector<uint32_t> host_ports;
  std::string node_name;
  Labels node_selector;
  std::vector<NodeSelectorTerm> node_affinity;  // required; none: any agent
  std::vector<Toleration> tolerations;
  Labels labels;  // the pod's own: what other pods' terms, and its own spread, select
  // Its required inter-pod affinity and DoNotSchedule spread, weighed apart
  // (inter_pod_affinity.h, topology_spread.h); null: none, as for most pods.
  std::shared_ptr<const InterPodNeeds> inter_pod;
};

// The taint a cordoned node carries (kubectl cordon).
inline constexpr const char* kUnschedulableTaint = "node.kubernetes.io/unschedulable";
// The label every node carries, its value the agent's hostname.
inline constexpr const char* kHostnameLabel = "kubernetes.io/hostname";

// Per container: the request, else the limit, else these defaults.
inline constexpr double kDefaultCpus = 0.25;
inline constexpr double kDefaultMemMib = 64;

// What kind of misfit an offer is, for counting agents by reason as
// kube-scheduler does (pending_reason.h).
enum class MisfitKind {
  kNodeName,
  kSelector,
  kCpu,
  kMemory,
  kPorts,
  kUnschedulable,
  kTaint,
  kPodAffinity,
  kPodAntiAffinity,
  kExistingAntiAffinity,
  kTopologySpread,
  kTopologySpreadLabel,
};
struct Misfit {
  MisfitKind kind;
  std::string why;
};

// Why `offer` cannot take the pod, or nullopt when it can.
std::optional<Misfit> misfit_of(const PodNeeds& pod, const Offer& offer, const Labels& agent_labels);
// kube-scheduler's NodeUnschedulable filter: a cordoned agent takes only a
// pod that tolerates its taint (as DaemonSet pods do).
std::optional<Misfit> cordon_misfit(const PodNeeds& pod, bool agent_cordoned);
// kube-scheduler's TaintToleration filter: an agent's NoSchedule and
// NoExecute taints must each be tolerated.
std::optional<Misfit> taint_misfit(const PodNeeds& pod, const std::vector<Taint>& agent_taints);

inline std::optional<std::string> misfit(const PodNeeds& pod, const Offer& offer, const Labels& agent_labels) {
  auto m = misfit_of(pod, offer, agent_labels);
  return m ? std::optional<std::string>(std::move(m->why)) : std::nullopt;
}

}  // namespace uvsched
