#include "policy/kept_out_pods.h"

#include <algorithm>

namespace uvsched {
namespace {

bool selects(const PodSelectorTerm& term, const Labels& labels) {
  return !term.selects_none && term.selector.matches(labels);
}

template <typename Terms>
bool any_selects(const Terms& terms, const Labels& labels) {
  return std::any_of(terms.begin(), terms.end(), [&](const auto& t) { return selects(t, labels); });
}

}  // namespace

bool may_let_in(const InterPodNeeds* waiting, const Labels& labels, bool counted) {
  if (!waiting) return false;
  if (any_selects(waiting->spread, labels)) return true;
  return counted ? any_selects(waiting->terms.affinity, labels) : any_selects(waiting->terms.anti_affinity, labels);
}

void AgentBits::add(uint32_t agent) {
  if (agent / 64 >= words_.size()) words_.resize(agent / 64 + 1);
  uint64_t bit = uint64_t{1} << (agent % 64);
  if (words_[agent / 64] & bit) return;
  words_[agent / 64] |= bit;
  ++count_;
}

uint64_t KeptOutPods::add(const std::string& key, std::shared_ptr<const InterPodNeeds> needs, const Labels& labels) {
  auto [it, fresh] = pods_.try_emplace(key);
  if (!fresh && it->second.needs == needs && it->second.labels == labels) return changes_;  // the verdicts stand
  it->second = Pod{std::move(needs), labels};
  by_set_.clear();
  return changes_;
}

void KeptOutPods::remove(const std::string& key) {
  pods_.erase(key);
  if (pods_.empty()) by_set_.clear();
}

void KeptOutPods::clear() {
  pods_.clear();
  by_set_.clear();
}

void KeptOutPods::placed_changed(uint32_t set, uint64_t born, const Labels& labels, bool counted,
                                 const PodAffinityTerms* anti_affinity) {
  if (pods_.empty()) return;
  if (!counted && anti_affinity) {
    for (const auto& [key, pod] : pods_) {  // (few such pods go: this walks only then)
      if (any_selects(anti_affinity->anti_affinity, pod.labels)) {
        ++changes_;
        return;
      }
    }
  }
  auto [it, fresh] = by_set_.try_emplace(set);
  Verdict& v = it->second;
  if (fresh || v.born != born) {
    v = Verdict{born, false, false};
    for (const auto& [key, pod] : pods_) {
      v.if_counted = v.if_counted || may_let_in(pod.needs.get(), labels, true);
      v.if_uncounted = v.if_uncounted || may_let_in(pod.needs.get(), labels, false);
      if (v.if_counted && v.if_uncounted) break;
    }
  }
  if (counted ? v.if_counted : v.if_uncounted) ++changes_;
}

}  // namespace uvsched
