// One run of a workload through uvsched's own ML scheduler: MlScheduler and
// its policies, driven through its /train, /job and /finish routes exactly as
// KubeML's controller and train jobs drive it, on a ManualClock with an
// in-memory store and a parameter server that is this simulation (its
// /update is the job's next parallelism). No sockets.
//
// The cluster has C worker slots. A job arrives at its submit time and waits
// in line until a slot is free; it runs at min(its parallelism, free slots,
// its curve's largest replica count). An epoch takes the curve's time at that
// parallelism (times multiplicative noise, if asked, plus a restart cost when
// the parallelism changed); the job then reports it (/job), restart
// included, as KubeML's train job times the whole of invokeTrainFunctions,
// waits for its update, and runs the next epoch at what it was told, as far
// as free slots allow. A job is done after its application's epochs.
// With gang_start a waiting job starts only once its whole parallelism is
// free, as KubeML's train job does (invokeTrainFunctions starts all its
// functions and waits for every one); growth still takes what is free.
//
// Policies: static (KubeML's static_parallelism, at the workload's initial
// replicas), kubeml (uvsched's default: KubeML's throughput rule within the
// fair share), speedup (--parallelism-policy speedup).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tools/ml_trace_sim/trace.h"

namespace uvsched::sim {

enum class Policy { kStatic, kKubeml, kSpeedup };
const char* policy_name(Policy p);
std::optional<Policy> policy_named(std::string_view name);

struct Options {
  double noise = 0;            // sigma of a log-normal factor on each epoch's time
  double restart_seconds = 0;  // charged to an epoch whose parallelism changed (and to the first)
  bool gang_start = false;     // a waiting job starts once its whole parallelism is free
  uint64_t seed = 1;
  size_t max_jobs = 0;  // 0: the whole workload
  // Every /train and /job the run sent, with the parallelism the scheduler
  // answered, one JSON object a line (the same reports can then be sent to
  // the real daemon and its answers compared); null: none.
  std::ostream* decisions = nullptr;
};

struct JobResult {
  std::string name;
  uint64_t seed = 0;
  double jct = 0;  // finish - submit, seconds
  int changes = 0;
};

struct RunResult {
  Policy policy = Policy::kKubeml;
  int slots = 0;
  std::vector<JobResult> jobs;
  double makespan = 0;     // first submit to last finish
  double utilization = 0;  // slot-seconds busy / (slots x makespan)
  int changes = 0;
  int protocol_errors = 0;  // answers that were not what KubeML's train job expects
};

// `trace` under `policy` on `slots` (>= 1) worker slots. With the environment
// variable ML_TRACE_SIM_BY_APP set, it also prints to stderr each
// application's mean wait and run time (where the time goes).
RunResult simulate(const Trace& trace, Policy policy, int slots, const Options& opt);

}  // namespace uvsched::sim
