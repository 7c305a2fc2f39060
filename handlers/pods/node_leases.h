// The nodes' Leases (coordination.k8s.io/v1, namespace kube-node-lease), a
// read-only view of the agents' heartbeats as a kubelet keeps them: get and
// list (JSON or kubectl's Table), with their discovery. `kubectl describe
// node` reads its node's one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "handlers/json_value.h"
#include "handlers/router.h"
#include "reactor/clock.h"

namespace uvsched {

inline constexpr const char* kCoordinationGroup = "coordination.k8s.io";
inline constexpr const char* kCoordinationVersion = "v1";

class NodeLeases {
 public:
  // `leases`: every node's Lease now (AgentHub::node_leases); `lease`: one
  // node's, or nullopt (AgentHub::node_lease).
  NodeLeases(Clock& clock, std::function<std::vector<JsonValue>()> leases,
             std::function<std::optional<JsonValue>(const std::string& node)> lease);
  void add_routes(Router& router);

 private:
  void list(RequestContext& ctx, const std::string& ns);
  void get(RequestContext& ctx);

  Clock& clock_;
  std::function<std::vector<JsonValue>()> leases_;
  std::function<std::optional<JsonValue>(const std::string& node)> lease_;
};

}  // namespace uvsched
