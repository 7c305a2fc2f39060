#include "policy/parallelism_policy.h"

#include <algorithm>

namespace uvsched {

int clamp_parallelism(int wanted, int cap) { return std::clamp(wanted, 1, std::max(cap, 1)); }

Decision ThroughputPolicy::decide(const PolicyState& state, const PolicyInput& in) const {
  Decision d;
  d.state = state;
  int wanted;
  if (in.op == PolicyInput::Op::kCreate) {
    wanted = in.default_parallelism > 0 ? in.default_parallelism : 1;
    d.state.reference_epoch_seconds = 0;
    d.reason = "create";
  } else if (in.static_parallelism) {
    wanted = in.parallelism > 0 ? in.parallelism : std::max(in.default_parallelism, 1);
    d.reason = "static";
  } else {
    const double t = in.elapsed_seconds;
    const double ref = state.reference_epoch_seconds;
    if (ref == 0) {
      d.state.reference_epoch_seconds = t;
      wanted = in.parallelism + 1;
      d.reason = "first-epoch";
    } else if (t <= ref * kScaleUpThreshold) {
      d.state.reference_epoch_seconds = t;
      wanted = in.parallelism + 1;
      d.reason = "faster";
    } else if (t >= ref * kScaleDownThreshold) {
      d.state.reference_epoch_seconds = t;
      wanted = in.parallelism - 1;
      d.reason = "slower";
    } else {
      wanted = in.parallelism;  // the reference stays: drift is measured against it
      d.reason = "steady";
    }
  }
  d.parallelism = clamp_parallelism(wanted, in.cap);
  if (d.parallelism != wanted) d.reason += "+clamped";
  return d;
}

}  // namespace uvsched
