// The workload a simulation replays (bench/ml-trace: the Pollux artifact's
// workload 6, with its provenance in that folder's README): the jobs, the
// epochs each application needs, and each (application, batch size)'s epoch
// time by replica count.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace uvsched::sim {

struct TraceJob {
  std::string name;
  double submit_seconds = 0;
  std::string app;
  int initial = 1;  // replicas it asks for (KubeML's default_parallelism)
  int batch = 0;
};

struct Trace {
  std::vector<TraceJob> jobs;                                         // by submit time, as the file lists them
  std::map<std::string, int> epochs;                                  // application -> epochs to finish
  std::map<std::pair<std::string, int>, std::vector<double>> curves;  // (app, batch) -> seconds at replicas 1..N

  // The epoch times of `job`'s application at its batch size (load_trace
  // checked that there is one, with a time at every replica count up to N).
  const std::vector<double>& curve(const TraceJob& job) const { return curves.at({job.app, job.batch}); }
};

// Reads DIR/workload.csv, DIR/epochs.csv and DIR/scaling_by_batch_size.csv
// (the epoch time is its sim_epoch_seconds column). Nothing when a file
// cannot be read, a row does not hold what its header names, a job has no
// curve or epoch count, or there are no jobs; then *error says where.
std::optional<Trace> load_trace(const std::string& dir, std::string* error);

}  // namespace uvsched::sim
