// How many parallel functions a training job gets for its next epoch. Pure:
// values in, a decision out; the caller keeps each job's PolicyState.
#pragma once

#include <string>

namespace uvsched {

// The most workers any job may run (--max-parallelism's bound): a job that
// reports more is not one of ours, and the policies count up to it.
inline constexpr int kMaxParallelism = 100'000;

struct PolicyState {
  double reference_epoch_seconds = 0;  // 0: no reference yet
};

struct PolicyInput {
  enum class Op { kCreate, kUpdate };
  Op op = Op::kCreate;
  int default_parallelism = 0;      // from the request's options; <= 0 means 1
  bool static_parallelism = false;  // the job keeps what it has
  int parallelism = 0;              // update: the job's current parallelism (job.state.parallelism)
  double elapsed_seconds = 0;       // update: the epoch's time (job.state.elapsed_time)
  int cap = 1;                      // min(--max-parallelism, the job's share of capacity), >= 1
};

struct Decision {
  // Why the parallelism is what it is: what callers act on, never the text.
  enum class Why { kCreate, kStatic, kFirstEpoch, kFaster, kSlower, kSteady, kSpeedup };
  int parallelism = 1;
  PolicyState state;
  Why why = Why::kCreate;
  bool clamped = false;  // the cap bit: the policy wanted another parallelism
  // For records and metrics: create, first-epoch, faster, slower, steady,
  // static, speedup; with "+clamped" when the cap bit.
  std::string reason() const;
};

// Which rule chooses parallelism (--parallelism-policy): KubeML's throughput
// rule (ThroughputPolicy), or the cluster-wide speedup allocation
// (speedup_policy.h).
enum class ParallelismPolicyKind { kKubeml, kSpeedup };

class ParallelismPolicy {
 public:
  virtual ~ParallelismPolicy() = default;
  virtual const char* name() const = 0;
  virtual Decision decide(const PolicyState& state, const PolicyInput& input) const = 0;
};

// KubeML's throughput-based policy, with uvsched's fixes: results clamped to
// [1, cap], a missing default parallelism is 1, static jobs keep theirs.
class ThroughputPolicy final : public ParallelismPolicy {
 public:
  static constexpr double kScaleUpThreshold = 1.05;   // KubeML ThroughputScaleUpThreshold
  static constexpr double kScaleDownThreshold = 1.2;  // KubeML ThroughPutScaleDownThreshold

  const char* name() const override { return "throughput"; }
  Decision decide(const PolicyState& state, const PolicyInput& input) const override;
};

// Clamps a wanted parallelism to [1, cap] (cap < 1 counts as 1).
int clamp_parallelism(int wanted, int cap);

}  // namespace uvsched
