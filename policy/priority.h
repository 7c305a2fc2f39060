// A pod's priority, resolved as Kubernetes' Priority admission plugin does
// at create: spec.priorityClassName names a PriorityClass (or, when empty,
// the globalDefault class applies, else priority 0); spec.priority and
// spec.preemptionPolicy are set from it and may not be given otherwise. Two
// classes are built in (system-cluster-critical, system-node-critical). Pure:
// the classes are passed in.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace uvsched {

struct PriorityClassInfo {
  int32_t value = 0;
  bool global_default = false;
  bool preempt_never = false;  // preemptionPolicy: Never
};

inline constexpr int32_t kSystemClusterCritical = 2'000'000'000;
inline constexpr int32_t kSystemNodeCritical = 2'000'001'000;
// The highest value a user's class may have (higher ones are the system's).
inline constexpr int64_t kHighestUserPriority = 1'000'000'000;

using PriorityClasses = std::map<std::string, PriorityClassInfo>;

struct PriorityAdmission {
  std::string error;       // non-empty: the pod is refused (403 Forbidden), with this reason
  std::string class_name;  // the class applied ("" when none)
  int32_t priority = 0;
  bool preempt_never = false;
  bool ok() const { return error.empty(); }
};

// `class_name` the pod's spec.priorityClassName; `given` and
// `given_policy` its spec.priority and spec.preemptionPolicy if set.
PriorityAdmission admit_priority(const std::string& class_name, std::optional<int64_t> given,
                                 const std::optional<std::string>& given_policy, const PriorityClasses& classes);

}  // namespace uvsched
