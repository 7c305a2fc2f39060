// A PodDisruptionBudget's arithmetic, as Kubernetes' disruption controller
// and its Eviction API do it: of the pods a budget selects, how many are
// healthy, how many must stay so, and so how many may be disrupted now; and
// whether evicting one of them may go ahead. Pure: the budget, its pods and
// the time in; numbers and a verdict out.
//
// uvsched runs no workload controllers (no ReplicaSet says how many pods
// there should be), so, as Kubernetes does for pods without a controller,
// only an integer minAvailable can be computed: a percentage, or
// maxUnavailable, needs the controller's scale, and such a budget over any
// pod allows no disruption (SyncFailed, as the disruption controller says).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace uvsched {

// minAvailable and maxUnavailable: a count, or a percentage of the pods.
struct IntOrPercent {
  int32_t value = 0;
  bool percent = false;
  bool operator==(const IntOrPercent&) const = default;
};

struct BudgetSpec {
  std::optional<IntOrPercent> min_available, max_unavailable;
  // unhealthyPodEvictionPolicy: AlwaysAllow lets an unhealthy pod go without
  // counting it; IfHealthyBudget (the default) only while the budget holds.
  bool always_allow_unhealthy = false;
};

// A pod the budget selects, as the count reads it.
struct BudgetPod {
  std::string name;
  bool healthy = false;      // ready (its Ready condition)
  bool terminating = false;  // being deleted (metadata.deletionTimestamp)
};

// status.disruptedPods: the pods an eviction was allowed to take and that are
// not yet seen going, by name, with when (unix ms). Until then they are not
// counted healthy, so two evictions cannot both spend the same disruption.
using DisruptedPods = std::map<std::string, int64_t>;
// An entry not seen going within this is dropped (Kubernetes' DeletionTimeout).
inline constexpr int64_t kDisruptedPodTimeoutMs = 120'000;
// Beyond this many unconfirmed disruptions, evictions are refused (403), as Kubernetes does.
inline constexpr size_t kMaxDisruptedPods = 2000;

struct BudgetStatus {
  int32_t expected_pods = 0, current_healthy = 0, desired_healthy = 0, disruptions_allowed = 0;
  DisruptedPods disrupted;  // still pending: pruned of pods gone, going, or past the timeout
  std::string sync_error;   // why the budget cannot be computed (disruptions_allowed is then 0)
  bool operator==(const BudgetStatus&) const = default;
};

// `value` of `total`: itself, or the percentage rounded up, as Kubernetes scales it.
int32_t scaled_value(IntOrPercent value, int32_t total);

// The budget's status over the pods it selects (all of them, in any phase),
// given the disruptions recorded so far.
BudgetStatus budget_status(const BudgetSpec& spec, const std::vector<BudgetPod>& pods, const DisruptedPods& disrupted,
                           int64_t now_unix_ms);

// Whether a healthy-or-not pod the budget covers may be evicted now.
enum class EvictionVerdict {
  kAllowed,             // goes, without spending a disruption (an unhealthy pod the policy lets go)
  kCounted,             // goes, spending one: it joins the disrupted pods
  kRefused,             // 429: it would take the budget below what it needs
  kTooManyUnconfirmed,  // 403: more disruptions than kMaxDisruptedPods are unconfirmed
};
EvictionVerdict check_eviction(const BudgetSpec& spec, const BudgetStatus& status, bool pod_healthy);

}  // namespace uvsched
