#include "policy/inter_pod_affinity.h"

#include <algorithm>

namespace uvsched {

bool PodSelectorTerm::selects(std::string_view ns, const Labels& labels) const {
  if (selects_none) return false;
  if (std::find(namespaces.begin(), namespaces.end(), ns) == namespaces.end()) return false;
  return selector.matches(labels);
}

namespace {

const std::string* value_of(const Labels* labels, const std::string& key) {
  if (!labels) return nullptr;
  auto it = labels->find(key);
  return it == labels->end() ? nullptr : &it->second;
}

}  // namespace

const std::string* InterPodAffinity::Domains::containing(const Labels& node_labels) const {
  for (const auto& [key, values] : by_key_) {
    auto value = node_labels.find(key);
    if (value != node_labels.end() && values.contains(value->second)) return &key;
  }
  return nullptr;
}

InterPodAffinity::InterPodAffinity(std::string_view ns, const Labels& labels, const PodAffinityTerms* terms,
                                   const std::vector<PlacedPod>& placed, const NodeLabels& node_labels)
    : terms_(terms && !terms->empty() ? terms : nullptr) {
  if (terms_) {
    matches_own_affinity_ = std::all_of(terms_->affinity.begin(), terms_->affinity.end(),
                                        [&](const PodAffinityTerm& t) { return t.selects(ns, labels); });
  }
  // Whether a term selects is asked before where the pod is: most placed
  // pods are not selected (a create walks every holder of anti-affinity),
  // and a node's labels are a lookup by name.
  for (const PlacedPod& p : placed) {
    const Labels* node = nullptr;
    bool node_read = false;
    auto node_of = [&] {
      if (!node_read) node = node_labels(p.node), node_read = true;
      return node;
    };
    if (p.terms) {
      for (const PodAffinityTerm& t : p.terms->anti_affinity) {
        if (!t.selects(ns, labels)) continue;
        if (const std::string* value = value_of(node_of(), t.topology_key)) existing_anti_.add(t.topology_key, *value);
      }
    }
    if (!terms_ || !p.labels) continue;
    // An affinity counts a placed pod only if it matches all its terms; then in each term's domain.
    bool all =
        !terms_->affinity.empty() && std::all_of(terms_->affinity.begin(), terms_->affinity.end(),
                                                 [&](const PodAffinityTerm& t) { return t.selects(p.ns, *p.labels); });
    if (all) {
      for (const PodAffinityTerm& t : terms_->affinity) {
        if (const std::string* value = value_of(node_of(), t.topology_key)) affinity_.add(t.topology_key, *value);
      }
    }
    for (const PodAffinityTerm& t : terms_->anti_affinity) {
      if (!t.selects(p.ns, *p.labels)) continue;
      if (const std::string* value = value_of(node_of(), t.topology_key)) anti_.add(t.topology_key, *value);
    }
  }
}

std::optional<Misfit> InterPodAffinity::misfit(const Labels& node_labels) const {
  if (terms_ && !terms_->affinity.empty()) {
    bool present = true;
    for (const PodAffinityTerm& t : terms_->affinity) {
      const std::string* value = value_of(&node_labels, t.topology_key);
      if (!value) {
        return Misfit{MisfitKind::kPodAffinity, "the node has no " + t.topology_key + " label for pod affinity"};
      }
      if (!affinity_.has(t.topology_key, *value)) present = false;
    }
    // The first of a set that wants to be together: nothing it selects is placed anywhere yet.
    if (!present && !(affinity_.empty() && matches_own_affinity_)) {
      return Misfit{MisfitKind::kPodAffinity, "no pod its affinity selects is in the node's domain"};
    }
  }
  if (terms_) {
    for (const PodAffinityTerm& t : terms_->anti_affinity) {
      const std::string* value = value_of(&node_labels, t.topology_key);
      if (value && anti_.has(t.topology_key, *value)) {
        return Misfit{MisfitKind::kPodAntiAffinity,
                      "a pod its anti-affinity selects is in the node's " + t.topology_key + " domain"};
      }
    }
  }
  if (const std::string* key = existing_anti_.containing(node_labels)) {
    return Misfit{MisfitKind::kExistingAntiAffinity, "a pod in the node's " + *key + " domain has anti-affinity to it"};
  }
  return std::nullopt;
}

}  // namespace uvsched
