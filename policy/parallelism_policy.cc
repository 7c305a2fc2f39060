#include "policy/parallelism_policy.h"

#include <algorithm>

namespace uvsched {

int clamp_parallelism(int wanted, int cap) { return std::clamp(wanted, 1, std::max(cap, 1)); }

std::string Decision::reason() const {
  const char* name = "create";
  switch (why) {
    case Why::kCreate:
      name = "create";
      break;
    case Why::kStatic:
      name = "static";
      break;
    case Why::kFirstEpoch:
      name = "first-epoch";
      break;
    case Why::kFaster:
      name = "faster";
      break;
    case Why::kSlower:
      name = "slower";
      break;
    case Why::kSteady:
      name = "steady";
      break;
    case Why::kSpeedup:
      name = "speedup";
      break;
  }
  return clamped ? std::string(name) + "+clamped" : std::string(name);
}

Decision ThroughputPolicy::decide(const PolicyState& state, const PolicyInput& in) const {
  Decision d;
  d.state = state;
  int wanted;
  if (in.op == PolicyInput::Op::kCreate) {
    wanted = in.default_parallelism > 0 ? in.default_parallelism : 1;
    d.state.reference_epoch_seconds = 0;
    d.why = Decision::Why::kCreate;
  } else if (in.static_parallelism) {
    wanted = in.parallelism > 0 ? in.parallelism : std::max(in.default_parallelism, 1);
    d.why = Decision::Why::kStatic;
  } else {
    const double t = in.elapsed_seconds;
    const double ref = state.reference_epoch_seconds;
    if (ref == 0) {
      d.state.reference_epoch_seconds = t;
      wanted = in.parallelism + 1;
      d.why = Decision::Why::kFirstEpoch;
    } else if (t <= ref * kScaleUpThreshold) {
      d.state.reference_epoch_seconds = t;
      wanted = in.parallelism + 1;
      d.why = Decision::Why::kFaster;
    } else if (t >= ref * kScaleDownThreshold) {
      d.state.reference_epoch_seconds = t;
      wanted = in.parallelism - 1;
      d.why = Decision::Why::kSlower;
    } else {
      wanted = in.parallelism;  // the reference stays: drift is measured against it
      d.why = Decision::Why::kSteady;
    }
  }
  d.parallelism = clamp_parallelism(wanted, in.cap);
  d.clamped = d.parallelism != wanted;
  return d;
}

}  // namespace uvsched
