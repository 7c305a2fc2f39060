#include "policy/taints.h"

namespace uvsched {

bool tolerates(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.op == "Exists") return true;
  return (toleration.op.empty() || toleration.op == "Equal") && toleration.value == taint.value;
}

const Taint* untolerated_taint(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints) {
  for (const Taint& t : taints) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
    bool tolerated = false;
    for (const Toleration& tol : tolerations) tolerated = tolerated || tolerates(tol, t);
    if (!tolerated) return &t;
  }
  return nullptr;
}

bool has_noexecute(const std::vector<Taint>& taints) {
  for (const Taint& t : taints) {
    if (t.effect == "NoExecute") return true;
  }
  return false;
}

bool prefers_elsewhere(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints) {
  for (const Taint& t : taints) {
    if (t.effect != "PreferNoSchedule") continue;
    bool tolerated = false;
    for (const Toleration& tol : tolerations) tolerated = tolerated || tolerates(tol, t);
    if (!tolerated) return true;
  }
  return false;
}

std::optional<uint64_t> noexecute_stay_ms(const std::vector<Toleration>& tolerations,
                                          const std::vector<Taint>& taints) {
  std::optional<int64_t> least;  // seconds
  for (const Taint& t : taints) {
    if (t.effect != "NoExecute") continue;
    const Toleration* used = nullptr;
    for (const Toleration& tol : tolerations) {
      if (tolerates(tol, t)) {
        used = &tol;
        break;
      }
    }
    if (!used) return 0;
    if (used->seconds && (!least || *used->seconds < *least)) least = *used->seconds;
  }
  if (!least) return std::nullopt;
  return *least <= 0 ? 0 : static_cast<uint64_t>(*least) * 1000;
}

}  // namespace uvsched
