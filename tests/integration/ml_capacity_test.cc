// The recompute timer against a capacity the test controls (the pod
// scheduler's live offers provide it): a job above its fair share is brought
// down in the answer to its next /job, never by an update it did not ask for
// (KubeML's job would take that as a later epoch's answer); silent jobs are
// marked stale.
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>

#include "handlers/ml/ml_scheduler.h"
#include "reactor/http_client.h"
#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "storage/embedded_store.h"
#include "tests/support/fake_service.h"
#include "tests/support/loop_runner.h"
#include "tests/support/store_fixture.h"

namespace uvsched::test {
namespace {

const std::string kTrain =
    R"({"model_type":"m","batch_size":32,"epochs":5,"dataset":"d","function_name":"f","options":{"default_parallelism":4}})";

class MlCapacityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    signal(SIGPIPE, SIG_IGN);
    log_configure(LogLevel::kOff, LogFormat::kText);
    uv_loop_init(&loop_);
    clock_ = std::make_unique<LoopClock>(&loop_);
    std::string error;
    store_ = EmbeddedStore::open(&loop_, *clock_, dir_.path() + "/data", &error);
    ASSERT_TRUE(store_) << error;
    client_ = std::make_unique<HttpClient>(&loop_, *clock_);
    MlScheduler::Settings s;
    s.max_parallelism = 8;
    s.recompute_interval_ms = 20;
    s.metrics_poll_interval_ms = 0;
    s.ps_url = ps_.url();
    // The fake takes what KubeML's PS takes, and flags any other call.
    ps_.answer("/start", 200, "application/json", "", "POST");
    ps_.answer("/update/", 200, "application/json", "", "POST");
    ps_.answer("/tasks", 200, "application/json", "null", "GET");
    ps_.strict();
    ml_ = std::make_unique<MlScheduler>(*clock_, *store_, *client_, metrics_, s, [] { return true; });
    ml_->set_capacity([this] { return capacity_; });
    ml_->add_routes(router_);
    ml_->start();
  }
  void TearDown() override {
    EXPECT_EQ(ps_.unexpected(), "") << "calls KubeML's PS would not take";
    ml_->stop();
    bool closed = false;
    client_->close([&] {
      ml_.reset();
      store_->close([&] { closed = true; });
    });
    ASSERT_TRUE(run_until(&loop_, [&] { return closed; }));
    store_.reset();
    client_.reset();
    clock_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }
  // One request through the router; returns the status line and body.
  std::pair<int, std::string> call(std::string_view method, std::string target, std::string body = {}) {
    HttpRequest req;
    req.method = method;
    req.target = std::move(target);
    req.body = std::move(body);
    auto ex = std::make_shared<detail::Exchange>();
    router_.handle(req, Responder(ex));
    EXPECT_TRUE(run_until(&loop_, [&] { return ex->state != detail::Exchange::State::kPending; }));
    int status = std::atoi(ex->out.c_str() + 9);
    return {status, ex->out.substr(ex->out.find("\r\n\r\n") + 4)};
  }
  int ps_parallelism(const std::string& id) {
    auto calls = ps_.calls_to("/update/" + id);
    if (calls.empty()) return -1;
    simdjson::dom::parser p;
    return static_cast<int>(int64_t(p.parse(calls.back().body)["parallelism"]));
  }

  TempDir dir_;
  FakeService ps_;
  uv_loop_t loop_;
  std::unique_ptr<LoopClock> clock_;
  std::unique_ptr<EmbeddedStore> store_;
  std::unique_ptr<HttpClient> client_;
  MetricsRegistry metrics_;
  Router router_;
  std::unique_ptr<MlScheduler> ml_;
  std::optional<long> capacity_;  // nullopt: unlimited
};

TEST_F(MlCapacityTest, ShrinkingCapacityTakesEffectInTheNextAnswer) {
  // Plain names, not structured bindings: clang 14 cannot capture those in a lambda.
  auto r1 = call("POST", "/train", kTrain);
  auto r2 = call("POST", "/train", kTrain);
  ASSERT_EQ(r1.first, 200);
  ASSERT_EQ(r2.first, 200);
  const std::string first = r1.second, second = r2.second;
  EXPECT_NE(call("GET", "/v1/jobs/" + first).second.find("\"parallelism\":4"), std::string::npos);

  capacity_ = 5;  // an agent went away: 5 functions fit now, shared 3 + 2
  // The recompute tick has seen it once the caps say so.
  ASSERT_TRUE(run_until(
      &loop_, [&] { return call("GET", "/v1/jobs/" + second).second.find("\"cap\":2") != std::string::npos; }));
  EXPECT_TRUE(ps_.calls_to("/update/").empty()) << "an update went out that no job asked for";

  // Each job's next epoch is answered within its share, a faster one too.
  auto [s3, b3] =
      call("POST", "/job", R"({"job":{"id":")" + first + R"(","state":{"parallelism":4,"elapsed_time":10}}})");
  ASSERT_EQ(s3, 200) << b3;
  auto [s4, b4] =
      call("POST", "/job", R"({"job":{"id":")" + second + R"(","state":{"parallelism":4,"elapsed_time":10}}})");
  ASSERT_EQ(s4, 200) << b4;
  ASSERT_TRUE(ps_.wait_for("/update/" + first, 1));
  ASSERT_TRUE(ps_.wait_for("/update/" + second, 1));
  EXPECT_EQ(ps_parallelism(first), 3);
  EXPECT_EQ(ps_parallelism(second), 2);
  auto [s5, b5] =
      call("POST", "/job", R"({"job":{"id":")" + second + R"(","state":{"parallelism":2,"elapsed_time":5}}})");
  ASSERT_EQ(s5, 200) << b5;
  ASSERT_TRUE(ps_.wait_for("/update/" + second, 2));
  EXPECT_EQ(ps_parallelism(second), 2);

  capacity_ = 1;  // less than one per job: nobody goes below 1
  ASSERT_TRUE(run_until(
      &loop_, [&] { return call("GET", "/v1/jobs/" + first).second.find("\"cap\":1,") != std::string::npos; }));
  auto [s6, b6] =
      call("POST", "/job", R"({"job":{"id":")" + first + R"(","state":{"parallelism":3,"elapsed_time":10}}})");
  ASSERT_EQ(s6, 200) << b6;
  ASSERT_TRUE(ps_.wait_for("/update/" + first, 2));
  EXPECT_EQ(ps_parallelism(first), 1);
  // Exactly one update per /job: 2 for the first job, 2 for the second.
  EXPECT_EQ(ps_.calls_to("/update/" + first).size(), 2u);
  EXPECT_EQ(ps_.calls_to("/update/" + second).size(), 2u);
}

TEST_F(MlCapacityTest, AJobSilentForTenEpochsIsStale) {
  auto created = call("POST", "/train", kTrain);
  ASSERT_EQ(created.first, 200);
  const std::string id = created.second;
  EXPECT_NE(call("GET", "/v1/jobs/" + id).second.find("\"stale\":false"), std::string::npos);
  // Epochs of 100 ms: stale after a second without a report. (At 5 ms the
  // 50 ms window could pass during the report's own fsync on a loaded
  // machine, and the fresh job read as stale.)
  auto [s, body] =
      call("POST", "/job", R"({"job":{"id":")" + id + R"(","state":{"parallelism":4,"elapsed_time":0.1}}})");
  ASSERT_EQ(s, 200) << body;
  EXPECT_NE(call("GET", "/v1/jobs/" + id).second.find("\"stale\":false"), std::string::npos);
  // Ten epochs without a report.
  ASSERT_TRUE(run_until(
      &loop_, [&] { return call("GET", "/v1/jobs/" + id).second.find("\"stale\":true") != std::string::npos; }));
}

}  // namespace
}  // namespace uvsched::test
