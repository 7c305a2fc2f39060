// Divides the cluster's workers among training jobs by marginal speedup:
// every job gets one worker (in arrival order, while there are workers), and
// each further worker goes to the job whose remaining training time it
// shortens the most, by its speed model (SpeedModel) times the epochs it has
// left, until the workers run out or no worker saves more than
// min_gain_seconds. Jobs that scale well get many; jobs that do not give
// theirs back. Pure: demands in, an allocation out.
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

// `jobs` in arrival order; capacity < number of jobs still gives each one
// worker (a running job is never stopped: it is the caller's to queue jobs).
SpeedupAllocation allocate_by_speedup(const std::vector<JobDemand>& jobs, long capacity,
                                      double min_gain_seconds = 1.0);

}  // namespace uvsched
