#include "policy/speedup_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "policy/speedup_allocation.h"

namespace uvsched {

namespace {

// The most workers jobs[which] can run its next epoch at, at least `share`:
// more only where they make the epoch faster, are free now, and are not owed
// to another job before that epoch ends. `shares[k]` is job k's share.
int backfill(const std::vector<SpeedupJob>& jobs, size_t which, const std::vector<int>& shares, long capacity,
             int max_parallelism) {
  const SpeedupJob& me = jobs[which];
  int share = shares[which];
  long held = 0;
  for (const auto& j : jobs) held += std::max(j.parallelism, 1);
  long free_now = capacity - held;
  long top = std::min<long>(max_parallelism, me.parallelism + free_now);
  for (long x = top; x > share; --x) {
    double epoch = me.model.seconds(static_cast<int>(x));
    if (!(epoch < me.model.seconds(share))) continue;
    long owed = 0;  // to the jobs that report before this epoch would end
    for (size_t k = 0; k < jobs.size(); ++k) {
      if (k != which && shares[k] > jobs[k].parallelism && jobs[k].next_report_in < epoch)
        owed += shares[k] - jobs[k].parallelism;
    }
    if (free_now + me.parallelism - x >= owed) return static_cast<int>(x);
  }
  return share;
}

// Every job's share of `capacity` by marginal speedup, the jobs marked
// `gone` left out (their share is 0) and the jobs nothing is known of yet
// kept at what they hold.
std::vector<int> shares_of(const std::vector<SpeedupJob>& jobs, size_t which, long capacity, int max_parallelism,
                           const std::vector<bool>& gone) {
  long pool = capacity;
  std::vector<BorrowedDemand> demands;
  std::vector<size_t> index;  // demands[k] is jobs[index[k]]
  demands.reserve(jobs.size());
  index.reserve(jobs.size());
  std::vector<int> shares(jobs.size(), 0);
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (gone[i]) continue;
    if (!jobs[i].measured && i != which) {
      shares[i] = std::max(jobs[i].parallelism, 1);
      pool -= shares[i];  // kept: nothing is known of it yet
      continue;
    }
    demands.push_back({&jobs[i].model, jobs[i].remaining_epochs, std::max(max_parallelism, 1)});
    index.push_back(i);
  }
  SpeedupAllocation a = allocate_by_speedup(demands, std::max(pool, 0L));
  for (size_t k = 0; k < index.size(); ++k) shares[index[k]] = a.parallelism[k];
  return shares;
}

// What jobs[which] keeps when its share is below what it holds: its share
// averaged over the shrunk epoch, as the jobs expected to finish within it
// leave (its share recomputed as they go), at most what it holds.
// A decision holds for the whole epoch, so workers given up for jobs that
// leave early would idle from their finish until it reports again, while
// keeping all of them for one that leaves near the end idles them for the
// rest (keeping what it would have after the last one left did worse in
// tools/ml_trace_sim: bench/RESULTS.md).
int shrunk_share(const std::vector<SpeedupJob>& jobs, size_t which, long capacity, int max_parallelism,
                 const std::vector<int>& shares) {
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
  std::vector<bool> gone(jobs.size(), false);
  double since = 0, worker_seconds = 0;
  int now = share;
  for (size_t step = 0, next = 0; step < kSteps && next < leaving.size(); ++step) {
    size_t last = std::max(next, (step + 1) * leaving.size() / kSteps);
    if (last == next) continue;
    for (; next < last; ++next) gone[leaving[next].second] = true;
    double finish = leaving[last - 1].first;
    worker_seconds += now * (finish - since);
    since = finish;
    now = shares_of(jobs, which, capacity, max_parallelism, gone)[which];
  }
  worker_seconds += now * (epoch - since);
  int average = static_cast<int>(std::lround(worker_seconds / epoch));
  return std::max(share, std::min(average, me.parallelism));
}

}  // namespace

Decision decide_by_speedup(const std::vector<SpeedupJob>& jobs, size_t which, long capacity, int max_parallelism) {
  std::vector<int> shares = shares_of(jobs, which, capacity, max_parallelism, std::vector<bool>(jobs.size(), false));
  if (shares[which] < jobs[which].parallelism) {
    shares[which] = shrunk_share(jobs, which, capacity, max_parallelism, shares);
  }
  int wanted = backfill(jobs, which, shares, capacity, std::max(max_parallelism, 1));
  Decision d;
  d.why = Decision::Why::kSpeedup;
  d.parallelism = clamp_parallelism(wanted, static_cast<int>(std::min<long>(max_parallelism, std::max(capacity, 1L))));
  d.clamped = d.parallelism != wanted;
  return d;
}

}  // namespace uvsched
