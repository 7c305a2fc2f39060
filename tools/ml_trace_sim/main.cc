// ml_trace_sim: replays an ML workload (bench/ml-trace: the Pollux artifact's
// workload 6 and its measured scaling curves) through uvsched's own ML
// scheduler (simulation.h says how), for each policy and cluster size asked.
//
// Output: a table on stdout; with --csv-dir, summary.csv and jct.csv; with
// --plot FILE.svg (or .png), the CDF of job completion time per policy
// (report.h); with --decisions FILE, every /train and /job sent and what it
// was answered (tests/integration/ml_scheduler_test.cc replays them against
// the daemon). With --seeds N each policy runs N times (seeds --seed ..
// --seed+N-1): the table and summary.csv give the means, jct.csv and the plot
// every run's jobs. A schedule is chaotic (one epoch that ends a second
// earlier reorders who takes the next free worker, and the makespan of one
// run moves by a few percent), so a comparison with noise rests on several
// seeds, not one.
//
// Exit status: 0 done; 1 the plot could not be drawn; 2 a bad flag or trace,
// or an output that cannot be written; 3 the scheduler refused a /train.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli_numbers.h"
#include "tools/ml_trace_sim/report.h"
#include "tools/ml_trace_sim/simulation.h"
#include "tools/ml_trace_sim/trace.h"

namespace uvsched::sim {
namespace {

constexpr int kMaxSlots = 1'000'000;

int usage() {
  std::cerr << "usage: ml_trace_sim --trace DIR [--slots 32,64,128] [--policies static,kubeml,speedup]\n"
               "                    [--noise SIGMA] [--restart-seconds S] [--gang-start] [--seed N] [--seeds N]\n"
               "                    [--jobs N] [--csv-dir DIR] [--plot FILE.svg] [--decisions FILE.jsonl]\n";
  return 2;
}

int bad(const std::string& flag, const std::string& value, const std::string& want) {
  std::cerr << "ml_trace_sim: " << flag << " \"" << value << "\": " << want << "\n";
  return usage();
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

bool is_directory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

int main_(int argc, char** argv) {
  std::string trace_dir, csv_dir, plot;
  std::vector<int> slots = {32, 64, 128};
  std::vector<Policy> policies = {Policy::kStatic, Policy::kKubeml, Policy::kSpeedup};
  Options opt;
  int seeds = 1;
  std::ofstream decisions;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    }
    if (a == "--gang-start") {
      opt.gang_start = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::cerr << "ml_trace_sim: " << (a.rfind("--", 0) == 0 ? a + " needs a value" : "unknown argument " + a) << "\n";
      return usage();
    }
    std::string v = argv[++i];
    if (a == "--trace") {
      trace_dir = v;
    } else if (a == "--slots") {
      slots.clear();
      for (const auto& s : split(v)) {
        int n = 0;
        if (!cli::parse_int(s, 1, &n) || n > kMaxSlots)
          return bad(a, v, "want slot counts from 1 to " + std::to_string(kMaxSlots) + ", comma-separated");
        slots.push_back(n);
      }
      if (slots.empty()) return bad(a, v, "want at least one slot count");
    } else if (a == "--policies") {
      policies.clear();
      for (const auto& p : split(v)) {
        std::optional<Policy> policy = policy_named(p);
        if (!policy) return bad(a, v, "want static, kubeml or speedup, comma-separated");
        policies.push_back(*policy);
      }
      if (policies.empty()) return bad(a, v, "want at least one policy");
    } else if (a == "--noise") {
      if (!cli::parse_double(v, 0, &opt.noise)) return bad(a, v, "want a sigma >= 0 (0.1 for 10%)");
    } else if (a == "--restart-seconds") {
      if (!cli::parse_double(v, 0, &opt.restart_seconds)) return bad(a, v, "want seconds >= 0");
    } else if (a == "--seed") {
      if (!cli::parse_int<uint64_t>(v, 0, &opt.seed)) return bad(a, v, "want a whole number >= 0");
    } else if (a == "--seeds") {
      if (!cli::parse_int(v, 1, &seeds)) return bad(a, v, "want a whole number >= 1");
    } else if (a == "--jobs") {
      if (!cli::parse_int<size_t>(v, 0, &opt.max_jobs)) return bad(a, v, "want a whole number >= 0 (0: every job)");
    } else if (a == "--csv-dir") {
      if (!is_directory(v)) return bad(a, v, "not a directory");
      csv_dir = v;
    } else if (a == "--plot") {
      // The path goes into gnuplot's script and command line in single quotes.
      if (!(v.ends_with(".svg") || v.ends_with(".png")) || v.find('\'') != std::string::npos)
        return bad(a, v, "want a file name ending in .svg or .png, without a single quote");
      plot = v;
    } else if (a == "--decisions") {
      decisions.open(v);
      if (!decisions) return bad(a, v, "cannot write it");
      opt.decisions = &decisions;
    } else {
      std::cerr << "ml_trace_sim: unknown option " << a << "\n";
      return usage();
    }
  }
  if (trace_dir.empty()) {
    std::cerr << "ml_trace_sim: --trace DIR is required\n";
    return usage();
  }
  std::string error;
  std::optional<Trace> trace = load_trace(trace_dir, &error);
  if (!trace) {
    std::cerr << "ml_trace_sim: " << error << "\n";
    return 2;
  }
  if (seeds > 1)
    std::printf("means of %d runs (seeds %llu..%llu)\n", seeds, static_cast<unsigned long long>(opt.seed),
                static_cast<unsigned long long>(opt.seed + seeds - 1));
  if (opt.gang_start) std::printf("a waiting job starts once its whole parallelism is free (--gang-start)\n");
  print_table_header(stdout);
  std::vector<Row> rows;
  for (int c : slots) {
    for (Policy p : policies) {
      std::vector<RunResult> runs;
      for (int k = 0; k < seeds; ++k) {
        Options o = opt;
        o.seed = opt.seed + k;
        runs.push_back(simulate(*trace, p, c, o));
      }
      rows.push_back(row_of(std::move(runs)));
      print_table_row(stdout, rows.back());
    }
    std::fflush(stdout);
  }
  if (opt.decisions) {
    decisions.close();
    if (!decisions) {
      std::cerr << "ml_trace_sim: cannot write the decisions in full\n";
      return 2;
    }
  }
  RunConditions how{opt.noise, opt.restart_seconds, opt.gang_start, seeds};
  if (!csv_dir.empty() && !write_csv(csv_dir, rows, how, &error)) {
    std::cerr << "ml_trace_sim: " << error << "\n";
    return 2;
  }
  if (!plot.empty() && !write_plot(plot, rows, slots, policies, how, &error)) {
    std::cerr << "ml_trace_sim: " << error << "\n";
    return 1;
  }
  return 0;
}

}  // namespace uvsched::sim

int main(int argc, char** argv) { return uvsched::sim::main_(argc, argv); }
