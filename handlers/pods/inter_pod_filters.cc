#include "handlers/pods/inter_pod_filters.h"

#include <absl/strings/string_view.h>

#include <algorithm>

namespace uvsched {
namespace {

std::string_view namespace_of_key(std::string_view key) { return key.substr(0, key.find('/')); }

// A task whose pod still occupies its agent as kube-scheduler counts pods:
// assigned and not ended; one being killed counts as terminating.
bool occupies(const PodTask& t) { return t.state != TaskState::kFinished && t.state != TaskState::kGone; }

}  // namespace

void InterPodFilters::prune(AntiAffinityHolders& holders, const PodTaskRegistry& tasks) {
  absl::erase_if(holders, [&](const auto& h) {
    const PodTask* t = tasks.by_pod(h.first);
    return !t || !occupies(*t);
  });
}

std::optional<InterPodFilters> InterPodFilters::build(std::string_view key, const PodNeeds& needs,
                                                      const PodTaskRegistry& tasks, const AgentHub& hub,
                                                      const AntiAffinityHolders& holders,
                                                      const std::vector<Planned>& planned) {
  const InterPodNeeds* own = needs.inter_pod.get();
  bool planned_anti = std::any_of(planned.begin(), planned.end(), [](const Planned& p) {
    return p.needs->inter_pod && !p.needs->inter_pod->terms.anti_affinity.empty();
  });
  if (!own && holders.empty() && !planned_anti) return std::nullopt;
  std::string_view ns = namespace_of_key(key);
  InterPodFilters f;
  f.planned_labels_.reserve(planned.size());
  // Which namespaces' pods its own terms count.
  std::vector<std::string_view> wanted;
  if (own) {
    auto want = [&](const PodSelectorTerm& t) {
      for (const auto& n : t.namespaces) {
        if (std::find(wanted.begin(), wanted.end(), n) == wanted.end()) wanted.push_back(n);
      }
    };
    for (const auto& t : own->terms.affinity) want(t);
    for (const auto& t : own->terms.anti_affinity) want(t);
    for (const auto& c : own->spread) want(c);
  }
  auto wanted_ns = [&](std::string_view n) { return std::find(wanted.begin(), wanted.end(), n) != wanted.end(); };
  if (!wanted.empty()) {
    // Whether any of its terms selects a label set, asked once per set: the
    // placed pods of one workload share theirs, and at 100k pods matching
    // each pod's labels was most of the walk.
    absl::flat_hash_map<uint32_t, bool> selected;
    auto any_selects = [&](const Labels& labels) {
      auto by = [&](const PodSelectorTerm& t) { return !t.selects_none && t.selector.matches(labels); };
      return std::any_of(own->terms.affinity.begin(), own->terms.affinity.end(), by) ||
             std::any_of(own->terms.anti_affinity.begin(), own->terms.anti_affinity.end(), by) ||
             std::any_of(own->spread.begin(), own->spread.end(), by);
    };
    for (const auto& [pod, t] : tasks) {
      ++f.counted_;
      if (!occupies(t)) continue;
      auto [set, fresh] = selected.try_emplace(t.labels, false);
      if (fresh) set->second = any_selects(tasks.labels_of(t));
      if (!set->second) continue;
      std::string_view pod_ns = namespace_of_key(pod);
      if (!wanted_ns(pod_ns)) continue;
      f.placed_.push_back({pod_ns, &tasks.labels_of(t), tasks.agent_of(t), t.deleted || t.evicted, nullptr});
    }
  }
  // The anti-affinity holders: their terms bind it wherever they are (their
  // labels, if its own terms select them, were counted above).
  for (const auto& [pod, h] : holders) {
    const PodTask* t = tasks.by_pod(pod);
    if (!t || !occupies(*t)) continue;
    ++f.counted_;
    f.placed_.push_back({namespace_of_key(pod), nullptr, tasks.agent_of(*t), t->deleted || t->evicted, &h->terms});
  }
  for (const Planned& p : planned) {
    f.planned_labels_.push_back(p.needs->labels);
    const PodAffinityTerms* terms = p.needs->inter_pod ? &p.needs->inter_pod->terms : nullptr;
    f.placed_.push_back({namespace_of_key(p.key), &f.planned_labels_.back(), p.agent, false, terms});
  }
  const AgentHub::AgentMap& agents = hub.agents();
  NodeLabels node_labels = [&agents](std::string_view node) -> const Labels* {
    auto a = agents.find(absl::string_view(node.data(), node.size()));
    return a == agents.end() ? nullptr : &a->second->labels;
  };
  f.affinity_.emplace(ns, needs.labels, own ? &own->terms : nullptr, f.placed_, node_labels);
  if (own && !own->spread.empty()) {
    std::vector<SpreadNode> nodes;
    nodes.reserve(agents.size());
    const LabelSelector selector = LabelSelector::equals_all(needs.node_selector);
    bool honor_taints =
        std::any_of(own->spread.begin(), own->spread.end(), [](const SpreadConstraint& c) { return c.honor_taints; });
    for (const auto& [name, a] : agents) {
      bool tolerated = !honor_taints || (!cordon_misfit(needs, hub.cordoned(name)) &&
                                         (!hub.tainted() || !taint_misfit(needs, hub.taints(name))));
      bool affine = selector.matches(a->labels) && node_affinity_matches(needs.node_affinity, a->labels, a->hostname);
      nodes.push_back({name, &a->labels, affine, tolerated});
    }
    f.spread_.emplace(ns, needs.labels, own->spread, f.placed_, nodes);
  }
  if (f.affinity_->trivial() && !f.spread_) return std::nullopt;
  return f;
}

std::optional<Misfit> InterPodFilters::misfit(const AgentHub::Agent& agent) const {
  if (affinity_) {
    if (auto m = affinity_->misfit(agent.labels)) return m;
  }
  if (spread_) return spread_->misfit(agent.labels);
  return std::nullopt;
}

}  // namespace uvsched
