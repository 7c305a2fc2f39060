#include "policy/topology_spread.h"

#include <algorithm>
#include <limits>

namespace uvsched {

TopologySpread::TopologySpread(std::string_view ns, const Labels& labels,
                               const std::vector<SpreadConstraint>& constraints, const std::vector<PlacedPod>& placed,
                               const std::vector<SpreadNode>& nodes) {
  counted_.reserve(constraints.size());
  for (const SpreadConstraint& c : constraints) counted_.push_back({&c, c.selects(ns, labels), {}});
  if (counted_.empty()) return;
  auto has_every_key = [&](const Labels& l) {
    return std::all_of(constraints.begin(), constraints.end(),
                       [&](const SpreadConstraint& c) { return l.count(c.topology_key) > 0; });
  };
  // The eligible nodes' domains per constraint, and which node is in which.
  std::vector<absl::flat_hash_map<std::string_view, const std::string*>> domain_of(counted_.size());
  for (const SpreadNode& n : nodes) {
    if (!n.labels || !has_every_key(*n.labels)) continue;
    for (size_t i = 0; i < counted_.size(); ++i) {
      const SpreadConstraint& c = *counted_[i].c;
      if ((c.honor_node_affinity && !n.matches_node_affinity) || (c.honor_taints && !n.taints_tolerated)) continue;
      const std::string& value = n.labels->find(c.topology_key)->second;
      counted_[i].by_domain.try_emplace(value, 0);
      domain_of[i].emplace(n.name, &value);
    }
  }
  for (const PlacedPod& p : placed) {
    if (p.terminating || !p.labels) continue;
    for (size_t i = 0; i < counted_.size(); ++i) {
      auto d = domain_of[i].find(p.node);
      if (d != domain_of[i].end() && counted_[i].c->selects(p.ns, *p.labels)) ++counted_[i].by_domain[*d->second];
    }
  }
  // The smallest domain's count, once (kube's critical paths): every node weighed compares with it.
  for (Counted& k : counted_) {
    k.least = std::numeric_limits<int32_t>::max();  // no domain at all: nothing to be skewed against
    if (static_cast<int64_t>(k.by_domain.size()) < k.c->min_domains) {
      k.least = 0;
    } else {
      for (const auto& [domain, count] : k.by_domain) k.least = std::min(k.least, count);
    }
  }
}

std::optional<Misfit> TopologySpread::misfit(const Labels& node_labels) const {
  for (const Counted& k : counted_) {
    auto value = node_labels.find(k.c->topology_key);
    if (value == node_labels.end()) {
      return Misfit{MisfitKind::kTopologySpreadLabel, "the node has no " + k.c->topology_key + " label"};
    }
    auto here = k.by_domain.find(value->second);
    int64_t skew = (here == k.by_domain.end() ? 0 : here->second) + (k.self ? 1 : 0) - k.least;
    if (skew > k.c->max_skew) {
      return Misfit{MisfitKind::kTopologySpread, k.c->topology_key + " " + value->second + " would be skewed by " +
                                                     std::to_string(skew) + ", more than " +
                                                     std::to_string(k.c->max_skew)};
    }
  }
  return std::nullopt;
}

}  // namespace uvsched
