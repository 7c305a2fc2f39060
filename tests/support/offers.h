// An agent's offer as the policy tests write one: an id, the agent, and its
// cpus, memory and port ranges.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "policy/offer_registry.h"

namespace uvsched::test {

inline Offer offer(std::string id, std::string agent, double cpus, double mem, std::vector<PortRange> ports = {}) {
  return Offer{std::move(id), std::move(agent), Resources{cpus, mem, std::move(ports)}};
}

}  // namespace uvsched::test
