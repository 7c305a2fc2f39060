#include "policy/fair_share.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace uvsched {

std::vector<int> fair_shares(std::optional<long> capacity, size_t jobs, int max_parallelism) {
  std::vector<int> out(jobs, std::max(max_parallelism, 1));
  if (!capacity || jobs == 0) return out;
  long cap = std::max(*capacity, 0L);
  long base = cap / static_cast<long>(jobs);
  long extra = cap % static_cast<long>(jobs);
  for (size_t i = 0; i < jobs; ++i) {
    long share = base + (static_cast<long>(i) < extra ? 1 : 0);
    out[i] = static_cast<int>(std::clamp<long>(share, 1, std::max(max_parallelism, 1)));
  }
  return out;
}

std::optional<long> functions_that_fit(double free_cpus, double free_mem_mib, double fn_cpus, double fn_mem_mib) {
  if (fn_cpus <= 0 && fn_mem_mib <= 0) return std::nullopt;
  double fit = std::numeric_limits<double>::infinity();
  if (fn_cpus > 0) fit = std::min(fit, std::floor(std::max(free_cpus, 0.0) / fn_cpus + 1e-9));
  if (fn_mem_mib > 0) fit = std::min(fit, std::floor(std::max(free_mem_mib, 0.0) / fn_mem_mib + 1e-9));
  return static_cast<long>(fit);
}

}  // namespace uvsched
