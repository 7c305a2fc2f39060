// GET /v1/cluster: the agents as the status page's Cluster view shows them,
// a page at a time: each agent's state (connected, disconnected and waiting
// out --agent-timeout, or lost), its cpu and memory held by our tasks against
// its total, its labels and its pods; totals over the whole cluster at the
// top. One request instead of /v1/agents plus every pod: at 5,000 agents and
// 100,000 pods the page asks for 50 agents, not 100,000 objects.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "handlers/agents/agent_hub.h"
#include "policy/pod_task_registry.h"

namespace uvsched {

struct ClusterQuery {
  std::string search;  // a part of a hostname, a label "k=v" or a state; any case
  size_t offset = 0;
  size_t limit = 50;
  static constexpr size_t kMaxLimit = 1000;
  static constexpr size_t kPodsNamed = 10;  // per agent; the count says how many more
};

// From ?q=&offset=&limit=; nullopt with *error (naming the parameter) when one is bad.
std::optional<ClusterQuery> parse_cluster_query(std::string_view query, std::string* error, std::string* field);

std::string cluster_view_json(const AgentHub& hub, const PodTaskRegistry& tasks, size_t pending_pods,
                              const ClusterQuery& q);

}  // namespace uvsched
