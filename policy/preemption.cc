#include "policy/preemption.h"

#include <algorithm>
#include <tuple>

namespace uvsched {
namespace {

constexpr double kSlack = 1e-9;  // sums of fractions of a cpu

bool fits(double cpus, double mem, double free_cpus, double free_mem) {
  return free_cpus + kSlack >= cpus && free_mem + kSlack >= mem;
}

}  // namespace

std::optional<PreemptionChoice> choose_preemption(double cpus, double mem_mib, int32_t priority,
                                                  const std::vector<PreemptionNode>& nodes) {
  std::optional<PreemptionChoice> best;
  std::tuple<size_t, int64_t, int64_t> best_rank;
  for (const auto& node : nodes) {
    std::vector<const PreemptionCandidate*> victims;
    double free_cpus = node.free_cpus, free_mem = node.free_mem_mib;
    for (const auto& p : node.pods) {
      if (p.priority >= priority || p.protected_) continue;
      victims.push_back(&p);
      free_cpus += p.cpus;
      free_mem += p.mem_mib;
    }
    if (!fits(cpus, mem_mib, free_cpus, free_mem)) continue;
    // Reprieve the most important first: those kept are the ones that matter most.
    std::stable_sort(victims.begin(), victims.end(),
                     [](const auto* a, const auto* b) { return a->priority > b->priority; });
    std::vector<const PreemptionCandidate*> kept_victims;
    for (const auto* v : victims) {
      if (fits(cpus, mem_mib, free_cpus - v->cpus, free_mem - v->mem_mib)) {
        free_cpus -= v->cpus;  // reprieved: it stays, and what it holds is not freed
        free_mem -= v->mem_mib;
      } else {
        kept_victims.push_back(v);
      }
    }
    if (kept_victims.empty()) continue;  // it fits as it is: not a case for preemption
    int64_t highest = kept_victims.front()->priority, sum = 0;
    for (const auto* v : kept_victims) sum += v->priority;
    auto rank = std::make_tuple(kept_victims.size(), highest, sum);
    if (best && !(rank < best_rank)) continue;
    best_rank = rank;
    PreemptionChoice c;
    c.node = node.id;
    for (auto it = kept_victims.rbegin(); it != kept_victims.rend(); ++it) c.victims.push_back((*it)->id);
    best = std::move(c);
  }
  return best;
}

}  // namespace uvsched
