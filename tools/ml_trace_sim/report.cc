#include "tools/ml_trace_sim/report.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

namespace uvsched::sim {

namespace {

struct Summary {
  double mean = 0, median = 0, p99 = 0;
};

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / v.size();
  s.median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  s.p99 = v[std::min(v.size() - 1, static_cast<size_t>(std::ceil(0.99 * v.size())) - 1)];
  return s;
}

std::vector<double> jcts(const RunResult& r) {
  std::vector<double> v;
  for (const auto& j : r.jobs) v.push_back(j.jct);
  return v;
}

}  // namespace

Row row_of(std::vector<RunResult> runs) {
  Row row;
  row.policy = runs.front().policy;
  row.slots = runs.front().slots;
  for (const auto& r : runs) {
    Summary s = summarize(jcts(r));
    row.mean += s.mean / runs.size();
    row.median += s.median / runs.size();
    row.p99 += s.p99 / runs.size();
    row.makespan += r.makespan / runs.size();
    row.utilization += r.utilization / runs.size();
    row.changes += static_cast<double>(r.changes) / runs.size();
    row.protocol_errors += r.protocol_errors;
  }
  row.runs = std::move(runs);
  return row;
}

void print_table_header(std::FILE* out) {
  std::fprintf(out, "%-8s %5s %12s %12s %12s %12s %6s %8s\n", "policy", "slots", "avg JCT s", "median s", "p99 s",
               "makespan s", "util", "changes");
}

void print_table_row(std::FILE* out, const Row& r) {
  std::fprintf(out, "%-8s %5d %12.0f %12.0f %12.0f %12.0f %5.0f%% %8.0f%s\n", policy_name(r.policy), r.slots, r.mean,
               r.median, r.p99, r.makespan, 100 * r.utilization, r.changes,
               r.protocol_errors ? (" protocol errors: " + std::to_string(r.protocol_errors)).c_str() : "");
}

bool write_csv(const std::string& dir, const std::vector<Row>& rows, const RunConditions& how, std::string* error) {
  std::string sum_path = dir + "/summary.csv", per_path = dir + "/jct.csv";
  std::ofstream sum(sum_path), per(per_path);
  sum << "policy,slots,noise,restart_seconds,gang_start,avg_jct_s,median_jct_s,p99_jct_s,makespan_s,utilization,"
         "changes,runs\n";
  per << "policy,slots,job,jct_s,changes,seed\n";
  for (const auto& r : rows) {
    sum << policy_name(r.policy) << "," << r.slots << "," << how.noise << "," << how.restart_seconds << ","
        << (how.gang_start ? 1 : 0) << "," << r.mean << "," << r.median << "," << r.p99 << "," << r.makespan << ","
        << r.utilization << "," << r.changes << "," << r.runs.size() << "\n";
    for (const auto& run : r.runs) {
      for (const auto& j : run.jobs)
        per << policy_name(r.policy) << "," << r.slots << "," << j.name << "," << j.jct << "," << j.changes << ","
            << j.seed << "\n";
    }
  }
  sum.close();
  per.close();
  if (!sum || !per) {
    *error = "cannot write " + (!sum ? sum_path : per_path);
    return false;
  }
  return true;
}

bool write_plot(const std::string& path, const std::vector<Row>& rows, const std::vector<int>& slots,
                const std::vector<Policy>& policies, const RunConditions& how, std::string* error) {
  std::string data = path + ".dat";
  std::ofstream d(data);
  for (const auto& r : rows) {
    std::vector<double> v;
    for (const auto& run : r.runs) {
      for (double x : jcts(run)) v.push_back(x);
    }
    std::sort(v.begin(), v.end());
    d << "# " << policy_name(r.policy) << " " << r.slots << "\n";
    for (size_t k = 0; k < v.size(); ++k) d << v[k] / 3600 << " " << double(k + 1) / v.size() << "\n";
    d << "\n\n";
  }
  d.close();
  std::string gp = path + ".gp";
  std::ofstream g(gp);
  g << "set terminal " << (path.ends_with(".png") ? "pngcairo" : "svg") << " size " << 420 * slots.size()
    << ",380 font 'sans,11'\n";
  g << "set output '" << path << "'\nset multiplot layout 1," << slots.size() << "\n";
  g << "set logscale x\nset xlabel 'job completion time (hours)'\nset ylabel 'fraction of jobs'\n";
  g << "set key bottom right\nset grid\nset yrange [0:1]\n";
  size_t block = 0;
  for (int c : slots) {
    g << "set title '" << c << " slots" << (how.noise > 0 ? ", noise " + std::to_string(how.noise).substr(0, 4) : "")
      << (how.seeds > 1 ? ", " + std::to_string(how.seeds) + " seeds" : "") << "'\nplot ";
    for (size_t k = 0; k < policies.size(); ++k, ++block) {
      g << (k ? ", " : "") << "'" << data << "' index " << block << " with steps lw 2 title '"
        << policy_name(policies[k]) << "'";
    }
    g << "\n";
  }
  g << "unset multiplot\n";
  g.close();
  bool ok = true;
  if (!d || !g) {
    *error = "cannot write " + (!d ? data : gp);
    ok = false;
  } else if (std::system(("gnuplot '" + gp + "'").c_str()) != 0) {
    *error = "gnuplot failed to draw " + path + " (is it installed? make deps-bench)";
    ok = false;
  }
  std::remove(gp.c_str());
  std::remove(data.c_str());
  return ok;
}

}  // namespace uvsched::sim
