#include "policy/speedup_policy.h"

#include <algorithm>

#include "policy/speedup_allocation.h"

namespace uvsched {

Decision decide_by_speedup(const std::vector<SpeedupJob>& jobs, size_t which, long capacity, int max_parallelism) {
  long pool = capacity;
  std::vector<JobDemand> demands;
  std::vector<size_t> index;  // demands[k] is jobs[index[k]]
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].measured && i != which) {
      pool -= std::max(jobs[i].parallelism, 1);  // kept: nothing is known of it yet
      continue;
    }
    demands.push_back({"", jobs[i].model, jobs[i].remaining_epochs, std::max(max_parallelism, 1)});
    index.push_back(i);
  }
  SpeedupAllocation a = allocate_by_speedup(demands, std::max(pool, 0L));
  int wanted = 1;
  for (size_t k = 0; k < index.size(); ++k) {
    if (index[k] == which) wanted = a.parallelism[k];
  }
  Decision d;
  d.why = Decision::Why::kSpeedup;
  d.parallelism = clamp_parallelism(wanted, static_cast<int>(std::min<long>(max_parallelism, std::max(capacity, 1L))));
  d.clamped = d.parallelism != wanted;
  return d;
}

}  // namespace uvsched
