// The agents preemption weighs for a pod (policy/preemption.h chooses among
// them): each connected agent with a task below the pod's priority, not
// reserved for another nominee, that the pod could run on but for resources
// (its node name, labels, cordon and taints), with its lower-priority tasks
// and what it has on offer now.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "handlers/agents/agent_hub.h"
#include "policy/placement.h"
#include "policy/pod_task_registry.h"
#include "policy/preemption.h"

namespace uvsched {

// Each agent's offered (cpus, MiB), summed from its live offers.
using OfferedByAgent = absl::flat_hash_map<std::string, std::pair<double, double>>;
OfferedByAgent offered_by_agent(OfferRegistry& offers);

struct PreemptionCandidates {
  std::vector<PreemptionNode> nodes;   // a node's id indexes `agents`
  std::vector<std::string> agents;     // by node id
  std::vector<std::string_view> pods;  // by candidate id: the task registry's keys (valid while it is unchanged)
};

// As kube-scheduler bounds its dry runs (minCandidateNodesAbsolute), the
// walk stops once `enough` agents where evictions would make room are found.
// `reserved(agent)`: another pod's nomination holds the room there.
PreemptionCandidates preemption_candidates(const PodTaskRegistry& tasks, const AgentHub& hub, const PodNeeds& needs,
                                           int32_t priority, const OfferedByAgent& offered,
                                           const std::function<bool(const std::string& agent)>& reserved,
                                           size_t enough);

}  // namespace uvsched
