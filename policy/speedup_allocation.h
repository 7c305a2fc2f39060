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

// The same greedy, kept so that jobs can leave it: after run(), leave(i)
// takes jobs[i] out and the next run() hands its workers to the others. That
// gives the others exactly what allocate_by_speedup would without jobs[i]:
// each worker the greedy gave one of them went to the largest gain of all
// jobs, so of the others too, and the greedy without jobs[i] makes the same
// picks among them and then goes on with the workers jobs[i] had. (The
// speedup policy recomputes the division as the jobs due to finish within a
// shrunk epoch leave, up to eight times a decision; from scratch each was
// most of a decision's allocation time with 1,000 jobs.)
class SpeedupAllocator {
 public:
  SpeedupAllocator(std::vector<BorrowedDemand> jobs, long capacity, double min_relative_gain = 0.0);
  // Hands out the workers left, the largest gain first (the earlier job on a tie).
  void run();
  // jobs[i] leaves with its workers (its parallelism becomes 0); once only.
  void leave(size_t i);
  // One per job, in the jobs' order: >= 1 each but 0 for a job that left.
  const std::vector<int>& parallelism() const { return parallelism_; }
  int used() const { return used_; }

 private:
  double gain(size_t i);  // of jobs[i]'s next worker; sets next_s_[i]

  std::vector<BorrowedDemand> jobs_;
  double min_relative_gain_;
  std::vector<int> parallelism_;
  std::vector<bool> gone_;
  std::vector<double> now_s_, next_s_;  // a job's epoch at what it has, and at one more worker
  std::vector<double> gain_;            // of its next worker, at what it has
  long left_ = 0;
  int used_ = 0;
};

}  // namespace uvsched
