#include "policy/priority.h"

namespace uvsched {

PriorityAdmission admit_priority(const std::string& class_name, std::optional<int64_t> given,
                                 const std::optional<std::string>& given_policy, const PriorityClasses& classes) {
  PriorityAdmission a;
  const PriorityClassInfo* info = nullptr;
  if (!class_name.empty()) {
    auto it = classes.find(class_name);
    if (it == classes.end()) {
      a.error = "no PriorityClass with name " + class_name + " was found";
      return a;
    }
    info = &it->second;
    a.class_name = class_name;
  } else {
    // Kubernetes allows one globalDefault; should several be stored (written
    // straight into the store), the lowest wins, so no pod gains by it.
    for (const auto& [name, c] : classes) {
      if (c.global_default && (!info || c.value < info->value)) {
        info = &c;
        a.class_name = name;
      }
    }
  }
  a.priority = info ? info->value : 0;
  a.preempt_never = info && info->preempt_never;
  if (given && *given != a.priority) {
    a.error = "the integer value of priority (" + std::to_string(*given) +
              ") must not be provided in pod spec; priority admission controller computed " +
              std::to_string(a.priority) + " from the given PriorityClass name";
    return a;
  }
  const char* policy = a.preempt_never ? "Never" : "PreemptLowerPriority";
  if (given_policy && *given_policy != policy) {
    a.error = "the string value of PreemptionPolicy (" + *given_policy +
              ") must not be provided in pod spec; priority admission controller computed " + policy +
              " from the given PriorityClass name";
  }
  return a;
}

}  // namespace uvsched
