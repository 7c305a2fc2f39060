// What the simulator prints and writes: per policy and cluster size, the
// means over its runs (seeds) of average, median and p99 job completion time
// (JCT), makespan, utilization and parallelism changes; as a table on
// stdout, as CSV (summary.csv, and every job of every run in jct.csv), and as
// a plot of the CDF of JCT per policy, one panel per cluster size, drawn by
// gnuplot (SVG or PNG).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tools/ml_trace_sim/simulation.h"

namespace uvsched::sim {

// One policy at one size over every seed: the means of each run's figures.
struct Row {
  Policy policy = Policy::kKubeml;
  int slots = 0;
  std::vector<RunResult> runs;
  double mean = 0, median = 0, p99 = 0, makespan = 0, utilization = 0, changes = 0;
  int protocol_errors = 0;
};

// `runs` (not empty) are one policy at one size.
Row row_of(std::vector<RunResult> runs);

void print_table_header(std::FILE* out);
void print_table_row(std::FILE* out, const Row& row);

// What the rows were run with, for summary.csv and the plot's titles.
struct RunConditions {
  double noise = 0;
  double restart_seconds = 0;
  bool gang_start = false;
  int seeds = 1;
};

// DIR/summary.csv and DIR/jct.csv; false, with *error, when either cannot be written.
bool write_csv(const std::string& dir, const std::vector<Row>& rows, const RunConditions& how, std::string* error);

// The CDF plot, `rows` being each size's policies in turn (`slots` sizes of
// `policies` rows each); `path` ends in .svg or .png. False, with *error,
// when its data cannot be written or gnuplot fails.
bool write_plot(const std::string& path, const std::vector<Row>& rows, const std::vector<int>& slots,
                const std::vector<Policy>& policies, const RunConditions& how, std::string* error);

}  // namespace uvsched::sim
