#include "policy/speedup_policy.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <optional>
#include <utility>

#include "policy/speedup_allocation.h"

namespace uvsched {

// Every job's share of `capacity` by marginal speedup, the jobs nothing is
// known of yet kept at what they hold; jobs can then leave the division
// (their share becomes 0) and it be made again among the rest.
class SpeedupDivision {
 public:
  // `dividing[i]`: jobs[i] reports now, so it is divided among even if nothing is known of it.
  SpeedupDivision(const std::vector<SpeedupJob>& jobs, const std::vector<bool>& dividing, long capacity,
                  int max_parallelism)
      : demand_of_(jobs.size(), kKept),
        kept_(jobs.size(), 0),
        allocator_(allocator_for(jobs, dividing, capacity, max_parallelism)) {
    allocator_.run();
  }
  int share(size_t k) const { return demand_of_[k] == kKept ? kept_[k] : allocator_.parallelism()[demand_of_[k]]; }
  std::vector<int> shares() const {
    std::vector<int> out(demand_of_.size());
    for (size_t k = 0; k < out.size(); ++k) out[k] = share(k);
    return out;
  }
  // jobs[k], one the division divides among (measured, or reporting now), leaves.
  void leave(size_t k) {
    assert(demand_of_[k] != kKept);
    allocator_.leave(demand_of_[k]);
  }
  void redivide() { allocator_.run(); }

 private:
  static constexpr size_t kKept = static_cast<size_t>(-1);
  // Fills demand_of_ and kept_ (made before allocator_).
  SpeedupAllocator allocator_for(const std::vector<SpeedupJob>& jobs, const std::vector<bool>& dividing, long capacity,
                                 int max_parallelism) {
    long pool = capacity;
    std::vector<BorrowedDemand> demands;
    demands.reserve(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (!jobs[i].measured && !dividing[i]) {
        kept_[i] = std::max(jobs[i].parallelism, 1);
        pool -= kept_[i];  // kept: nothing is known of it yet
        continue;
      }
      demand_of_[i] = demands.size();
      demands.push_back({&jobs[i].model, jobs[i].remaining_epochs, std::max(max_parallelism, 1)});
    }
    return SpeedupAllocator(std::move(demands), std::max(pool, 0L));
  }

  std::vector<size_t> demand_of_;  // jobs[k] is the allocator's demand_of_[k]-th, or kept
  std::vector<int> kept_;
  SpeedupAllocator allocator_;
};

namespace {

// The most workers jobs[which] can run its next epoch at, at least `share`:
// more only where they make the epoch faster, are free now, and are not owed
// to another job before that epoch ends. `shares[k]` is job k's share (k !=
// which). What is owed before an epoch ends is read off the owed jobs'
// report times, sorted once, instead of going over every job for each count
// of workers tried: with 1,000 jobs on 3,000 workers (tools/ml_trace_sim)
// that product was about a tenth of the speedup policy's time. They are
// sorted only once some count would make the epoch faster: a job that gains
// nothing from more workers (most of them, once their model is known) is
// decided without.
int backfill(const std::vector<SpeedupJob>& jobs, size_t which, int share, const std::vector<int>& shares,
             long capacity, int max_parallelism) {
  const SpeedupJob& me = jobs[which];
  long held = 0;
  for (const auto& j : jobs) held += std::max(j.parallelism, 1);
  long free_now = capacity - held;
  long top = std::min<long>(max_parallelism, me.parallelism + free_now);
  if (top <= share) return share;
  // (report due in, workers it is owed), by when it reports; owed_before[n]:
  // what the first n are owed in all, so what the jobs that report before an
  // epoch ends are owed is one binary search.
  std::vector<std::pair<double, long>> due;
  std::vector<long> owed_before;
  auto sort_owed = [&] {
    for (size_t k = 0; k < jobs.size(); ++k) {
      // (A time that is not a number is never before the epoch's end, as before.)
      if (k != which && shares[k] > jobs[k].parallelism && !std::isnan(jobs[k].next_report_in))
        due.push_back({jobs[k].next_report_in, shares[k] - jobs[k].parallelism});
    }
    std::sort(due.begin(), due.end());
    owed_before.assign(due.size() + 1, 0);
    for (size_t n = 0; n < due.size(); ++n) owed_before[n + 1] = owed_before[n] + due[n].second;
  };
  double at_share = me.model.seconds(share);
  for (long x = top; x > share; --x) {
    double epoch = me.model.seconds(static_cast<int>(x));
    if (!(epoch < at_share)) continue;
    if (owed_before.empty()) sort_owed();
    auto reporting = std::partition_point(due.begin(), due.end(), [epoch](const auto& d) { return d.first < epoch; });
    if (free_now + me.parallelism - x >= owed_before[reporting - due.begin()]) return static_cast<int>(x);
  }
  return share;
}

// What jobs[which] keeps when its share is below what it holds: its share
// averaged over the shrunk epoch, as the jobs expected to finish within it
// leave (its share recomputed as they go), at most what it holds.
// A decision holds for the whole epoch, so workers given up for jobs that
// leave early would idle from their finish until it reports again, while
// keeping all of them for one that leaves near the end idles them for the
// rest (keeping what it would have after the last one left did worse in
// tools/ml_trace_sim: bench/RESULTS.md).
int shrunk_share(const std::vector<SpeedupJob>& jobs, size_t which, const std::vector<int>& shares,
                 SpeedupDivision& division) {
  const SpeedupJob& me = jobs[which];
  int share = shares[which];
  double epoch = me.model.seconds(share);
  std::vector<std::pair<double, size_t>> leaving;  // (expected finish, job), before the shrunk epoch ends
  for (size_t k = 0; k < jobs.size(); ++k) {
    if (k == which || !jobs[k].measured) continue;
    double finish =
        jobs[k].next_report_in + std::max(jobs[k].remaining_epochs - 1, 0) * jobs[k].model.seconds(shares[k]);
    if (finish < epoch) leaving.push_back({finish, k});
  }
  if (leaving.empty() || !(epoch > 0)) return share;
  std::sort(leaving.begin(), leaving.end());
  // The share is recomputed after each of at most kSteps groups of leavers
  // (in finish order), not after each: with hundreds of short jobs leaving
  // within one long epoch, recomputing it for every one was most of a
  // decision's time.
  constexpr size_t kSteps = 8;
  double since = 0, worker_seconds = 0;
  int now = share;
  for (size_t step = 0, next = 0; step < kSteps && next < leaving.size(); ++step) {
    size_t last = std::max(next, (step + 1) * leaving.size() / kSteps);
    if (last == next) continue;
    for (; next < last; ++next) division.leave(leaving[next].second);
    double finish = leaving[last - 1].first;
    worker_seconds += now * (finish - since);
    since = finish;
    division.redivide();
    now = division.share(which);
  }
  worker_seconds += now * (epoch - since);
  int average = static_cast<int>(std::lround(worker_seconds / epoch));
  return std::max(share, std::min(average, me.parallelism));
}

// The most workers, up to what `me` holds, at which an epoch costs fewer
// worker-seconds than at any fewer, as measured (by it, or by its kind where
// it did not run there); 1 when one worker was never measured. A model that
// runs superlinearly to 3 workers (deepspeech2 on the trace: 272
// worker-seconds an epoch at 3 against 289 at 1) does its work on less of the
// cluster there than at one, so shrinking it below 3 gives the others no
// worker-seconds over its run, while it then sits at one worker for as long as
// jobs wait (a job grows only into workers nobody waits for). Only measured
// points count: the fitted curve cannot run superlinearly, so where it stands
// in for a measurement it says nothing true, and with its guesses the floor
// did worse with noise in tools/ml_trace_sim (bench/RESULTS.md).
int efficient_floor(const SpeedupJob& me) {
  std::optional<double> one = me.model.measured_seconds(1);
  if (!one) return 1;
  int floor = 1;
  double cheapest = *one;  // worker-seconds an epoch, the least at fewer workers
  for (int x = 2; x <= me.parallelism; ++x) {
    std::optional<double> t = me.model.measured_seconds(x);
    if (!t) continue;
    double cost = x * *t;
    if (cost < cheapest) {
      floor = x;
      cheapest = cost;
    }
  }
  return floor;
}

}  // namespace

Decision decide_by_speedup(const std::vector<SpeedupJob>& jobs, size_t which, long capacity, int max_parallelism) {
  std::vector<SpeedupJob> scratch = jobs;  // the round writes its decision in
  return SpeedupRound(scratch, {which}, capacity, max_parallelism).decide(which);
}

SpeedupRound::SpeedupRound(std::vector<SpeedupJob>& jobs, const std::vector<size_t>& reporting, long capacity,
                           int max_parallelism)
    : jobs_(jobs), undecided_(jobs.size(), false), capacity_(capacity), max_parallelism_(max_parallelism) {
  for (size_t k : reporting) {
    assert(k < jobs.size());
    undecided_[k] = true;
  }
  division_ = std::make_unique<SpeedupDivision>(jobs, undecided_, capacity, max_parallelism);
  shares_ = division_->shares();
}

SpeedupRound::~SpeedupRound() = default;

Decision SpeedupRound::decide(size_t which) {
  assert(which < jobs_.size() && undecided_[which]);
  undecided_[which] = false;
  SpeedupJob& me = jobs_[which];
  int share = shares_[which];
  if (share < me.parallelism) {
    SpeedupDivision scratch = *division_;  // jobs leave it: the round's stays whole for the next report
    share = shrunk_share(jobs_, which, shares_, scratch);
  }
  int wanted = backfill(jobs_, which, share, shares_, capacity_, std::max(max_parallelism_, 1));
  if (wanted < me.parallelism) wanted = std::max(wanted, efficient_floor(me));
  Decision d;
  d.why = Decision::Why::kSpeedup;
  d.parallelism =
      clamp_parallelism(wanted, static_cast<int>(std::min<long>(max_parallelism_, std::max(capacity_, 1L))));
  d.clamped = d.parallelism != wanted;
  // What the next decision's backfill sees of it: the workers it now takes,
  // due when an epoch at them ends.
  me.parallelism = d.parallelism;
  me.next_report_in = std::max(0.0, me.model.seconds(d.parallelism));
  return d;
}

}  // namespace uvsched
