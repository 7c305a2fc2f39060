// The ML scheduler end to end: the real daemon, a fake parameter server and a
// fake function router on loopback, spoken to the way KubeML's controller,
// train jobs and PS do.
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "reactor/tls.h"
#include "reactor/url.h"
#include "tests/support/daemon_fixture.h"
#include "tests/support/daemon_process.h"
#include "tests/support/fake_service.h"
#include "tests/support/raw_http.h"
#include "tests/support/store_fixture.h"
#include "tests/support/test_certs.h"

namespace uvsched::test {
namespace {

const std::string kTrain = R"({"model_type":"resnet34","batch_size":128,"epochs":10,"dataset":"cifar10","lr":0.01,)"
                           R"("function_name":"resnet","options":{"default_parallelism":3,"static_parallelism":false,)"
                           R"("validate_every":2,"k":-1,"goal_accuracy":0.9}})";

std::string job_update(const std::string& id, int parallelism, double elapsed) {
  return R"({"request":)" + kTrain + R"(,"job":{"id":")" + id + R"(","state":{"parallelism":)" +
         std::to_string(parallelism) + R"(,"elapsed_time":)" + std::to_string(elapsed) + "}}}";
}

// What tools/ml_trace_sim recorded (--decisions) for one job: the /train body,
// the /start parallelism, and each /job body with the parallelism answered.
struct SimulatedJob {
  std::string sim_id;
  std::string train;
  int start = 0;
  struct Epoch {
    std::string report;
    double elapsed = 0;
    int told = 0;
  };
  std::vector<Epoch> epochs;
};

// Runs the simulator on one yolov3 job (the trace's measured curve: 282 s an
// epoch at 4 workers, 535 s at 5, 375 s at 16) with 10% noise on 16 slots, and
// returns what it sent and was answered under `policy`.
SimulatedJob simulate_one_job(const std::string& policy) {
  const char* sim = std::getenv("UVSCHED_ML_TRACE_SIM");
  const char* trace = std::getenv("UVSCHED_ML_TRACE");
  SimulatedJob job;
  if (!sim || !trace) {
    ADD_FAILURE() << "UVSCHED_ML_TRACE_SIM and UVSCHED_ML_TRACE are set by meson";
    return job;
  }
  TempDir dir;
  std::ofstream(dir.path() + "/workload.csv")
      << "name,submit_seconds,application,initial_replicas,batch_size\nyolov3-0,0,yolov3,4,64\n";
  for (const char* f : {"epochs.csv", "scaling_by_batch_size.csv"}) {
    std::ofstream(dir.path() + "/" + f) << std::ifstream(std::string(trace) + "/" + f).rdbuf();
  }
  std::string out = dir.path() + "/decisions.jsonl";
  std::string cmd = std::string(sim) + " --trace " + dir.path() + " --slots 16 --noise 0.1 --policies " + policy +
                    " --decisions " + out + " > " + dir.path() + "/table.txt";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out);
  simdjson::dom::parser p;
  for (std::string line; std::getline(in, line);) {
    simdjson::dom::element d = p.parse(line);
    job.sim_id = std::string(std::string_view(d["id"]));
    if (d["train"].error() == simdjson::SUCCESS) {
      job.train = simdjson::minify(d["train"]);
      job.start = static_cast<int>(int64_t(d["start"]));
    } else {
      job.epochs.push_back({simdjson::minify(d["report"]), double(d["report"]["job"]["state"]["elapsed_time"]),
                            static_cast<int>(int64_t(d["told"]))});
    }
  }
  return job;
}

class MlSchedulerTest : public DaemonFixture {
 protected:
  // The fakes take what KubeML's PS and function router take (see
  // tools/kubeml_emulator), and flag any other call.
  void SetUp() override {
    ps_.answer("/start", 200, "application/json", "", "POST");
    ps_.answer("/update/", 200, "application/json", "", "POST");
    ps_.answer("/tasks", 200, "application/json", "null", "GET");  // Go's empty index
    ps_.answer("/finish/", 200, "application/json", "", "POST");
    ps_.strict();
  }
  void TearDown() override {
    EXPECT_EQ(ps_.unexpected(), "") << "calls KubeML's PS would not take";
    DaemonFixture::TearDown();
  }
  void start_with_fakes(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--ps-url", ps_.url(), "--router-url", router_.url(), "--metrics-poll-interval",
                                     "0.1"};
    args.insert(args.end(), extra.begin(), extra.end());
    start(args);
  }
  std::string train(const std::string& body = kTrain) {
    auto r = http_request(daemon_->port(), "POST", "/train", body);
    EXPECT_TRUE(r);
    if (!r) return "";
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->header("Content-Type"), "text/plain; charset=utf-8");
    return r->body;
  }
  // Posts one epoch's report; returns the parallelism the PS was told.
  int epoch(const std::string& id, int parallelism, double elapsed) {
    return report(id, job_update(id, parallelism, elapsed), elapsed);
  }
  // Posts a train job's /job body as is; returns the parallelism the PS was told.
  int report(const std::string& id, const std::string& body, double elapsed) {
    size_t before = ps_.calls_to("/update/" + id).size();
    auto r = http_request(daemon_->port(), "POST", "/job", body);
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    EXPECT_TRUE(ps_.wait_for("/update/" + id, before + 1)) << "no /update reached the PS";
    auto calls = ps_.calls_to("/update/" + id);
    if (calls.size() <= before) return -1;
    simdjson::dom::parser p;
    simdjson::dom::element doc = p.parse(calls.back().body);
    double t = doc["elapsed_time"].get_double();
    EXPECT_DOUBLE_EQ(t, elapsed);
    return static_cast<int>(int64_t(doc["parallelism"]));
  }
  std::string job_view(const std::string& id) {
    auto r = http_request(daemon_->port(), "GET", "/v1/jobs/" + id);
    EXPECT_TRUE(r);
    return r ? r->body : "";
  }

  FakeService ps_;
  FakeService router_;
};

TEST_F(MlSchedulerTest, TrainStartsTheJobAtThePsWithEveryFieldIntact) {
  start_with_fakes();
  std::string id = train();
  EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{8}"))) << id;
  ASSERT_TRUE(ps_.wait_for("/start", 1));
  auto start = ps_.calls_to("/start")[0];
  EXPECT_EQ(start.method, "POST");
  EXPECT_EQ(start.content_type, "application/json");
  simdjson::dom::parser p;
  simdjson::dom::element task = p.parse(start.body);
  simdjson::dom::element req = task["request"];
  EXPECT_EQ(std::string_view(req["model_type"]), "resnet34");
  EXPECT_EQ(int64_t(req["batch_size"]), 128);
  EXPECT_EQ(int64_t(req["epochs"]), 10);
  EXPECT_EQ(std::string_view(req["dataset"]), "cifar10");
  EXPECT_DOUBLE_EQ(double(req["lr"]), 0.01);
  EXPECT_EQ(std::string_view(req["function_name"]), "resnet");
  EXPECT_EQ(int64_t(req["options"]["default_parallelism"]), 3);
  EXPECT_EQ(bool(req["options"]["static_parallelism"]), false);
  EXPECT_EQ(int64_t(req["options"]["validate_every"]), 2);
  EXPECT_EQ(int64_t(req["options"]["k"]), -1);
  EXPECT_DOUBLE_EQ(double(req["options"]["goal_accuracy"]), 0.9);
  EXPECT_EQ(std::string_view(task["job"]["id"]), id);
  EXPECT_EQ(int64_t(task["job"]["state"]["parallelism"]), 3);

  std::string other = train();
  EXPECT_NE(other, id);
}

TEST_F(MlSchedulerTest, EpochReportsFollowTheDecisionTableWithClamps) {
  start_with_fakes({"--max-parallelism", "5"});
  std::string id = train();
  ASSERT_TRUE(ps_.wait_for("/start", 1));
  EXPECT_EQ(epoch(id, 3, 10.0), 4);   // first epoch: reference 10, up
  EXPECT_EQ(epoch(id, 4, 9.0), 5);    // faster: reference 9, up
  EXPECT_EQ(epoch(id, 5, 9.0), 5);    // faster again, but clamped at --max-parallelism
  EXPECT_EQ(epoch(id, 5, 10.0), 5);   // between 9*1.05 and 9*1.2: hold, reference stays 9
  EXPECT_EQ(epoch(id, 5, 10.79), 5);  // still below 9*1.2 = 10.8
  EXPECT_EQ(epoch(id, 5, 10.8), 4);   // slower: reference 10.8, down
  EXPECT_EQ(epoch(id, 1, 100), 1);    // down from 1 stays at 1
  std::string view = job_view(id);
  for (const char* reason : {"\"create\"", "\"first-epoch\"", "\"faster\"", "\"faster+clamped\"", "\"steady\"",
                             "\"slower\"", "\"slower+clamped\""}) {
    EXPECT_NE(view.find(reason), std::string::npos) << reason << " missing from " << view;
  }
  auto metrics = http_request(daemon_->port(), "GET", "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("uvsched_job_parallelism{jobid=\"" + id + "\"} 1\n"), std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("uvsched_ml_decisions_total{reason=\"steady\"} 2\n"), std::string::npos)
      << metrics->body;
}

TEST_F(MlSchedulerTest, StaticJobsKeepTheirParallelism) {
  start_with_fakes();
  std::string body = kTrain;
  body.replace(body.find("\"static_parallelism\":false"), 26, "\"static_parallelism\":true");
  std::string id = train(body);
  EXPECT_EQ(epoch(id, 3, 10.0), 3);
  EXPECT_EQ(epoch(id, 3, 5.0), 3);
}

TEST_F(MlSchedulerTest, AFailedStartIsResentOnlyWhenThePsDoesNotHoldTheJob) {
  start_with_fakes();
  ps_.fail_next("/start", 2, 503);
  std::string id = train();
  ASSERT_TRUE(ps_.wait_for("/start", 3)) << "the start was not sent again";
  // Asked before each second /start.
  EXPECT_EQ(ps_.calls_to("/tasks").size(), 2u);
  ps_.fail_next("/update/", 3, 500);  // a 5xx: the job did not get it
  auto r = http_request(daemon_->port(), "POST", "/job", job_update(id, 3, 10.0));
  ASSERT_TRUE(r && r->status == 200);
  ASSERT_TRUE(ps_.wait_for("/update/" + id, 4, 20s)) << "the update was not retried";
  auto updates = ps_.calls_to("/update/" + id);
  EXPECT_EQ(updates.back().body, R"({"parallelism":4,"elapsed_time":10})");
  auto metrics = http_request(daemon_->port(), "GET", "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("uvsched_ps_calls_total{op=\"update\",result=\"error\"} 3\n"), std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("uvsched_ps_calls_total{op=\"start\",result=\"error\"} 2\n"), std::string::npos);
}

TEST_F(MlSchedulerTest, AStartThePsAlreadyHoldsIsNotSentAgain) {
  ps_.hang("/start");
  start_with_fakes({"--ps-start-timeout", "0.3"});
  std::string id = train();
  ASSERT_TRUE(ps_.wait_for("/start", 1));
  // The PS is still making the pod; its index already lists the job.
  ps_.answer(
      "/tasks", 200, "application/json",
      R"([{"request":)" + kTrain + R"(,"job":{"id":")" + id + R"(","state":{"parallelism":3,"elapsed_time":0}}}])");
  ASSERT_TRUE(ps_.wait_for("/tasks", 1, 5s));
  auto until = std::chrono::steady_clock::now() + 5s;
  std::string view;
  while (std::chrono::steady_clock::now() < until) {
    view = job_view(id);
    if (view.find("\"start_delivered\":true") != std::string::npos) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_NE(view.find("\"start_delivered\":true"), std::string::npos) << view;
  EXPECT_EQ(ps_.calls_to("/start").size(), 1u);
  // Its first epoch's update goes out as usual.
  auto r = http_request(daemon_->port(), "POST", "/job", job_update(id, 3, 10.0));
  ASSERT_TRUE(r && r->status == 200);
  EXPECT_TRUE(ps_.wait_for("/update/" + id, 1));
}

TEST_F(MlSchedulerTest, AnUpdateAnsweredWith400MarksTheJobLost) {
  start_with_fakes();
  std::string id = train();
  ASSERT_TRUE(ps_.wait_for("/start", 1));
  ps_.fail_next("/update/", 1, 400);  // a restarted PS does not hold the job
  auto r = http_request(daemon_->port(), "POST", "/job", job_update(id, 3, 10.0));
  ASSERT_TRUE(r && r->status == 200);
  ASSERT_TRUE(ps_.wait_for("/update/" + id, 1));
  auto until = std::chrono::steady_clock::now() + 5s;
  std::string view;
  while (std::chrono::steady_clock::now() < until) {
    view = job_view(id);
    if (view.find("\"lost\":true") != std::string::npos) break;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_NE(view.find("\"lost\":true"), std::string::npos) << view;
  EXPECT_NE(view.find("\"state\":\"lost\""), std::string::npos) << view;
  EXPECT_TRUE(daemon_->wait_for_log("event=ps_job_lost job=" + id));
  auto metrics = http_request(daemon_->port(), "GET", "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("uvsched_ml_jobs_lost_total{phase=\"lost\"} 1\n"), std::string::npos) << metrics->body;
  // Nothing more is sent for it; its next /job is still answered.
  r = http_request(daemon_->port(), "POST", "/job", job_update(id, 3, 10.0));
  ASSERT_TRUE(r && r->status == 200);
  auto health = http_request(daemon_->port(), "GET", "/health");  // one more loop turn
  ASSERT_TRUE(health);
  EXPECT_EQ(ps_.calls_to("/update/" + id).size(), 1u);
}

TEST_F(MlSchedulerTest, AHungPsTimesOutWithoutStallingTheLoopAndWithoutASecondStart) {
  ps_.hang("/");
  start_with_fakes({"--ps-start-timeout", "1"});
  std::string id = train();
  ASSERT_TRUE(ps_.wait_for("/start", 1));  // the call went out and hangs
  auto until = std::chrono::steady_clock::now() + 20s;
  std::string view;
  while (std::chrono::steady_clock::now() < until) {
    // The loop keeps serving meanwhile: within 300 ms, where a loop blocked
    // on the hung call would answer only at its 1 s time-out.
    auto health = http_request(daemon_->port(), "GET", "/health", {}, {}, 300ms);
    ASSERT_TRUE(health && health->status == 200);
    view = answered(http_request(daemon_->port(), "GET", "/v1/jobs/" + id)).body;
    if (view.find("request timed out") != std::string::npos) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_NE(view.find("\"last_error\":\"request timed out\""), std::string::npos) << view;
  // It asks whether the PS holds the job (that hangs too), and sends no second /start.
  EXPECT_TRUE(ps_.wait_for("/tasks", 1, 10s));
  EXPECT_EQ(ps_.calls_to("/start").size(), 1u);
}

TEST_F(MlSchedulerTest, InferEncodesEveryQueryValue) {
  start_with_fakes();
  auto r = http_request(daemon_->port(), "POST", "/infer",
                        R"({"model_id":"a&b/ c\r\nX: y","function_name":"net work","data":[1]})");
  ASSERT_TRUE(r);
  ASSERT_TRUE(router_.wait_for("/", 1));
  auto calls = router_.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].target,
            "/net%20work?task=infer&jobId=a%26b%2F%20c%0D%0AX%3A%20y&N=1&K=-1&funcId=0&batchSize=0&lr=1&epoch=1");
  auto decoded = query_param(calls[0].target.substr(calls[0].target.find('?') + 1), "jobId");
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, "a&b/ c\r\nX: y");
}

TEST_F(MlSchedulerTest, FinishForgetsTheJob) {
  start_with_fakes();
  std::string id = train();
  auto r = http_request(daemon_->port(), "DELETE", "/finish/" + id);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  auto gone = http_request(daemon_->port(), "GET", "/v1/jobs/" + id);
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->status, 404);
  auto list = http_request(daemon_->port(), "GET", "/v1/jobs");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->body.find(id), std::string::npos);
}

TEST_F(MlSchedulerTest, InferenceIsRelayedToTheRouter) {
  router_.answer("/network", 201, "application/x-custom", "[[0.1,0.9]]");
  router_.answer("/mnist-fn", 200, "application/json", "[7]");
  start_with_fakes();
  const std::string body = R"({"model_id":"abc123","data":[[1,2,3]]})";
  auto r = http_request(daemon_->port(), "POST", "/infer", body);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->header("Content-Type"), "application/x-custom");
  EXPECT_EQ(r->body, "[[0.1,0.9]]");
  auto calls = router_.calls_to("/network");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].target, "/network?task=infer&jobId=abc123&N=1&K=-1&funcId=0&batchSize=0&lr=1&epoch=1");
  EXPECT_EQ(calls[0].body, body);

  auto named =
      http_request(daemon_->port(), "POST", "/infer", R"({"model_id":"m","data":[],"function_name":"mnist-fn"})");
  ASSERT_TRUE(named);
  EXPECT_EQ(named->body, "[7]");
}

TEST_F(MlSchedulerTest, AnUnreachableRouterIs502) {
  std::string dead_router;
  {
    FakeService gone;
    dead_router = gone.url();
  }
  std::vector<std::string> args = {"--router-url", dead_router};
  daemon_ = std::make_unique<DaemonProcess>(args);
  ASSERT_TRUE(daemon_->start());
  auto r = http_request(daemon_->port(), "POST", "/infer", R"({"model_id":"m","data":[1]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 502);
  EXPECT_NE(r->body.find("router"), std::string::npos);
}

TEST_F(MlSchedulerTest, BadInputIs400NamingTheFieldAndChangesNothing) {
  start_with_fakes();
  struct Case {
    std::string path, body, field;
  } cases[] = {
      {"/train", "{}", "model_type"},
      {"/train", R"({"model_type":"m","batch_size":"64","epochs":1,"dataset":"d","function_name":"f"})", "batch_size"},
      {"/train", R"({"model_type":"m","batch_size":64,"epochs":0,"dataset":"d","function_name":"f"})", "epochs"},
      {"/train",
       R"({"model_type":"m","batch_size":64,"epochs":1,"dataset":"d","function_name":"f","options":{"k":"x"}})",
       "options.k"},
      {"/train", R"({"model_type":"m","batch_size":64,"epochs":1,"dataset":"d","function_name":"f","lr":"fast"})",
       "lr"},
      {"/job", R"({"job":{"state":{"parallelism":2}}})", "job.id"},
      {"/job", R"({"job":{"id":"x","state":{"elapsed_time":"slow"}}})", "job.state.elapsed_time"},
      {"/job", R"({"job":{"id":"x","state":{"elapsed_time":-1}}})", "job.state.elapsed_time"},
      // What no job runs: a parallelism the policies would count up to, an
      // epoch whose seconds overflow the speed model's sums.
      {"/job", R"({"job":{"id":"x","state":{"parallelism":2147483647,"elapsed_time":10}}})", "job.state.parallelism"},
      {"/job", R"({"job":{"id":"x","state":{"parallelism":100001,"elapsed_time":10}}})", "job.state.parallelism"},
      {"/job", R"({"job":{"id":"x","state":{"parallelism":3,"elapsed_time":1e308}}})", "job.state.elapsed_time"},
      {"/train", R"({"model_type":"m","batch_size":64,"epochs":1e18,"dataset":"d","function_name":"f"})", "epochs"},
      {"/train", R"({"model_type":"m","batch_size":64,"epochs":10000000000,"dataset":"d","function_name":"f"})",
       "epochs"},
      {"/train",
       R"({"model_type":"m","batch_size":64,"epochs":1,"dataset":"d","function_name":"f","options":{"default_parallelism":100001}})",
       "options.default_parallelism"},
      {"/infer", R"({"data":[1]})", "model_id"},
      {"/infer", R"({"model_id":"m","data":{}})", "data"},
  };
  for (const auto& c : cases) {
    auto r = http_request(daemon_->port(), "POST", c.path, c.body);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << c.body;
    EXPECT_NE(r->body.find("\"field\":\"" + c.field + "\""), std::string::npos) << r->body;
  }
  // Every problem of a TrainRequest at once; the first is still the error.
  auto every = http_request(daemon_->port(), "POST", "/train", R"({"batch_size":"x","lr":"fast","options":{"k":"y"}})");
  ASSERT_TRUE(every);
  EXPECT_EQ(every->status, 400);
  EXPECT_NE(every->body.find(R"("error":"field 'model_type' is required","field":"model_type")"), std::string::npos)
      << every->body;
  for (const char* f : {"model_type", "batch_size", "epochs", "dataset", "lr", "function_name", "options.k"}) {
    EXPECT_NE(every->body.find(std::string(R"({"field":")") + f + "\""), std::string::npos) << f << ": " << every->body;
  }
  for (const char* junk : {"not json", "[1,2]", ""}) {
    auto r = http_request(daemon_->port(), "POST", "/train", junk);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << junk;
  }
  auto list = http_request(daemon_->port(), "GET", "/v1/jobs");
  ASSERT_TRUE(list);
  EXPECT_NE(list->body.find("\"jobs\":[]"), std::string::npos) << list->body;
  EXPECT_TRUE(ps_.calls().empty());
}

TEST_F(MlSchedulerTest, PsMetricsArePolledPerJob) {
  start_with_fakes({"--ps-metrics-url", ps_.url() + "/metrics"});
  std::string id = train();
  ps_.answer("/metrics", 200, "text/plain; version=0.0.4",
             "# HELP kubeml_job_validation_loss x\n# TYPE kubeml_job_validation_loss gauge\n"
             "kubeml_job_validation_loss{jobid=\"" +
                 id +
                 "\"} 0.25\n"
                 "kubeml_job_validation_accuracy{jobid=\"" +
                 id +
                 "\"} 0.875\n"
                 "kubeml_job_running_total{type=\"train\"} 1\n");
  std::string view;
  auto until = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < until) {
    view = job_view(id);
    if (view.find("kubeml_job_validation_accuracy") != std::string::npos) break;
    ps_.wait_for("/metrics", ps_.calls_to("/metrics").size() + 1, 2s);
  }
  EXPECT_NE(view.find("\"kubeml_job_validation_loss\":0.25"), std::string::npos) << view;
  EXPECT_NE(view.find("\"kubeml_job_validation_accuracy\":0.875"), std::string::npos) << view;
}

// The simulator's decisions are the daemon's: the /train and /job bodies
// tools/ml_trace_sim sent for one job, posted to the real daemon over HTTP, get
// the same /start and the same /update parallelism epoch by epoch, under
// KubeML's rule (up and down with the noise) and under the speedup policy
// (which explores 16, 1 and 6 before it holds at 4).
TEST_F(MlSchedulerTest, TheDaemonDecidesAsTheSimulatorDoes) {
  for (std::string policy : {"kubeml", "speedup"}) {
    SCOPED_TRACE(policy);
    SimulatedJob sim = simulate_one_job(policy);
    ASSERT_EQ(sim.epochs.size(), 49u) << "yolov3 runs 50 epochs: 49 reports before the last";
    std::set<int> told;
    for (const auto& e : sim.epochs) told.insert(e.told);
    ASSERT_GE(told.size(), 2u) << "the run never changed parallelism: it would compare nothing";
    if (daemon_) {
      ASSERT_EQ(daemon_->stop(SIGTERM), 0);
    }
    start_with_fakes({"--max-parallelism", "16", "--parallelism-policy", policy});
    size_t starts = ps_.calls_to("/start").size();
    std::string id = train(sim.train);
    ASSERT_TRUE(ps_.wait_for("/start", starts + 1));
    simdjson::dom::parser p;
    simdjson::dom::element task = p.parse(ps_.calls_to("/start").back().body);
    EXPECT_EQ(int64_t(task["job"]["state"]["parallelism"]), sim.start);
    for (size_t k = 0; k < sim.epochs.size(); ++k) {
      std::string body = sim.epochs[k].report;
      std::string from = "\"id\":\"" + sim.sim_id + "\"";
      ASSERT_NE(body.find(from), std::string::npos) << body;
      body.replace(body.find(from), from.size(), "\"id\":\"" + id + "\"");
      ASSERT_EQ(report(id, body, sim.epochs[k].elapsed), sim.epochs[k].told) << "epoch " << k + 1 << ": " << body;
    }
  }
}

TEST_F(MlSchedulerTest, ARestartKeepsTheReferenceEpochTime) {
  start_with_fakes();
  std::string id = train();
  EXPECT_EQ(epoch(id, 3, 10.0), 4);  // reference 10
  std::string data = daemon_->data_dir();
  ASSERT_EQ(daemon_->stop(SIGTERM), 0);
  // The PS still holds the job, as a real one does while the job trains: the
  // new daemon asks once it has loaded, and would forget a job not listed.
  ps_.answer("/tasks", 200, "application/json", R"([{"job":{"id":")" + id + R"("}}])", "GET");
  // Same store, new process.
  DaemonProcess again({"--ps-url", ps_.url(), "--store", "embedded:" + data + "/data"});
  ASSERT_TRUE(again.start()) << again.log();
  auto r = http_request(again.port(), "POST", "/job", job_update(id, 4, 11.0));
  ASSERT_TRUE(r && r->status == 200);
  // The restarted daemon also re-sends the last decision it stored (10 s,
  // parallelism 4): at-least-once. Wait for the answer to this epoch itself.
  std::string answer;
  auto until = std::chrono::steady_clock::now() + 10s;
  while (answer.empty() && std::chrono::steady_clock::now() < until) {
    for (const auto& call : ps_.calls_to("/update/" + id)) {
      if (call.body.find("\"elapsed_time\":11") != std::string::npos) answer = call.body;
    }
    if (answer.empty()) ps_.wait_for("/update/" + id, ps_.calls_to("/update/" + id).size() + 1, 1s);
  }
  // With the reference kept (10), 11 is "steady": 4. Had it been lost, a first
  // epoch would have said 5.
  EXPECT_EQ(answer, R"({"parallelism":4,"elapsed_time":11})");
  EXPECT_EQ(ps_.calls_to("/start").size(), 1u);  // the job was not started twice
  EXPECT_EQ(again.stop(SIGTERM), 0);
}

// The parameter server behind https: the daemon verifies it against the CAs
// OpenSSL finds by default, which SSL_CERT_FILE points at the test's own CA.
TEST(MlOverTls, DecisionsReachAnHttpsParameterServer) {
  TestCerts certs;
  ASSERT_TRUE(certs.ok());
  std::string err;
  auto tls = TlsContext::server(certs.server_cert(), certs.server_key(), "", &err);
  ASSERT_TRUE(tls) << err;
  FakeService ps(tls.get());
  ASSERT_EQ(ps.url().rfind("https://", 0), 0u);
  setenv("SSL_CERT_FILE", certs.ca_file().c_str(), 1);  // inherited by the daemon
  DaemonProcess daemon({"--ps-url", ps.url(), "--metrics-poll-interval", "0"});
  bool started = daemon.start();
  unsetenv("SSL_CERT_FILE");
  ASSERT_TRUE(started) << daemon.log();
  auto r = http_request(daemon.port(), "POST", "/train", kTrain);
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  ASSERT_TRUE(ps.wait_for("/start", 1)) << daemon.log();
  EXPECT_NE(ps.calls_to("/start")[0].body.find("\"model_type\":\"resnet34\""), std::string::npos);
  EXPECT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();
}

}  // namespace
}  // namespace uvsched::test
