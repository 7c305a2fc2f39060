// Node taints and the tolerations that let a pod onto a tainted node, as
// Kubernetes defines them (core/v1 Taint and Toleration): kube-scheduler's
// TaintToleration filter keeps a pod off an agent with a NoSchedule or
// NoExecute taint it does not tolerate; an agent with a PreferNoSchedule
// taint it does not tolerate is taken only when no other offer fits. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace uvsched {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;      // NoSchedule, PreferNoSchedule or NoExecute
  std::string time_added;  // RFC 3339, kept as given (kubectl sets it on NoExecute taints)
  bool operator==(const Taint&) const = default;
};

struct Toleration {
  std::string key;  // empty: every key (with operator Exists)
  std::string op;   // Exists or Equal (empty: Equal)
  std::string value;
  std::string effect;              // empty: every effect
  std::optional<int64_t> seconds;  // tolerationSeconds: how long a NoExecute taint is tolerated
};

// v1.Toleration.ToleratesTaint: the effect (if given) and key (if given)
// match, and the value does for Equal.
bool tolerates(const Toleration& toleration, const Taint& taint);
// The first taint with an effect that keeps pods off (NoSchedule,
// NoExecute) that none of `tolerations` tolerates; nullptr when there is none.
const Taint* untolerated_taint(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints);
// A PreferNoSchedule taint that none of `tolerations` tolerates: the agent
// is one the pod would rather not go to (kube-scheduler scores it lower).
bool prefers_elsewhere(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints);
// Whether any of `taints` is NoExecute (the taint manager has work there).
bool has_noexecute(const std::vector<Taint>& taints);
// The taint manager's verdict on a pod running on an agent with `taints`:
// how long it may stay. nullopt: for good (no NoExecute taint, or each
// tolerated without tolerationSeconds); 0: it goes now (a NoExecute taint it
// does not tolerate); else the least tolerationSeconds, in ms, of the first
// toleration of each NoExecute taint.
std::optional<uint64_t> noexecute_stay_ms(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints);

}  // namespace uvsched
