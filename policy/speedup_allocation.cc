#include "policy/speedup_allocation.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <utility>

namespace uvsched {

SpeedupAllocation allocate_by_speedup(const std::vector<JobDemand>& jobs, long capacity, double min_relative_gain) {
  std::vector<BorrowedDemand> borrowed;
  borrowed.reserve(jobs.size());
  for (const auto& j : jobs) borrowed.push_back({&j.model, j.remaining_epochs, j.max_parallelism});
  return allocate_by_speedup(borrowed, capacity, min_relative_gain);
}

SpeedupAllocation allocate_by_speedup(const std::vector<BorrowedDemand>& jobs, long capacity,
                                      double min_relative_gain) {
  SpeedupAllocation out;
  out.parallelism.assign(jobs.size(), 1);
  out.used = static_cast<int>(jobs.size());
  long left = capacity - static_cast<long>(jobs.size());
  // A job's epoch at what it has and at one more worker: the one is the
  // other's from the step before, so each step evaluates the model once.
  std::vector<double> now_s(jobs.size()), next_s(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    assert(jobs[i].model != nullptr);
    now_s[i] = jobs[i].model->seconds(1);
  }
  // What the next worker adds to job i's speed, in epochs per second (its
  // marginal speedup), over the square root of the epochs it has left, when
  // it makes the job at least min_relative_gain faster; 0 when it does not,
  // or the job is at its cap or done. The weight leans towards the jobs
  // nearest their end, as shortest-remaining-first does, which frees their
  // workers (and the line's next slot) sooner; halfway between epochs per
  // second (weight 1) and the share of the remaining work per second
  // (1/remaining, which made the makespan longer): bench/RESULTS.md.
  auto gain = [&](size_t i) {
    const BorrowedDemand& j = jobs[i];
    int p = out.parallelism[i];
    if (p >= j.max_parallelism || j.remaining_epochs <= 0) return 0.0;
    double now = now_s[i], next = next_s[i] = j.model->seconds(p + 1);
    if (!(next > 0) || !(now > 0) || (now - next) < min_relative_gain * now) return 0.0;
    return (1 / next - 1 / now) / std::sqrt(static_cast<double>(j.remaining_epochs));
  };
  // A max-heap by (gain, index): the largest gain first, the earlier job on a
  // tie. The order is total, so the workers go the same way however the heap
  // is built; make_heap builds it in linear time.
  using Entry = std::pair<double, size_t>;
  auto worse = [](const Entry& x, const Entry& y) {
    return x.first < y.first || (x.first == y.first && x.second > y.second);
  };
  std::vector<Entry> heap;
  heap.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) heap.push_back({gain(i), i});
  std::make_heap(heap.begin(), heap.end(), worse);
  while (left > 0 && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), worse);
    auto [g, i] = heap.back();
    if (g <= 0) break;  // the best is not worth a worker: the rest are not either
    out.parallelism[i] += 1;
    now_s[i] = next_s[i];
    out.used += 1;
    left -= 1;
    heap.back() = {gain(i), i};
    std::push_heap(heap.begin(), heap.end(), worse);
  }
  return out;
}

}  // namespace uvsched
