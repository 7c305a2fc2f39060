#include "policy/nominations.h"

#include <cassert>

namespace uvsched {

void Nominations::nominate(const std::string& pod, const std::string& agent, int32_t priority, uint64_t now_ms) {
  forget(pod);
  by_pod_[pod] = Nomination{agent, priority, now_ms};
  by_agent_[agent][pod] = priority;
}

void Nominations::forget(const std::string& pod) {
  auto n = by_pod_.find(pod);
  if (n == by_pod_.end()) return;
  auto on = by_agent_.find(n->second.agent);
  assert(on != by_agent_.end() && on->second.count(pod));
  on->second.erase(pod);
  if (on->second.empty()) by_agent_.erase(on);
  by_pod_.erase(n);
}

void Nominations::hold_from(const std::string& pod, uint64_t now_ms) {
  if (auto n = by_pod_.find(pod); n != by_pod_.end()) n->second.since_ms = now_ms;
}

const Nominations::Nomination* Nominations::of(const std::string& pod) const {
  auto n = by_pod_.find(pod);
  return n == by_pod_.end() ? nullptr : &n->second;
}

bool Nominations::reserved_for_other(const std::string& agent, const std::string& pod, int32_t priority) const {
  auto on = by_agent_.find(agent);
  if (on == by_agent_.end()) return false;
  for (const auto& [other, other_priority] : on->second) {
    if (other != pod && other_priority >= priority) return true;
  }
  return false;
}

std::vector<std::string> Nominations::pods_on(const std::string& agent) const {
  std::vector<std::string> pods;
  if (auto on = by_agent_.find(agent); on != by_agent_.end()) {
    for (const auto& [pod, priority] : on->second) pods.push_back(pod);
  }
  return pods;
}

}  // namespace uvsched
