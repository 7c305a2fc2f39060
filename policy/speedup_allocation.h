// Divides the cluster's workers among training jobs by marginal speedup:
// every job gets one worker, and each further worker goes to the job whose
// speed (epochs per second, by its SpeedModel) it raises the most, weighed by
// 1/sqrt(epochs left), until the workers run out or no worker makes any job
// at least min_relative_gain faster. So jobs that scale well get many
// workers, jobs that do not give theirs back, short epochs (short jobs) and
// jobs near their end finish first. (Weighing a worker by the training time
// it saves, remaining epochs times seconds, favoured the longest jobs and did
// worse on average completion time in tools/ml_trace_sim: see bench/RESULTS.md.)
// Pure: demands in, an allocation out.
#pragma once

#include <string>
#include <vector>

#include "policy/speed_model.h"

namespace uvsched {

struct JobDemand {
  std::string id;
  SpeedModel model = SpeedModel::of(0, 1, 0, 0);
  int remaining_epochs = 1;
  int max_parallelism = 1;  // its own cap (--max-parallelism, or its static parallelism)
};

struct SpeedupAllocation {
  std::vector<int> parallelism;  // one per demand, in the demands' order; >= 1 each
  int used = 0;
};

// A demand whose model the caller keeps. The speedup policy divides the
// cluster up to nine times a decision, and copying every job's model into a
// JobDemand each time cost more than the division with 1,000 jobs.
struct BorrowedDemand {
  const SpeedModel* model = nullptr;  // not null
  int remaining_epochs = 1;
  int max_parallelism = 1;
};

// `jobs` in arrival order; capacity < number of jobs still gives each one
// worker (a running job is never stopped: it is the caller's to queue jobs).
SpeedupAllocation allocate_by_speedup(const std::vector<JobDemand>& jobs, long capacity,
                                      double min_relative_gain = 0.0);
SpeedupAllocation allocate_by_speedup(const std::vector<BorrowedDemand>& jobs, long capacity,
                                      double min_relative_gain = 0.0);

}  // namespace uvsched
