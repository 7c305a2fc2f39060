// ml_trace_sim: replays an ML workload (bench/ml-trace: the Pollux artifact's
// workload 6 and its measured scaling curves) through uvsched's own ML
// scheduler: MlScheduler and its policies, driven through its /train, /job
// and /finish routes exactly as KubeML's controller and train jobs drive it,
// on a ManualClock with an in-memory store and a parameter server that is
// this simulator (its /update is the job's next parallelism). No sockets.
//
// The cluster has C worker slots. A job arrives at its submit time and waits
// in line until a slot is free; it runs at min(its parallelism, free slots,
// its curve's largest replica count). An epoch takes the curve's time at that
// parallelism (times multiplicative noise, if asked, plus a restart cost when
// the parallelism changed); the job then reports it (/job), restart
// included, as KubeML's train job times the whole of invokeTrainFunctions,
// waits for its update, and runs the next epoch at what it was told, as far
// as free slots allow. A job is done after its application's epochs.
// With --gang-start a waiting job starts only once its whole parallelism is
// free, as KubeML's train job does (invokeTrainFunctions starts all its
// functions and waits for every one); growth still takes what is free.
//
// Policies: static (KubeML's static_parallelism, at the workload's initial
// replicas), kubeml (uvsched's default: KubeML's throughput rule within the
// fair share), speedup (--parallelism-policy speedup).
//
// Output: a table on stdout; with --csv-dir, summary.csv and jct.csv; with
// --plot FILE.svg (or .png), the CDF of job completion time per policy (gnuplot);
// with --decisions FILE, every /train and /job sent and what it was answered
// (tests/integration/ml_scheduler_test.cc replays them against the daemon).
// With --seeds N each policy runs N times (seeds --seed .. --seed+N-1): the
// table and summary.csv give the means, jct.csv and the plot every run's jobs.
// A schedule is chaotic (one epoch that ends a second earlier reorders who
// takes the next free worker, and the makespan of one run moves by a few
// percent), so a comparison with noise rests on several seeds, not one.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "handlers/ml/ml_scheduler.h"
#include "handlers/ops/metrics_registry.h"
#include "handlers/router.h"
#include "reactor/log.h"
#include "reactor/manual_clock.h"
#include "tests/support/fake_http.h"
#include "tests/support/fake_store.h"
#include "tests/support/recording_channel.h"

namespace uvsched::sim {
namespace {

// ---- the trace ------------------------------------------------------------------

struct TraceJob {
  std::string name;
  double submit_seconds = 0;
  std::string app;
  int initial = 1;
  int batch = 0;
};

struct Trace {
  std::vector<TraceJob> jobs;
  std::map<std::string, int> epochs;                                  // application -> epochs to finish
  std::map<std::pair<std::string, int>, std::vector<double>> curves;  // (app, batch) -> seconds at replicas 1..N
};

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "ml_trace_sim: cannot read " << path << "\n";
    std::exit(2);
  }
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

Trace load_trace(const std::string& dir) {
  Trace t;
  for (const auto& r : read_csv(dir + "/workload.csv")) {
    t.jobs.push_back({r.at(0), std::stod(r.at(1)), r.at(2), std::stoi(r.at(3)), std::stoi(r.at(4))});
  }
  for (const auto& r : read_csv(dir + "/epochs.csv")) t.epochs[r.at(0)] = std::stoi(r.at(1));
  // application,nominal_batch_size,replicas,epoch_seconds,sim_epoch_seconds,...: the
  // artifact's epochs (sim_epoch_seconds), whose count is epochs_to_finish.
  for (const auto& r : read_csv(dir + "/scaling_by_batch_size.csv")) {
    auto& curve = t.curves[{r.at(0), std::stoi(r.at(1))}];
    size_t replicas = std::stoul(r.at(2));
    if (curve.size() < replicas) curve.resize(replicas, 0);
    curve[replicas - 1] = std::stod(r.at(4));
  }
  for (const auto& j : t.jobs) {
    if (!t.curves.count({j.app, j.batch}) || !t.epochs.count(j.app)) {
      std::cerr << "ml_trace_sim: no curve for " << j.app << " at batch " << j.batch << "\n";
      std::exit(2);
    }
  }
  return t;
}

// ---- one run: a policy on a cluster of `slots` ------------------------------------

enum class Policy { kStatic, kKubeml, kSpeedup };
const char* policy_name(Policy p) {
  return p == Policy::kStatic ? "static" : p == Policy::kKubeml ? "kubeml" : "speedup";
}

struct Options {
  double noise = 0;            // sigma of a log-normal factor on each epoch's time
  double restart_seconds = 0;  // charged to an epoch whose parallelism changed (and to the first)
  bool gang_start = false;     // a waiting job starts once its whole parallelism is free
  uint64_t seed = 1;
  size_t max_jobs = 0;  // 0: the whole workload
  // --decisions: every /train and /job the run sent, with the parallelism the
  // scheduler answered, one JSON object a line (the same reports can then be
  // sent to the real daemon and its answers compared).
  std::ostream* decisions = nullptr;
};

struct JobResult {
  std::string name;
  uint64_t seed = 0;
  double jct = 0;  // finish - submit, seconds
  int changes = 0;
};

struct RunResult {
  Policy policy;
  int slots = 0;
  std::vector<JobResult> jobs;
  double makespan = 0;     // first submit to last finish
  double utilization = 0;  // slot-seconds busy / (slots x makespan)
  int changes = 0;
  int protocol_errors = 0;  // answers that were not what KubeML's train job expects
};

// The "parallelism" a /start or /update body names (KubeML's TrainTask and
// JobState both carry it), or `otherwise`.
int parallelism_in(const std::string& body, int otherwise) {
  size_t at = body.find("\"parallelism\":");
  return at == std::string::npos ? otherwise : std::atoi(body.c_str() + at + 14);
}

std::string body_of(const std::string& answer) {
  size_t at = answer.find("\r\n\r\n");
  return at == std::string::npos ? "" : answer.substr(at + 4);
}

class Run {
 public:
  Run(const Trace& trace, Policy policy, int slots, const Options& opt)
      : trace_(trace), policy_(policy), slots_(slots), opt_(opt), rng_(opt.seed) {
    log_configure(LogLevel::kOff, LogFormat::kText);
    MlScheduler::Settings s;
    s.ps_url = "http://ps";
    s.max_parallelism = slots;
    s.metrics_poll_interval_ms = 0;
    s.recompute_interval_ms = 0;
    s.decision_store_deadline_ms = 60'000;
    s.policy = policy == Policy::kSpeedup ? ParallelismPolicyKind::kSpeedup : ParallelismPolicyKind::kKubeml;
    ml_ = std::make_unique<MlScheduler>(clock_, store_, ps_, metrics_, s, [] { return true; });
    // Static jobs run at their own parallelism: no fair share clamps them.
    if (policy != Policy::kStatic) ml_->set_capacity([this]() -> std::optional<long> { return slots_; });
    ml_->add_routes(router_);
    ml_->start();
    store_.run();
  }
  ~Run() { ml_->stop(); }

  RunResult go() {
    size_t n = opt_.max_jobs ? std::min(opt_.max_jobs, trace_.jobs.size()) : trace_.jobs.size();
    for (size_t i = 0; i < n; ++i) at(trace_.jobs[i].submit_seconds, Event::kArrive, i);
    jobs_.resize(n);
    while (!events_.empty()) {
      Event e = events_.top();
      events_.pop();
      advance_to(e.at);
      if (e.kind == Event::kArrive)
        arrive(e.job);
      else
        epoch_done(e.job);
    }
    RunResult r;
    r.policy = policy_;
    r.slots = slots_;
    double first = 1e300, last = 0;
    for (size_t i = 0; i < n; ++i) {
      const Job& j = jobs_[i];
      r.jobs.push_back({trace_.jobs[i].name, opt_.seed, j.finish - trace_.jobs[i].submit_seconds, j.changes});
      r.changes += j.changes;
      first = std::min(first, trace_.jobs[i].submit_seconds);
      last = std::max(last, j.finish);
    }
    r.makespan = last - first;
    if (std::getenv("ML_TRACE_SIM_BY_APP")) {  // where the time goes: waiting and running, per application
      std::map<std::string, std::pair<double, double>> by_app;
      std::map<std::string, int> count;
      for (size_t i = 0; i < n; ++i) {
        auto& [w, run] = by_app[trace_.jobs[i].app];
        w += jobs_[i].admitted - trace_.jobs[i].submit_seconds;
        run += jobs_[i].finish - jobs_[i].admitted;
        count[trace_.jobs[i].app]++;
      }
      for (auto& [app, wr] : by_app)
        std::fprintf(stderr, "  %s %s n=%d wait=%.0f run=%.0f\n", policy_name(policy_), app.c_str(), count[app],
                     wr.first / count[app], wr.second / count[app]);
    }
    r.utilization = r.makespan > 0 ? busy_slot_seconds_ / (slots_ * r.makespan) : 0;
    r.protocol_errors = protocol_errors_;
    return r;
  }

 private:
  struct Event {
    enum Kind { kArrive, kEpoch } kind;
    double at;
    size_t job;
    uint64_t seq;
    bool operator<(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }  // earliest first
  };
  struct Job {
    std::string id;
    int p = 0;  // running at; 0: not started
    int epochs_done = 0;
    double epoch_started = 0;
    double epoch_seconds = 0;  // the running epoch's time, restart included (what it reports)
    double finish = 0;
    double admitted = 0;
    int told = 1;  // the parallelism /start named
    int changes = 0;
  };

  void at(double t, Event::Kind k, size_t job) { events_.push({k, t, job, seq_++}); }

  void advance_to(double t) {
    busy_slot_seconds_ += used_ * (t - now_);
    now_ = t;
    uint64_t target = static_cast<uint64_t>(std::llround(t * 1000));
    if (target > clock_ms_) {
      clock_.advance(target - clock_ms_);
      clock_ms_ = target;
    }
  }
  void turn() {
    clock_.advance(0);
    store_.run();
  }

  int curve_max(size_t i) const {
    const auto& c = trace_.curves.at({trace_.jobs[i].app, trace_.jobs[i].batch});
    return static_cast<int>(c.size());
  }
  double curve_seconds(size_t i, int p) const {
    const auto& c = trace_.curves.at({trace_.jobs[i].app, trace_.jobs[i].batch});
    return c.at(std::clamp(p, 1, static_cast<int>(c.size())) - 1);
  }
  double noisy(double seconds) {
    if (opt_.noise <= 0) return seconds;
    std::normal_distribution<double> z(0, opt_.noise);
    return seconds * std::exp(z(rng_) - opt_.noise * opt_.noise / 2);  // mean 1
  }

  std::string train_body(size_t i) const {
    const TraceJob& t = trace_.jobs[i];
    return R"({"model_type":")" + t.app + R"(","batch_size":)" + std::to_string(t.batch) + R"(,"epochs":)" +
           std::to_string(trace_.epochs.at(t.app)) + R"(,"dataset":")" + t.app + R"(","lr":0.01,"function_name":")" +
           t.app + R"(","options":{"default_parallelism":)" + std::to_string(t.initial) + R"(,"static_parallelism":)" +
           (policy_ == Policy::kStatic ? "true" : "false") + R"(,"validate_every":0,"k":-1,"goal_accuracy":100}})";
  }

  void arrive(size_t i) {
    auto ex = test::exchange(router_, "POST", "/train", train_body(i));
    turn();
    jobs_[i].id = body_of(ex->out);
    if (test::status_of(ex->out) != 200 || jobs_[i].id.empty()) {
      ++protocol_errors_;
      std::cerr << "ml_trace_sim: /train answered " << ex->out << "\n";
      std::exit(3);
    }
    // The PS starts it at the parallelism /start names: the scheduler's choice.
    jobs_[i].told = trace_.jobs[i].initial;
    if (auto* start = ps_.next("POST /start")) {
      jobs_[i].told = parallelism_in(start->request.body, jobs_[i].told);
      ps_.answer(start, 200);
    } else {
      ++protocol_errors_;
    }
    if (opt_.decisions) {
      decision_line(i) << R"(,"train":)" << train_body(i) << R"(,"start":)" << jobs_[i].told << "}\n";
    }
    line_.push_back(i);
    admit();
  }

  // The start of a --decisions line: which run, which job.
  std::ostream& decision_line(size_t i) {
    return *opt_.decisions << R"({"policy":")" << policy_name(policy_) << R"(","slots":)" << slots_ << R"(,"seed":)"
                           << opt_.seed << R"(,"job":")" << trace_.jobs[i].name << R"(","id":")" << jobs_[i].id << '"';
  }

  // Waiting jobs start in arrival order: a static job once its whole
  // parallelism is free (it runs at nothing else), the others once a slot is
  // (with --gang-start, once their whole parallelism is).
  void admit() {
    while (!line_.empty() && used_ < slots_) {
      size_t i = line_.front();
      int want = std::min({std::max(jobs_[i].told, 1), curve_max(i), slots_});
      if ((policy_ == Policy::kStatic || opt_.gang_start) && slots_ - used_ < want) return;
      line_.pop_front();
      jobs_[i].admitted = now_;
      start_epoch(i, std::max(std::min(want, slots_ - used_), 1), /*changed=*/true);
    }
  }

  void start_epoch(size_t i, int p, bool changed) {
    Job& j = jobs_[i];
    used_ += p - j.p;
    j.p = p;
    j.epoch_started = now_;
    j.epoch_seconds = noisy(curve_seconds(i, p)) + (changed ? opt_.restart_seconds : 0);
    at(now_ + j.epoch_seconds, Event::kEpoch, i);
  }

  void epoch_done(size_t i) {
    Job& j = jobs_[i];
    j.epochs_done += 1;
    if (j.epochs_done >= trace_.epochs.at(trace_.jobs[i].app)) {
      j.finish = now_;
      used_ -= j.p;
      j.p = 0;
      test::route(router_, "DELETE", "/finish/" + j.id);
      store_.run();
      admit();
      return;
    }
    // The train job reports its epoch and waits for its update (KubeML's TrainJob).
    std::string report = R"({"request":)" + train_body(i) + R"(,"job":{"id":")" + j.id +
                         R"(","state":{"parallelism":)" + std::to_string(j.p) + R"(,"elapsed_time":)" +
                         std::to_string(j.epoch_seconds) + "}}}";
    auto ex = test::exchange(router_, "POST", "/job", report);
    turn();
    test::FakeHttp::Call* update = ps_.next("POST /update/" + j.id);
    int told = j.p;
    if (!update || test::status_of(ex->out) != 200) {
      ++protocol_errors_;  // a train job would wait forever: counted, and it keeps its parallelism
    } else {
      told = parallelism_in(update->request.body, j.p);
      ps_.answer(update, 200);
    }
    if (opt_.decisions) {
      decision_line(i) << R"(,"epoch":)" << j.epochs_done << R"(,"report":)" << report << R"(,"told":)" << told
                       << "}\n";
    }
    // Slots a job gives back go to the line first; growth takes only free
    // slots (there are free ones only when nobody waits).
    int next = std::clamp(told, 1, std::min(curve_max(i), j.p + (slots_ - used_)));
    bool changed = next != j.p;
    if (changed) j.changes += 1;
    if (next < j.p) {
      used_ -= j.p - next;
      j.p = next;
      admit();
    }
    start_epoch(i, next, changed);
  }

  const Trace& trace_;
  Policy policy_;
  int slots_;
  Options opt_;
  std::mt19937_64 rng_;
  ManualClock clock_{0, 1'767'225'600'000};
  uint64_t clock_ms_ = 0;
  test::FakeStore store_;
  test::FakeHttp ps_;
  MetricsRegistry metrics_;
  Router router_;
  std::unique_ptr<MlScheduler> ml_;
  std::priority_queue<Event> events_;
  uint64_t seq_ = 0;
  std::vector<Job> jobs_;
  std::deque<size_t> line_;
  int used_ = 0;
  double now_ = 0;
  double busy_slot_seconds_ = 0;
  int protocol_errors_ = 0;
};

// ---- reporting -----------------------------------------------------------------------

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

// One policy at one size over every seed: the means of each run's figures.
struct Row {
  Policy policy;
  int slots = 0;
  std::vector<RunResult> runs;
  double mean = 0, median = 0, p99 = 0, makespan = 0, utilization = 0, changes = 0;
  int protocol_errors = 0;
};

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

}  // namespace

RunResult simulate(const Trace& trace, Policy policy, int slots, const Options& opt) {
  Run run(trace, policy, slots, opt);
  return run.go();
}

int usage() {
  std::cerr << "usage: ml_trace_sim --trace DIR [--slots 32,64,128] [--policies static,kubeml,speedup]\n"
               "                    [--noise SIGMA] [--restart-seconds S] [--gang-start] [--seed N] [--seeds N]\n"
               "                    [--jobs N] [--csv-dir DIR] [--plot FILE.svg] [--decisions FILE.jsonl]\n";
  return 2;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int main_(int argc, char** argv) {
  std::string trace_dir, csv_dir, plot;
  std::vector<int> slots = {32, 64, 128};
  std::vector<Policy> policies = {Policy::kStatic, Policy::kKubeml, Policy::kSpeedup};
  Options opt;
  int seeds = 1;
  std::ofstream decisions;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) std::exit(usage());
      return argv[++i];
    };
    if (a == "--trace") {
      trace_dir = value();
    } else if (a == "--slots") {
      slots.clear();
      for (const auto& s : split(value())) slots.push_back(std::stoi(s));
    } else if (a == "--policies") {
      policies.clear();
      for (const auto& p : split(value())) {
        if (p == "static")
          policies.push_back(Policy::kStatic);
        else if (p == "kubeml")
          policies.push_back(Policy::kKubeml);
        else if (p == "speedup")
          policies.push_back(Policy::kSpeedup);
        else
          return usage();
      }
    } else if (a == "--noise") {
      opt.noise = std::stod(value());
    } else if (a == "--restart-seconds") {
      opt.restart_seconds = std::stod(value());
    } else if (a == "--gang-start") {
      opt.gang_start = true;
    } else if (a == "--seed") {
      opt.seed = std::stoull(value());
    } else if (a == "--seeds") {
      seeds = std::stoi(value());
      if (seeds < 1) return usage();
    } else if (a == "--jobs") {
      opt.max_jobs = std::stoul(value());
    } else if (a == "--csv-dir") {
      csv_dir = value();
    } else if (a == "--plot") {
      plot = value();
    } else if (a == "--decisions") {
      std::string path = value();
      decisions.open(path);
      if (!decisions) {
        std::cerr << "ml_trace_sim: cannot write " << path << "\n";
        return 2;
      }
      opt.decisions = &decisions;
    } else {
      return usage();
    }
  }
  if (trace_dir.empty()) return usage();
  Trace trace = load_trace(trace_dir);
  std::vector<Row> results;
  if (seeds > 1)
    std::printf("means of %d runs (seeds %llu..%llu)\n", seeds, static_cast<unsigned long long>(opt.seed),
                static_cast<unsigned long long>(opt.seed + seeds - 1));
  if (opt.gang_start) std::printf("a waiting job starts once its whole parallelism is free (--gang-start)\n");
  std::printf("%-8s %5s %12s %12s %12s %12s %6s %8s\n", "policy", "slots", "avg JCT s", "median s", "p99 s",
              "makespan s", "util", "changes");
  for (int c : slots) {
    for (Policy p : policies) {
      std::vector<RunResult> runs;
      for (int k = 0; k < seeds; ++k) {
        Options o = opt;
        o.seed = opt.seed + k;
        runs.push_back(simulate(trace, p, c, o));
      }
      Row r = row_of(std::move(runs));
      std::printf("%-8s %5d %12.0f %12.0f %12.0f %12.0f %5.0f%% %8.0f%s\n", policy_name(p), c, r.mean, r.median, r.p99,
                  r.makespan, 100 * r.utilization, r.changes,
                  r.protocol_errors ? (" protocol errors: " + std::to_string(r.protocol_errors)).c_str() : "");
      results.push_back(std::move(r));
    }
    std::fflush(stdout);
  }
  if (!csv_dir.empty()) {
    std::ofstream sum(csv_dir + "/summary.csv"), per(csv_dir + "/jct.csv");
    sum << "policy,slots,noise,restart_seconds,gang_start,avg_jct_s,median_jct_s,p99_jct_s,makespan_s,utilization,"
           "changes,runs\n";
    per << "policy,slots,job,jct_s,changes,seed\n";
    for (const auto& r : results) {
      sum << policy_name(r.policy) << "," << r.slots << "," << opt.noise << "," << opt.restart_seconds << ","
          << (opt.gang_start ? 1 : 0) << "," << r.mean << "," << r.median << "," << r.p99 << "," << r.makespan << ","
          << r.utilization << "," << r.changes << "," << r.runs.size() << "\n";
      for (const auto& run : r.runs) {
        for (const auto& j : run.jobs)
          per << policy_name(r.policy) << "," << r.slots << "," << j.name << "," << j.jct << "," << j.changes << ","
              << j.seed << "\n";
      }
    }
  }
  if (!plot.empty()) {
    // The CDF of JCT per policy, one panel per cluster size, drawn by gnuplot.
    std::string data = plot + ".dat";
    std::ofstream d(data);
    std::vector<std::string> blocks;
    for (const auto& r : results) {
      std::vector<double> v;
      for (const auto& run : r.runs) {
        for (double x : jcts(run)) v.push_back(x);
      }
      std::sort(v.begin(), v.end());
      d << "# " << policy_name(r.policy) << " " << r.slots << "\n";
      for (size_t k = 0; k < v.size(); ++k) d << v[k] / 3600 << " " << double(k + 1) / v.size() << "\n";
      d << "\n\n";
      blocks.push_back(std::string(policy_name(r.policy)) + " " + std::to_string(r.slots));
    }
    d.close();
    std::string gp = plot + ".gp";
    std::ofstream g(gp);
    bool png = plot.size() > 4 && plot.compare(plot.size() - 4, 4, ".png") == 0;
    g << "set terminal " << (png ? "pngcairo" : "svg") << " size " << 420 * slots.size() << ",380 font 'sans,11'\n";
    g << "set output '" << plot << "'\nset multiplot layout 1," << slots.size() << "\n";
    g << "set logscale x\nset xlabel 'job completion time (hours)'\nset ylabel 'fraction of jobs'\n";
    g << "set key bottom right\nset grid\nset yrange [0:1]\n";
    size_t block = 0;
    for (int c : slots) {
      g << "set title '" << c << " slots" << (opt.noise > 0 ? ", noise " + std::to_string(opt.noise).substr(0, 4) : "")
        << (seeds > 1 ? ", " + std::to_string(seeds) + " seeds" : "") << "'\nplot ";
      for (size_t k = 0; k < policies.size(); ++k, ++block) {
        g << (k ? ", " : "") << "'" << data << "' index " << block << " with steps lw 2 title '"
          << policy_name(policies[k]) << "'";
      }
      g << "\n";
    }
    g << "unset multiplot\n";
    g.close();
    std::string cmd = "gnuplot '" + gp + "'";
    if (std::system(cmd.c_str()) != 0) {
      std::cerr << "ml_trace_sim: gnuplot failed (is it installed? make deps-bench)\n";
      return 1;
    }
    std::remove(gp.c_str());
    std::remove(data.c_str());
  }
  return 0;
}

}  // namespace uvsched::sim

int main(int argc, char** argv) { return uvsched::sim::main_(argc, argv); }
