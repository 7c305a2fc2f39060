#include "policy/placement.h"

#include <algorithm>
#include <set>

namespace uvsched {

std::optional<Misfit> misfit_of(const PodNeeds& pod, const Offer& offer, const Labels& agent_labels) {
  if (!pod.node_name.empty() && pod.node_name != offer.agent) {
    return Misfit{MisfitKind::kNodeName, "spec.nodeName is " + pod.node_name};
  }
  if (!LabelSelector::equals_all(pod.node_selector).matches(agent_labels)) {
    return Misfit{MisfitKind::kSelector, "nodeSelector does not match"};
  }
  if (!node_affinity_matches(pod.node_affinity, agent_labels, offer.agent)) {
    return Misfit{MisfitKind::kSelector, "required node affinity does not match"};
  }
  constexpr double kEpsilon = 1e-9;  // 0.1 + 0.2 must cover 0.3
  if (offer.resources.cpus + kEpsilon < pod.cpus) return Misfit{MisfitKind::kCpu, "insufficient cpus"};
  if (offer.resources.mem_mib + kEpsilon < pod.mem_mib) return Misfit{MisfitKind::kMemory, "insufficient memory"};
  std::set<uint32_t> seen;
  for (uint32_t port : pod.host_ports) {
    if (!seen.insert(port).second) {
      return Misfit{MisfitKind::kPorts, "hostPort " + std::to_string(port) + " asked twice"};
    }
    bool offered = std::any_of(offer.resources.ports.begin(), offer.resources.ports.end(),
                               [&](const PortRange& r) { return port >= r.begin && port <= r.end; });
    if (!offered) return Misfit{MisfitKind::kPorts, "hostPort " + std::to_string(port) + " not offered"};
  }
  return std::nullopt;
}

std::optional<Misfit> cordon_misfit(const PodNeeds& pod, bool agent_cordoned) {
  if (!agent_cordoned) return std::nullopt;
  static const Taint kCordon{.key = kUnschedulableTaint, .effect = "NoSchedule"};
  for (const Toleration& t : pod.tolerations) {
    if (tolerates(t, kCordon)) return std::nullopt;
  }
  return Misfit{MisfitKind::kUnschedulable, "the agent is cordoned"};
}

std::optional<Misfit> taint_misfit(const PodNeeds& pod, const std::vector<Taint>& agent_taints) {
  const Taint* t = untolerated_taint(pod.tolerations, agent_taints);
  if (!t) return std::nullopt;
  return Misfit{MisfitKind::kTaint, "the agent has taint {" + t->key + ": " + t->value +
                                        "}, which the pod does not "
                                        "tolerate"};
}

}  // namespace uvsched
