// KubeML's parameter server (PS) and its train jobs, as their sources show them
// behave (ml/pkg/ps/api.go, ml/pkg/ps/job_pod.go, ml/pkg/train/job.go,
// ml/pkg/scheduler/client/client.go, standalone deployment), in one process on
// the reactor, so tests and benchmarks can drive uvsched against the real
// protocol instead of a PS that answers everything at once:
//
//  - POST /start blocks while the job's pod is made and the task handed to it
//    (--start-delay); a second /start for a job the PS holds fails as the real
//    one does (the pod job-<id> already exists): the job is dropped from the
//    index and the answer is 500.
//  - POST /update/{id} is handed to the job over an unbuffered channel: the
//    call blocks until the job reads, which it does only right after its own
//    POST /job. An update for a job not in the index is 400.
//  - Its HTTP calls follow redirects as Go's default client does (307/308:
//    the same method and body again), so a standby uvsched can hand them on.
//  - A train job runs its epochs (time from --epoch-ms and the parallelism),
//    posts the TrainTask to the scheduler's /job after each epoch but the last
//    (unless static), ignores the answer's status, and waits for its update
//    with no time-out; a transport error makes it go on without one.
//  - When done it tells the PS (POST /finish/{id}), which tells the scheduler
//    (DELETE /finish/{id}) and then drops the job from its index.
//  - GET /tasks lists the held TrainTasks (JSON `null` when there are none, as
//    Go marshals a nil slice); DELETE /stop/{id}; POST /metrics/{id}.
//  - The Prometheus gauges are on their own listener (--metrics-listen, GET
//    /metrics); the API port has no /metrics.
//
// Connections as Go's http.DefaultTransport makes them (net/http's
// transport.go, readLoop), which KubeML's clients use (&http.Client{}):
// an answer with no body (Content-Length: 0, what KubeML's scheduler and
// uvsched answer /job and /finish with) puts the connection back in the pool
// at once, and the process's next call reuses it; an answer with a body ties
// the connection to that body, which KubeML's scheduler client never reads
// or closes, so it is never reused and stays open until the server closes it.
// Each train job is a process of its own (the standalone deployment) with a
// pool of its own, and so is the PS (its /finish calls). A connection the
// server closed while idle is replaced by a new one, so with epochs longer
// than the server's idle time-out every call opens a connection. (One
// difference: a call that meets a pooled connection the server has just
// closed is sent again on a new one, as Go does only when none of it was
// written; a POST /job Go had written fails, and the job goes on.) Counted:
// connections_held.
// --connections pooled shares one pool among every call (bench/ml.sh, as its
// figures were measured); --connections close opens one for each call.
//
// It counts what a real job would suffer from, as violations: a second /start,
// an update no job asked for (it would be taken as a later epoch's answer), a
// job that waited past --wait-limit for its update. GET /emulator/stats tells
// the counts; POST /emulator/forget empties the index as a PS restart does.
// With --jobs N it also submits N TrainRequests to the scheduler's /train, as
// KubeML's controller does.
//   kubeml_emulator --scheduler http://127.0.0.1:10200 --jobs 3 --epochs 10
#include <uv.h>

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "reactor/http_client.h"
#include "reactor/http_server.h"
#include "reactor/json_writer.h"
#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "reactor/url.h"
#include "tools/cli_numbers.h"

namespace {

using uvsched::ClientRequest;
using uvsched::ClientResponse;
using uvsched::HttpRequest;
using uvsched::HttpResponse;
using uvsched::JsonWriter;
using uvsched::Responder;
using uvsched::cli::parse_double;
using uvsched::cli::parse_int;

constexpr const char* kUsage =
    "usage: kubeml_emulator [flags]\n"
    "  --listen HOST:PORT          PS API (default 127.0.0.1:10300; port 0 picks one)\n"
    "  --metrics-listen HOST:PORT  PS Prometheus listener (default 127.0.0.1:8080)\n"
    "  --scheduler URL             uvsched (default http://127.0.0.1:10200)\n"
    "  --start-delay S             how long /start blocks (default 20)\n"
    "  --jobs N                    TrainRequests to submit to /train (default 0)\n"
    "  --epochs E                  epochs per submitted job (default 10)\n"
    "  --parallelism P             their default_parallelism (default 2)\n"
    "  --static 0|1                static_parallelism (default 0)\n"
    "  --epoch-ms MS               epoch time at parallelism 1 (default 200)\n"
    "  --serial-fraction F[,F...]  the part of an epoch that does not parallelise (default 0.3);\n"
    "                              with several (up to 4), submitted job i is of model i mod n\n"
    "                              (resnet34, lenet, vgg16, densenet) and runs at its fraction\n"
    "  --wait-limit S              a wait for an update longer than this is a violation (default 30)\n"
    "  --exit-when-done 0|1        exit once every submitted job finished: 0 if no violation (default 0)\n"
    "  --quiet 0|1                 no per-job log lines (default 0)\n"
    "  --connections go|pooled|close  the calls' connections: as Go's client, a pool per process (default);\n"
    "                              one pool for all; or one connection per call\n";

struct Options {
  std::string listen = "127.0.0.1:10300";
  std::string metrics_listen = "127.0.0.1:8080";
  std::string scheduler = "http://127.0.0.1:10200";
  double start_delay_s = 20;
  int jobs = 0;
  int epochs = 10;
  int parallelism = 2;
  bool is_static = false;
  double epoch_ms = 200;
  // One per model (kModels), in order: a job of model k runs at the k-th.
  std::vector<double> serial_fractions = {0.3};
  double wait_limit_s = 30;
  bool exit_when_done = false;
  bool quiet = false;
  enum class Connections { kGo, kPooled, kClose } connections = Connections::kGo;
};

struct Stats {
  uint64_t starts = 0;
  uint64_t duplicate_starts = 0;  // violation
  uint64_t updates = 0;
  uint64_t unsolicited_updates = 0;     // violation
  uint64_t updates_unknown_job = 0;     // 400: the PS does not hold the job
  uint64_t updates_before_running = 0;  // violation: the job's pod is not there yet
  uint64_t late_waits = 0;              // violation
  uint64_t job_posts = 0;
  uint64_t job_post_errors = 0;   // transport errors: the job went on without an update
  uint64_t job_post_non_2xx = 0;  // ignored by the job, as KubeML's client does
  uint64_t epochs = 0;
  uint64_t train_submitted = 0;
  uint64_t finished = 0;
  uint64_t finish_errors = 0;
  uint64_t tasks_listed = 0;
  uint64_t connections_held = 0;  // by an answer's body (--connections go)
  std::vector<double> answer_ms;  // from a job's POST /job to its update
  // Per model (with several serial fractions): the epochs its jobs ran after
  // their third (the policy's first reports to learn from) and before any job
  // was done, while every job shared the cluster; and the workers those
  // epochs ran at, summed.
  std::vector<uint64_t> shared_epochs, shared_worker_epochs;
  bool a_job_done = false;
  uint64_t first_post_ms = 0;
  uint64_t last_update_ms = 0;

  uint64_t violations() const { return duplicate_starts + unsolicited_updates + updates_before_running + late_waits; }
};

struct Update {
  int parallelism = 1;
  double elapsed_time = 0;
  Responder responder;  // the PS's /update call, answered when the job takes it
};

// The models jobs of the n serial fractions are: distinct TrainRequests, so
// that a scheduler can tell them apart, as it would tell real models apart.
constexpr const char* kModels[] = {"resnet34", "lenet", "vgg16", "densenet"};
constexpr size_t kMaxModels = sizeof kModels / sizeof kModels[0];

// One process's http.DefaultTransport: the pool its calls reuse, and the
// pools it stopped using because an answer's body held their connection
// (open until the server closes it). A held pool holds its other idle
// connections too; a train job makes one call at a time, so it has no other.
struct GoTransport {
  std::unique_ptr<uvsched::HttpClient> pool;
  std::vector<std::unique_ptr<uvsched::HttpClient>> held;
};

struct TrainJob {
  std::string id;
  size_t model = 0;          // kModels' index: which serial fraction it runs at
  std::string request_json;  // the TrainRequest, echoed in every /job post
  int epochs = 1;
  int epoch = 0;
  int parallelism = 1;
  double elapsed_time = 0;
  bool is_static = false;
  bool stop_requested = false;
  enum class Phase { kTraining, kPosting, kWaiting, kDone } phase = Phase::kTraining;
  uint64_t posted_at_ms = 0;
  uint64_t asked = 0;          // /job posts
  uint64_t taken = 0;          // updates read from the channel
  std::deque<Update> channel;  // senders blocked on the unbuffered channel
  std::unique_ptr<uvsched::Timer> epoch_timer;
  std::unique_ptr<uvsched::Timer> wait_timer;
  GoTransport process;  // its pod's, for its /job calls
  std::map<std::string, double> gauges;
};

struct HeldTask {
  std::string task_json;
  bool running = false;  // the job's pod runs and has its task
  std::unique_ptr<uvsched::Timer> start_timer;
};

// "F[,F...]": up to kMaxModels fractions in [0, 1].
bool parse_fractions(const std::string& v, std::vector<double>* out) {
  std::vector<double> fs;
  size_t from = 0;
  for (;;) {
    size_t comma = v.find(',', from);
    double f = 0;
    if (!parse_double(v.substr(from, comma - from), 0, &f) || f > 1) return false;
    fs.push_back(f);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  if (fs.size() > kMaxModels) return false;
  *out = std::move(fs);
  return true;
}

bool parse_flag(const std::string& v, bool* out) {
  if (v != "0" && v != "1") return false;
  *out = v == "1";
  return true;
}

HttpResponse status_only(int status, std::string body = "") {
  HttpResponse r;
  r.status = status;
  if (!body.empty()) r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

class Emulator final : public uvsched::RequestHandler {
 public:
  Emulator(uv_loop_t* loop, Options o)
      : o_(std::move(o)),
        loop_(loop),
        clock_(loop),
        client_(loop, clock_, uvsched::ClientOptions{.max_connections_per_origin = 1024}),
        api_(loop, clock_, uvsched::ServerLimits{}, *this),
        metrics_handler_(*this),
        metrics_(loop, clock_, uvsched::ServerLimits{}, metrics_handler_) {
    while (!o_.scheduler.empty() && o_.scheduler.back() == '/') o_.scheduler.pop_back();
    stats_.shared_epochs.assign(o_.serial_fractions.size(), 0);
    stats_.shared_worker_epochs.assign(o_.serial_fractions.size(), 0);
    ps_process_.pool = new_go_pool();
  }

  int run() {
    auto api = uvsched::parse_host_port(o_.listen);
    auto met = uvsched::parse_host_port(o_.metrics_listen);
    if (!api || !met) return fail("bad --listen or --metrics-listen");
    if (int rc = api_.listen(api->first, api->second)) return fail(uv_strerror(rc));
    if (int rc = metrics_.listen(met->first, met->second)) return fail(uv_strerror(rc));
    // Tests read the ports from this line.
    fprintf(stderr, "kubeml_emulator listening ps=%u metrics=%u\n", api_.port(), metrics_.port());
    for (int i = 0; i < o_.jobs; ++i) submit(i);
    return 0;
  }

  void handle(HttpRequest& req, Responder res) override {
    std::string path(req.path());
    std::string_view m = req.method;
    if (m == "POST" && path == "/start") return start(req, std::move(res));
    if (m == "POST" && path.rfind("/update/", 0) == 0) return update(path.substr(8), req, std::move(res));
    if (m == "GET" && path == "/tasks") return res.send(tasks());
    if (m == "POST" && path.rfind("/finish/", 0) == 0) return res.send(finish(path.substr(8)));
    if (m == "DELETE" && path.rfind("/stop/", 0) == 0) return res.send(stop(path.substr(6)));
    if (m == "POST" && path.rfind("/metrics/", 0) == 0) return res.send(status_only(200));
    if (m == "GET" && path == "/health") return res.send(status_only(200));
    if (m == "GET" && path == "/emulator/stats") return res.send(stats_response());
    if (m == "POST" && path == "/emulator/forget") {
      forget();
      return res.send(status_only(200));
    }
    res.send(status_only(404, "404 page not found\n"));  // gorilla/mux's answer
  }

 private:
  struct MetricsHandler final : uvsched::RequestHandler {
    explicit MetricsHandler(Emulator& e) : e(e) {}
    void handle(HttpRequest& req, Responder res) override {
      if (req.method == "GET" && req.path() == "/metrics") return res.send(e.prometheus());
      res.send(status_only(404, "404 page not found\n"));
    }
    Emulator& e;
  };

  int fail(const std::string& why) {
    fprintf(stderr, "kubeml_emulator: %s\n", why.c_str());
    return 1;
  }

  void say(const std::string& line) {
    if (!o_.quiet) fprintf(stderr, "kubeml_emulator: %s\n", line.c_str());
  }

  // Go's default client: it follows up to 10 redirects, a 307 or 308 with
  // the same method and body (a standby uvsched hands requests to its leader
  // so), after reading a little of the redirect's body and closing it, which
  // frees its connection. `process` is the caller's transport (null: the
  // controller's, which reads what it is answered).
  void go_request(GoTransport* process, ClientRequest req, uvsched::ClientCallback cb, int hops = 0) {
    using Connections = Options::Connections;
    if (o_.connections != Connections::kGo) process = nullptr;
    if (o_.connections == Connections::kClose && hops == 0) req.headers.push_back({"Connection", "close"});
    uvsched::HttpClient& client = process != nullptr ? *process->pool : client_;
    ClientRequest again = req;
    client.request(std::move(req), [this, process, again = std::move(again), cb = std::move(cb),
                                    hops](ClientResponse&& r) mutable {
      const std::string* location = r.header("Location");
      bool redirect = r.error == 0 && (r.status == 307 || r.status == 308) && location && !location->empty();
      if (redirect && hops < 10) {
        again.url = location->rfind("http", 0) == 0 ? *location : o_.scheduler + *location;
        return go_request(process, std::move(again), std::move(cb), hops + 1);
      }
      if (process != nullptr && r.error == 0 && !r.body.empty()) hold_connection(*process);
      cb(std::move(r));
    });
  }

  // The answer's body is never closed: its connection stays out of the pool.
  void hold_connection(GoTransport& process) {
    ++stats_.connections_held;
    process.held.push_back(std::move(process.pool));
    process.pool = new_go_pool();
  }

  // Go's DefaultTransport: no cap on connections to a host, and an idle one
  // is closed after 90 s (IdleConnTimeout), after uvsched's 60 by default.
  std::unique_ptr<uvsched::HttpClient> new_go_pool() {
    return std::make_unique<uvsched::HttpClient>(
        loop_, clock_, uvsched::ClientOptions{.max_connections_per_origin = 1024, .idle_timeout_ms = 90'000});
  }

  // ---- the controller's half: TrainRequests to the scheduler ----

  void submit(int i) {
    JsonWriter w;
    w.begin_object();
    size_t model = static_cast<size_t>(i) % o_.serial_fractions.size();
    // With one fraction every job is KubeML's resnet34 example, as before.
    std::string function = model == 0 ? "resnet" : kModels[model];
    w.key("model_type")
        .value(kModels[model])
        .key("batch_size")
        .value(int64_t{128})
        .key("epochs")
        .value(int64_t{o_.epochs});
    w.key("dataset").value("cifar10").key("lr").value(0.01).key("function_name").value(function);
    w.key("options").begin_object();
    w.key("default_parallelism").value(int64_t{o_.parallelism}).key("static_parallelism").value(o_.is_static);
    w.key("validate_every").value(int64_t{0}).key("k").value(int64_t{10}).key("goal_accuracy").value(100.0);
    w.end_object().end_object();
    ClientRequest req;
    req.method = "POST";
    req.url = o_.scheduler + "/train";
    req.headers = {{"Content-Type", "application/json"}};
    req.body = w.take();
    req.timeout_ms = 0;  // Go's default client has no time-out
    go_request(nullptr, std::move(req), [this, i](ClientResponse&& r) {
      if (!r.ok()) {
        // Not the controller's behaviour (it passes the error to the user), but
        // a test starts the emulator before the scheduler is ready.
        auto t = std::shared_ptr<uvsched::Timer>(clock_.new_timer());
        t->start(200, [this, i, t] { submit(i); });  // the timer lives until it has fired
        return;
      }
      ++stats_.train_submitted;
    });
  }

  // ---- the PS API ----

  void start(HttpRequest& req, Responder res) {
    simdjson::dom::element doc;
    std::string_view id;
    if (parser_.parse(req.body).get(doc) || doc["job"]["id"].get(id) || id.empty()) {
      return res.send(status_only(400));
    }
    std::string job_id(id);
    ++stats_.starts;
    if (index_.count(job_id)) {
      // createJobResources fails: the pod job-<id> already exists. The PS drops
      // the job from its index and answers 500.
      ++stats_.duplicate_starts;
      say("violation: second /start for job " + job_id);
      index_.erase(job_id);
      return res.send(status_only(500, "unable to create resources for job\n"));
    }
    HeldTask& held = index_[job_id];
    held.task_json = simdjson::minify(doc);
    held.start_timer = clock_.new_timer();
    int64_t parallelism = 1;
    if (doc["job"]["state"]["parallelism"].get(parallelism)) parallelism = 1;
    std::string request_json = "{}";
    simdjson::dom::element request;
    if (!doc["request"].get(request)) request_json = simdjson::minify(request);
    int64_t epochs = 1;
    if (doc["request"]["epochs"].get(epochs)) epochs = 1;
    bool is_static = false;
    if (doc["request"]["options"]["static_parallelism"].get(is_static)) is_static = false;
    // A model this emulator did not submit runs at the first fraction.
    size_t model = 0;
    std::string_view model_type;
    if (!doc["request"]["model_type"].get(model_type)) {
      for (size_t k = 0; k < o_.serial_fractions.size(); ++k) {
        if (model_type == kModels[k]) model = k;
      }
    }
    auto spawn = [this, job_id, parallelism, request_json, epochs, is_static, model, res]() mutable {
      auto it = index_.find(job_id);
      // The first /start goes on even when a second one dropped the entry: it
      // puts the task back (updateEntry) and answers 200.
      HeldTask& h = it != index_.end() ? it->second : index_[job_id];
      h.running = true;
      spawn_job(job_id, request_json, static_cast<int>(epochs), static_cast<int>(std::max<int64_t>(parallelism, 1)),
                is_static, model);
      res.send(status_only(200));
    };
    held.start_timer->start(static_cast<uint64_t>(o_.start_delay_s * 1000), std::move(spawn));
  }

  void update(const std::string& id, HttpRequest& req, Responder res) {
    ++stats_.updates;
    auto it = index_.find(id);
    if (it == index_.end()) {
      ++stats_.updates_unknown_job;
      return res.send(status_only(400));
    }
    simdjson::dom::element doc;
    int64_t parallelism = 0;
    double elapsed = 0;
    if (parser_.parse(req.body).get(doc) || doc["parallelism"].get(parallelism)) return res.send(status_only(400));
    if (doc["elapsed_time"].get(elapsed)) elapsed = 0;
    auto job_it = jobs_.find(id);
    if (!it->second.running || job_it == jobs_.end()) {
      // The task has no pod yet: jobClient.UpdateTask has nowhere to send it.
      ++stats_.updates_before_running;
      say("violation: update for job " + id + " before its /start finished");
      return res.send(status_only(500));
    }
    TrainJob& job = *job_it->second;
    if (job.asked <= job.taken + job.channel.size()) {
      ++stats_.unsolicited_updates;
      say("violation: update for job " + id + " that it did not ask for");
    }
    job.channel.push_back(Update{static_cast<int>(parallelism), elapsed, std::move(res)});
    if (job.phase == TrainJob::Phase::kWaiting) take_update(job);
  }

  HttpResponse tasks() {
    ++stats_.tasks_listed;
    HttpResponse r;
    r.content_type = "application/json";
    if (index_.empty()) {
      r.body = "null";
      return r;
    }
    r.body = "[";
    for (const auto& [id, held] : index_) {
      if (r.body.size() > 1) r.body += ',';
      r.body += held.task_json;
    }
    r.body += ']';
    return r;
  }

  // Tells the scheduler, then drops the job from the index once that call is
  // over, whatever its outcome (jobFinish in api.go).
  HttpResponse finish(const std::string& id) {
    if (!index_.count(id)) return status_only(400, "job not found in index\n");
    ClientRequest req;
    req.method = "DELETE";
    req.url = o_.scheduler + "/finish/" + id;
    req.timeout_ms = 0;
    go_request(&ps_process_, std::move(req), [this, id](ClientResponse&& r) {
      if (!r.ok()) ++stats_.finish_errors;  // the PS logs it and goes on
      index_.erase(id);
      ++stats_.finished;
      say("job " + id + " finished");
      maybe_exit();
    });
    return status_only(200);
  }

  HttpResponse stop(const std::string& id) {
    auto it = jobs_.find(id);
    if (!index_.count(id) || it == jobs_.end()) return status_only(400, "Job does not exist\n");
    it->second->stop_requested = true;
    return status_only(200);
  }

  void forget() {
    // A restarted PS: its index is empty and its blocked calls are gone. The
    // train jobs' pods keep running and keep asking the scheduler.
    index_.clear();
    for (auto& [id, job] : jobs_) job->channel.clear();
    say("index forgotten (PS restart)");
  }

  // ---- train jobs ----

  void spawn_job(const std::string& id, std::string request_json, int epochs, int parallelism, bool is_static,
                 size_t model) {
    auto job = std::make_unique<TrainJob>();
    job->id = id;
    job->model = model;
    job->request_json = std::move(request_json);
    job->epochs = std::max(epochs, 1);
    job->parallelism = parallelism;
    job->is_static = is_static;
    job->epoch_timer = clock_.new_timer();
    job->wait_timer = clock_.new_timer();
    job->process.pool = new_go_pool();
    TrainJob& j = *job;
    jobs_[id] = std::move(job);
    say("job " + id + " started at parallelism " + std::to_string(parallelism));
    next_epoch(j);
  }

  double epoch_seconds(int parallelism, size_t model) const {
    double p = std::max(parallelism, 1);
    double serial = o_.serial_fractions[model];
    return o_.epoch_ms / 1000.0 * (serial + (1 - serial) / p);
  }

  void next_epoch(TrainJob& job) {
    job.epoch += 1;
    job.phase = TrainJob::Phase::kTraining;
    double t = epoch_seconds(job.parallelism, job.model);
    std::string id = job.id;
    job.epoch_timer->start(static_cast<uint64_t>(t * 1000), [this, id, t] {
      auto it = jobs_.find(id);
      if (it == jobs_.end()) return;
      epoch_done(*it->second, t);
    });
  }

  void epoch_done(TrainJob& job, double t) {
    ++stats_.epochs;
    if (job.epoch > 3 && !stats_.a_job_done) {
      stats_.shared_epochs[job.model] += 1;
      stats_.shared_worker_epochs[job.model] += static_cast<uint64_t>(job.parallelism);
    }
    job.elapsed_time = t;
    job.gauges["kubeml_job_epoch_duration_seconds"] = t;
    job.gauges["kubeml_job_parallelism"] = job.parallelism;
    job.gauges["kubeml_job_train_loss"] = 2.0 / (1 + job.epoch);
    job.gauges["kubeml_job_validation_loss"] = 2.2 / (1 + job.epoch);
    job.gauges["kubeml_job_validation_accuracy"] = 100.0 * job.epoch / (job.epoch + 1);
    if (job.stop_requested || job.epoch >= job.epochs) return finish_job(job);
    if (job.is_static) return next_epoch(job);
    post_job(job);
  }

  void post_job(TrainJob& job) {
    std::string body = "{\"request\":" + job.request_json + ",\"job\":{\"id\":\"" + job.id + "\",\"state\":{";
    body += "\"parallelism\":" + std::to_string(job.parallelism);
    char num[32];
    snprintf(num, sizeof num, "%.17g", job.elapsed_time);
    body += ",\"elapsed_time\":" + std::string(num) + "}}}";
    ClientRequest req;
    req.method = "POST";
    req.url = o_.scheduler + "/job";
    req.headers = {{"Content-Type", "application/json"}};
    req.body = std::move(body);
    req.timeout_ms = 0;  // Go's http.Post: no time-out
    job.phase = TrainJob::Phase::kPosting;
    job.asked += 1;
    job.posted_at_ms = clock_.now_ms();
    if (stats_.first_post_ms == 0) stats_.first_post_ms = job.posted_at_ms;
    ++stats_.job_posts;
    std::string id = job.id;
    go_request(&job.process, std::move(req), [this, id](ClientResponse&& r) {
      auto it = jobs_.find(id);
      if (it == jobs_.end()) return;
      TrainJob& j = *it->second;
      if (r.error != 0) {
        // UpdateJob returned an error: the loop `continue`s, with no wait.
        ++stats_.job_post_errors;
        j.asked -= 1;  // nothing will answer it
        say("job " + id + ": POST /job failed (" + r.error_text + "), going on");
        return next_epoch(j);
      }
      if (r.status < 200 || r.status >= 300) ++stats_.job_post_non_2xx;  // ignored, as in KubeML
      j.phase = TrainJob::Phase::kWaiting;
      std::string jid = id;
      j.wait_timer->start(static_cast<uint64_t>(o_.wait_limit_s * 1000), [this, jid] {
        ++stats_.late_waits;
        say("violation: job " + jid + " waited past the limit for its update");
      });
      take_update(j);
    });
  }

  // The job reads its channel: the oldest blocked sender is the answer.
  void take_update(TrainJob& job) {
    if (job.channel.empty()) return;
    Update u = std::move(job.channel.front());
    job.channel.pop_front();
    job.wait_timer->stop();
    job.taken += 1;
    uint64_t now = clock_.now_ms();
    stats_.answer_ms.push_back(static_cast<double>(now - job.posted_at_ms));
    stats_.last_update_ms = now;
    u.responder.send(status_only(200));
    job.parallelism = std::max(u.parallelism, 1);
    job.elapsed_time = u.elapsed_time;
    next_epoch(job);
  }

  void finish_job(TrainJob& job) {
    job.phase = TrainJob::Phase::kDone;
    stats_.a_job_done = true;
    // The job's POST {ps}/finish/{id}: here a call on the same object.
    (void)finish(job.id);
  }

  void maybe_exit() {
    if (!o_.exit_when_done || o_.jobs == 0 || stats_.finished < static_cast<uint64_t>(o_.jobs)) return;
    fprintf(stdout, "%s\n", stats_json().c_str());
    fflush(stdout);
    // Exits here rather than unwinding: the servers' connections are open.
    std::_Exit(stats_.violations() == 0 ? 0 : 1);
  }

  // ---- reports ----

  std::string stats_json() const {
    std::vector<double> ms = stats_.answer_ms;
    std::sort(ms.begin(), ms.end());
    auto pct = [&](double q) {
      return ms.empty() ? 0.0 : ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))];
    };
    double span_s = stats_.last_update_ms > stats_.first_post_ms
                        ? static_cast<double>(stats_.last_update_ms - stats_.first_post_ms) / 1000.0
                        : 0.0;
    JsonWriter w;
    w.begin_object();
    w.key("starts").value(stats_.starts).key("duplicate_starts").value(stats_.duplicate_starts);
    w.key("updates").value(stats_.updates).key("unsolicited_updates").value(stats_.unsolicited_updates);
    w.key("updates_unknown_job").value(stats_.updates_unknown_job);
    w.key("updates_before_running").value(stats_.updates_before_running);
    w.key("late_waits").value(stats_.late_waits).key("job_posts").value(stats_.job_posts);
    w.key("job_post_errors").value(stats_.job_post_errors).key("job_post_non_2xx").value(stats_.job_post_non_2xx);
    w.key("epochs").value(stats_.epochs).key("train_submitted").value(stats_.train_submitted);
    w.key("finished").value(stats_.finished).key("finish_errors").value(stats_.finish_errors);
    w.key("tasks_listed").value(stats_.tasks_listed).key("connections_held").value(stats_.connections_held);
    w.key("held").value(static_cast<uint64_t>(index_.size()));
    uint64_t waiting = 0;
    for (const auto& [id, job] : jobs_) waiting += job->phase == TrainJob::Phase::kWaiting ? 1 : 0;
    w.key("waiting").value(waiting);
    w.key("answers").value(static_cast<uint64_t>(ms.size()));
    w.key("answer_p50_ms").value(pct(0.50)).key("answer_p99_ms").value(pct(0.99));
    w.key("answers_per_second").value(span_s > 0 ? static_cast<double>(ms.size()) / span_s : 0.0);
    w.key("violations").value(stats_.violations());
    if (o_.serial_fractions.size() > 1) {
      for (size_t k = 0; k < o_.serial_fractions.size(); ++k) {
        std::string m = kModels[k];
        w.key(m + "_shared_epochs").value(stats_.shared_epochs[k]);
        w.key(m + "_shared_worker_epochs").value(stats_.shared_worker_epochs[k]);
      }
    }
    w.end_object();
    return w.take();
  }

  HttpResponse stats_response() const {
    HttpResponse r;
    r.content_type = "application/json";
    r.body = stats_json();
    return r;
  }

  HttpResponse prometheus() const {
    std::string out;
    char line[256];
    const char* names[] = {"kubeml_job_validation_loss", "kubeml_job_validation_accuracy", "kubeml_job_train_loss",
                           "kubeml_job_parallelism", "kubeml_job_epoch_duration_seconds"};
    for (const char* name : names) {
      out += "# TYPE " + std::string(name) + " gauge\n";
      for (const auto& [id, job] : jobs_) {
        auto g = job->gauges.find(name);
        if (g == job->gauges.end() || !index_.count(id)) continue;  // clearMetrics at finish
        snprintf(line, sizeof line, "%s{jobid=\"%s\"} %.17g\n", name, id.c_str(), g->second);
        out += line;
      }
    }
    out += "# TYPE kubeml_job_running_total gauge\n";
    snprintf(line, sizeof line, "kubeml_job_running_total{type=\"train\"} %zu\n", index_.size());
    out += line;
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4";
    r.body = std::move(out);
    return r;
  }

  Options o_;
  uv_loop_t* loop_;
  uvsched::LoopClock clock_;
  uvsched::HttpClient client_;  // the controller's (--connections go), or every call's
  GoTransport ps_process_;      // the PS's, for its /finish calls
  uvsched::HttpServer api_;
  MetricsHandler metrics_handler_;
  uvsched::HttpServer metrics_;
  simdjson::dom::parser parser_;
  std::map<std::string, HeldTask> index_;
  std::map<std::string, std::unique_ptr<TrainJob>> jobs_;
  Stats stats_;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      fputs(kUsage, stdout);
      return 0;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "kubeml_emulator: %s needs a value (see kubeml_emulator --help)\n", k.c_str());
      return 2;
    }
    std::string v = argv[i + 1];
    bool ok = true;
    if (k == "--listen") {
      ok = uvsched::parse_host_port(v).has_value();
      o.listen = v;
    } else if (k == "--metrics-listen") {
      ok = uvsched::parse_host_port(v).has_value();
      o.metrics_listen = v;
    } else if (k == "--scheduler") {
      ok = uvsched::parse_url(v).has_value();
      o.scheduler = v;
    } else if (k == "--start-delay")
      ok = parse_double(v, 0, &o.start_delay_s);
    else if (k == "--jobs")
      ok = parse_int(v, 0, &o.jobs);
    else if (k == "--epochs")
      ok = parse_int(v, 1, &o.epochs);
    else if (k == "--parallelism")
      ok = parse_int(v, 1, &o.parallelism);
    else if (k == "--static")
      ok = parse_flag(v, &o.is_static);
    else if (k == "--epoch-ms")
      ok = parse_double(v, 0, &o.epoch_ms);
    else if (k == "--serial-fraction")
      ok = parse_fractions(v, &o.serial_fractions);
    else if (k == "--wait-limit")
      ok = parse_double(v, 0.001, &o.wait_limit_s);
    else if (k == "--exit-when-done")
      ok = parse_flag(v, &o.exit_when_done);
    else if (k == "--quiet")
      ok = parse_flag(v, &o.quiet);
    else if (k == "--connections") {
      using C = Options::Connections;
      ok = v == "go" || v == "pooled" || v == "close";
      o.connections = v == "pooled" ? C::kPooled : v == "close" ? C::kClose : C::kGo;
    }
    else {
      fprintf(stderr, "kubeml_emulator: unknown flag %s (see kubeml_emulator --help)\n", k.c_str());
      return 2;
    }
    if (!ok) {
      fprintf(stderr, "kubeml_emulator: bad value for %s: '%s' (see kubeml_emulator --help)\n", k.c_str(), v.c_str());
      return 2;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  uvsched::log_configure(uvsched::LogLevel::kWarn, uvsched::LogFormat::kText);
  uv_loop_t* loop = uv_default_loop();
  Emulator emulator(loop, o);
  if (int rc = emulator.run()) return rc;
  uv_run(loop, UV_RUN_DEFAULT);
  return 0;
}
