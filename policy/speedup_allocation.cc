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
  SpeedupAllocator a(std::move(borrowed), capacity, min_relative_gain);
  a.run();
  return {a.parallelism(), a.used()};
}

SpeedupAllocator::SpeedupAllocator(std::vector<BorrowedDemand> jobs, long capacity, double min_relative_gain)
    : jobs_(std::move(jobs)),
      min_relative_gain_(min_relative_gain),
      parallelism_(jobs_.size(), 1),
      gone_(jobs_.size(), false),
      now_s_(jobs_.size()),
      next_s_(jobs_.size()),
      gain_(jobs_.size()),
      left_(capacity - static_cast<long>(jobs_.size())),
      used_(static_cast<int>(jobs_.size())) {
  for (size_t i = 0; i < jobs_.size(); ++i) {
    assert(jobs_[i].model != nullptr);
    now_s_[i] = jobs_[i].model->seconds(1);
    gain_[i] = gain(i);
  }
}

// What the next worker adds to job i's speed, in epochs per second (its
// marginal speedup), over the square root of the epochs it has left, when it
// makes the job at least min_relative_gain faster; 0 when it does not, or the
// job is at its cap or done. The weight leans towards the jobs nearest their
// end, as shortest-remaining-first does, which frees their workers (and the
// line's next slot) sooner; halfway between epochs per second (weight 1) and
// the share of the remaining work per second (1/remaining, which made the
// makespan longer): bench/RESULTS.md. A job's epoch at what it has is its
// epoch at one more worker from the step before, so a step evaluates the
// model once.
double SpeedupAllocator::gain(size_t i) {
  const BorrowedDemand& j = jobs_[i];
  int p = parallelism_[i];
  if (p >= j.max_parallelism || j.remaining_epochs <= 0) return 0.0;
  double now = now_s_[i], next = next_s_[i] = j.model->seconds(p + 1);
  if (!(next > 0) || !(now > 0) || (now - next) < min_relative_gain_ * now) return 0.0;
  return (1 / next - 1 / now) / std::sqrt(static_cast<double>(j.remaining_epochs));
}

void SpeedupAllocator::run() {
  // A max-heap by (gain, index): the largest gain first, the earlier job on a
  // tie. The order is total, so the workers go the same way however the heap
  // is built; make_heap builds it in linear time.
  using Entry = std::pair<double, size_t>;
  auto worse = [](const Entry& x, const Entry& y) {
    return x.first < y.first || (x.first == y.first && x.second > y.second);
  };
  std::vector<Entry> heap;
  heap.reserve(jobs_.size());
  for (size_t i = 0; i < jobs_.size(); ++i) {
    if (!gone_[i]) heap.push_back({gain_[i], i});
  }
  std::make_heap(heap.begin(), heap.end(), worse);
  while (left_ > 0 && !heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), worse);
    auto [g, i] = heap.back();
    if (g <= 0) break;  // the best is not worth a worker: the rest are not either
    parallelism_[i] += 1;
    now_s_[i] = next_s_[i];
    used_ += 1;
    left_ -= 1;
    gain_[i] = gain(i);
    heap.back() = {gain_[i], i};
    std::push_heap(heap.begin(), heap.end(), worse);
  }
}

void SpeedupAllocator::leave(size_t i) {
  assert(i < jobs_.size() && !gone_[i]);
  gone_[i] = true;
  left_ += parallelism_[i];
  used_ -= parallelism_[i];
  parallelism_[i] = 0;
}

}  // namespace uvsched
