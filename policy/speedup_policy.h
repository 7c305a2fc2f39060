// The speedup policy (--parallelism-policy speedup): a job's next epoch runs
// at its share of an allocation of the whole cluster by marginal speedup
// (speedup_allocation.h), each job's speed model fitted from the epochs it and
// its kind reported (speed_model.h), instead of KubeML's rule that looks at
// one job at a time. A job whose speed nothing is known of yet (no epoch of
// its own or of its kind) keeps its parallelism out of the pool.
//
// A decision holds for a whole epoch, and a job can take workers only when it
// reports, so a share is backfilled: the job reporting may run above its
// share on workers that are free now and that no job due to report before
// this epoch ends is owed (its share above what it holds). Without it those
// workers idle until their owner reports, which for a job at one worker of a
// model with two-hour epochs is two hours.
//
// For the same reason a job told to shrink keeps its share averaged over its
// next epoch at the smaller share, as the jobs expected to finish within that
// epoch leave: the workers it gave them would idle from their finish until it
// reported again (on the trace, two imagenet jobs went from 6 workers to 1 for
// a job three epochs from done, then ran 8,000 s epochs on an idle cluster).
// Nor does it go below the workers at which its epochs were measured to cost
// the fewest worker-seconds (efficient_floor): giving those up leaves the
// others no more worker-seconds over its run.
// Pure: the jobs in, a decision out.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "policy/parallelism_policy.h"
#include "policy/speed_model.h"

namespace uvsched {

struct SpeedupJob {
  SpeedModel model = SpeedModel::of(0, 1, 0, 0);
  bool measured = false;  // its speed is known: it, or a job of its kind, reported an epoch
  int parallelism = 1;    // what it runs now
  int remaining_epochs = 1;
  // Seconds until it is expected to report again (its epoch at its
  // parallelism, less the time since its last report); 0: now, or not known.
  double next_report_in = 0;
};

// The decision for jobs[which] (jobs in arrival order), within [1,
// min(max_parallelism, capacity)]; `capacity` is the cluster's workers.
// A round of one.
Decision decide_by_speedup(const std::vector<SpeedupJob>& jobs, size_t which, long capacity, int max_parallelism);

class SpeedupDivision;

// The decisions for jobs that report together (the /job reports the daemon
// drains in one turn): the cluster is divided once, every report's epoch
// already in the models, and each reporting job then gets its share,
// shrunk or backfilled as decide_by_speedup does. Dividing the cluster once
// for each report was most of a decision's time with 1,000 jobs
// (bench/RESULTS.md), and one report's answer no longer depends on whether
// another that came in the same turn was decided first. Each decision is
// written into `jobs` as it is made, so that the next one's backfill sees
// the workers it took. Nothing else may change `jobs` while the round lives.
class SpeedupRound {
 public:
  // `reporting`: indices into `jobs` of the jobs reporting now (their
  // next_report_in is 0); each takes part in the division even if unmeasured.
  SpeedupRound(std::vector<SpeedupJob>& jobs, const std::vector<size_t>& reporting, long capacity, int max_parallelism);
  ~SpeedupRound();
  SpeedupRound(const SpeedupRound&) = delete;
  SpeedupRound& operator=(const SpeedupRound&) = delete;

  // The decision for jobs[which], one of `reporting` not yet decided; jobs[which]
  // then runs at it and is next due when an epoch at it ends.
  Decision decide(size_t which);

 private:
  std::vector<SpeedupJob>& jobs_;
  std::vector<bool> undecided_;  // reporting, and not yet decided
  long capacity_;
  int max_parallelism_;
  std::unique_ptr<SpeedupDivision> division_;
  std::vector<int> shares_;  // the division's, fixed for the round
};

}  // namespace uvsched
