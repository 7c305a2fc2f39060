// The inter-pod filters (policy/inter_pod_affinity.h, topology_spread.h) for
// one pod, over the pods placed now: the scheduler's tasks (each with its
// pod's labels and agent), the placed pods whose required anti-affinity
// every other pod must respect, and any pods planned alongside it that are
// not tasks yet (a gang's members, placed together). Built once per search
// over the offers, asked once per agent weighed. A pod with no inter-pod
// terms, while no placed pod has anti-affinity, builds nothing.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "handlers/agents/agent_hub.h"
#include "policy/inter_pod_affinity.h"
#include "policy/placement.h"
#include "policy/pod_task_registry.h"
#include "policy/topology_spread.h"

namespace uvsched {

// The placed pods with required anti-affinity, by pod key ("ns/name"): the
// only terms of placed pods a new pod must respect. Kept for each task
// launched or recovered with them; an entry whose task is gone is dropped
// when next read (InterPodFilters::prune).
using AntiAffinityHolders = absl::flat_hash_map<std::string, std::shared_ptr<const InterPodNeeds>>;

class InterPodFilters {
 public:
  // A pod placed in the same decision, not yet a task.
  struct Planned {
    std::string_view key;  // "ns/name"
    const PodNeeds* needs;
    std::string_view agent;
  };
  // Drops the holders whose task is gone (or was never added).
  static void prune(AntiAffinityHolders& holders, const PodTaskRegistry& tasks);

  // For the pod `key` needing `needs`; nullopt when nothing is to be weighed.
  static std::optional<InterPodFilters> build(std::string_view key, const PodNeeds& needs, const PodTaskRegistry& tasks,
                                              const AgentHub& hub, const AntiAffinityHolders& holders,
                                              const std::vector<Planned>& planned = {});

  // Why `agent` cannot take the pod, given the pods placed.
  std::optional<Misfit> misfit(const AgentHub::Agent& agent) const;
  // How many placed pods were counted to build it: work, for the scheduler's pass to weigh.
  size_t counted() const { return counted_; }

 private:
  InterPodFilters() = default;
  // The views the filters were built over stay alive with them.
  std::vector<PlacedPod> placed_;
  std::vector<Labels> planned_labels_;
  std::optional<InterPodAffinity> affinity_;
  std::optional<TopologySpread> spread_;
  size_t counted_ = 0;
};

}  // namespace uvsched
