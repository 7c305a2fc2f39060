#include "handlers/pods/preemption_candidates.h"

#include "policy/taints.h"

namespace uvsched {

OfferedByAgent offered_by_agent(OfferRegistry& offers) {
  OfferedByAgent offered;
  // (all() sorts every offer by arrival with a lookup per comparison: at
  // 5,000 offers that alone was the slowest decisions' 5-10 ms.)
  offers.for_each_live([&offered](const Offer& o) {
    auto& f = offered[o.agent];
    f.first += o.resources.cpus;
    f.second += o.resources.mem_mib;
  });
  return offered;
}

PreemptionCandidates preemption_candidates(const PodTaskRegistry& tasks, const AgentHub& hub, const PodNeeds& needs,
                                           int32_t priority, const OfferedByAgent& offered,
                                           const std::function<bool(const std::string& agent)>& reserved,
                                           size_t enough) {
  PodNeeds placement_only = needs;  // the node's name, labels, cordon and taints, not its resources
  placement_only.cpus = placement_only.mem_mib = 0;
  placement_only.host_ports.clear();
  PreemptionCandidates out;
  size_t with_room = 0;
  tasks.for_each_agent_with_victims_below(priority, [&](uint32_t index) {
    if (with_room >= enough) return false;
    const std::string& host = tasks.agent_name(index);
    const AgentHub::Agent* agent = hub.agent(host);
    if (!agent || !agent->connected || reserved(host)) return true;
    Offer anywhere;
    anywhere.agent = host;
    if (cordon_misfit(placement_only, hub.cordoned(host)) || taint_misfit(placement_only, hub.taints(host)) ||
        misfit(placement_only, anywhere, agent->labels)) {
      return true;
    }
    PreemptionNode node;
    for (const auto& [pod, task] : tasks.on_agent(index)) {
      if (task->deleted || task->evicted || task->priority >= priority) continue;
      node.pods.push_back({out.pods.size(), task->priority, task->cpus, task->mem_mib, task->grouped});
      out.pods.push_back(pod);
    }
    if (node.pods.empty()) return true;
    node.id = out.agents.size();
    out.agents.push_back(host);
    if (auto f = offered.find(host); f != offered.end()) {
      node.free_cpus = f->second.first;
      node.free_mem_mib = f->second.second;
    }
    double cpus = node.free_cpus, mem = node.free_mem_mib;
    for (const auto& c : node.pods) {
      if (!c.protected_) cpus += c.cpus, mem += c.mem_mib;
    }
    if (cpus + 1e-9 >= needs.cpus && mem + 1e-9 >= needs.mem_mib) ++with_room;
    out.nodes.push_back(std::move(node));
    return true;
  });
  return out;
}

}  // namespace uvsched
