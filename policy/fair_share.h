// Splits a capacity of parallel functions fairly between jobs: equal shares,
// the remainder to the earliest jobs, and never below 1 (a running job keeps
// at least one function even when capacity is short).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace uvsched {

// capacity nullopt: unlimited, every share is `max_parallelism`.
std::vector<int> fair_shares(std::optional<long> capacity, size_t jobs, int max_parallelism);

// How many functions of size (cpus, mem) fit in free (cpus, mem); nullopt when
// no function size is configured.
std::optional<long> functions_that_fit(double free_cpus, double free_mem_mib, double fn_cpus, double fn_mem_mib);

}  // namespace uvsched
