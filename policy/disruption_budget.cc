#include "policy/disruption_budget.h"

#include <algorithm>
#include <set>

namespace uvsched {

int32_t scaled_value(IntOrPercent value, int32_t total) {
  if (!value.percent) return value.value;
  int64_t product = static_cast<int64_t>(value.value) * total;
  return static_cast<int32_t>((product + 99) / 100);
}

BudgetStatus budget_status(const BudgetSpec& spec, const std::vector<BudgetPod>& pods, const DisruptedPods& disrupted,
                           int64_t now_unix_ms) {
  BudgetStatus st;
  // A recorded disruption stays until its pod is seen going (deleted, or
  // being deleted) or the timeout passes: then it no longer holds a place.
  std::set<std::string> present;
  for (const auto& p : pods) {
    if (!p.terminating) present.insert(p.name);
  }
  for (const auto& [name, at] : disrupted) {
    if (present.count(name) && now_unix_ms - at < kDisruptedPodTimeoutMs) st.disrupted.emplace(name, at);
  }
  for (const auto& p : pods) {
    if (p.healthy && !p.terminating && !st.disrupted.count(p.name)) ++st.current_healthy;
  }
  const auto count = static_cast<int32_t>(pods.size());
  bool needs_scale = spec.max_unavailable || (spec.min_available && spec.min_available->percent);
  if (needs_scale) {
    // The controller's scale is what these are taken of; there is none.
    if (!pods.empty()) {
      st.sync_error = "found no controllers for pod \"" + pods.front().name + "\"";
      return st;
    }
    st.expected_pods = 0;
    if (spec.max_unavailable) {
      st.desired_healthy = std::max(0, -scaled_value(*spec.max_unavailable, 0));
    } else {
      st.desired_healthy = scaled_value(*spec.min_available, 0);
    }
  } else if (spec.min_available) {
    st.expected_pods = count;
    st.desired_healthy = spec.min_available->value;
  }
  // A budget over no pods allows nothing: its first pods may appear before
  // their budget's status is computed again.
  int32_t allowed = st.current_healthy - st.desired_healthy;
  st.disruptions_allowed = st.expected_pods > 0 && allowed > 0 ? allowed : 0;
  return st;
}

EvictionVerdict check_eviction(const BudgetSpec& spec, const BudgetStatus& status, bool pod_healthy) {
  if (!pod_healthy) {
    if (spec.always_allow_unhealthy) return EvictionVerdict::kAllowed;
    // An unhealthy pod does not count towards the budget: while the budget
    // holds without it, it may go.
    if (status.sync_error.empty() && status.desired_healthy > 0 && status.current_healthy >= status.desired_healthy)
      return EvictionVerdict::kAllowed;
  }
  if (status.disrupted.size() > kMaxDisruptedPods) return EvictionVerdict::kTooManyUnconfirmed;
  if (status.disruptions_allowed <= 0) return EvictionVerdict::kRefused;
  return EvictionVerdict::kCounted;
}

}  // namespace uvsched
