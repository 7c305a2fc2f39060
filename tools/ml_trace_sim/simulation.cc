#include "tools/ml_trace_sim/simulation.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <queue>
#include <random>

#include "handlers/ml/ml_scheduler.h"
#include "handlers/ops/metrics_registry.h"
#include "handlers/router.h"
#include "reactor/log.h"
#include "reactor/manual_clock.h"
#include "tests/support/fake_http.h"
#include "tests/support/fake_store.h"
#include "tests/support/recording_channel.h"

namespace uvsched::sim {

const char* policy_name(Policy p) {
  return p == Policy::kStatic ? "static" : p == Policy::kKubeml ? "kubeml" : "speedup";
}

std::optional<Policy> policy_named(std::string_view name) {
  for (Policy p : {Policy::kStatic, Policy::kKubeml, Policy::kSpeedup}) {
    if (name == policy_name(p)) return p;
  }
  return std::nullopt;
}

namespace {

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
    s.ps_check_interval_ms = 0;  // this run's jobs end with their /finish: no PS to ask
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
    const auto& c = trace_.curve(trace_.jobs[i]);
    return static_cast<int>(c.size());
  }
  double curve_seconds(size_t i, int p) const {
    const auto& c = trace_.curve(trace_.jobs[i]);
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

}  // namespace

RunResult simulate(const Trace& trace, Policy policy, int slots, const Options& opt) {
  assert(slots >= 1 && !trace.jobs.empty());
  Run run(trace, policy, slots, opt);
  return run.go();
}

}  // namespace uvsched::sim
