// The recompute timer against a capacity the test controls (the pod
// scheduler's live offers will provide it): jobs above their fair share are
// scaled down at once and the PS told; silent jobs are marked stale.
#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>

#include "handlers/ml/ml_scheduler.h"
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
    ml_ = std::make_unique<MlScheduler>(&loop_, *clock_, *store_, *client_, metrics_, s, [] { return true; });
    ml_->set_capacity([this] { return capacity_; });
    ml_->add_routes(router_);
    ml_->start();
  }
  void TearDown() override {
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

TEST_F(MlCapacityTest, ShrinkingCapacityScalesJobsDownToFairShares) {
  auto [s1, first] = call("POST", "/train", kTrain);
  auto [s2, second] = call("POST", "/train", kTrain);
  ASSERT_EQ(s1, 200);
  ASSERT_EQ(s2, 200);
  EXPECT_NE(call("GET", "/v1/jobs/" + first).second.find("\"parallelism\":4"), std::string::npos);

  capacity_ = 5;  // an agent went away: 5 functions fit now, shared 3 + 2
  ASSERT_TRUE(run_until(&loop_, [&] { return ps_parallelism(first) == 3 && ps_parallelism(second) == 2; }))
      << "first=" << ps_parallelism(first) << " second=" << ps_parallelism(second);
  std::string view = call("GET", "/v1/jobs/" + second).second;
  EXPECT_NE(view.find("\"reason\":\"capacity\""), std::string::npos) << view;
  EXPECT_NE(view.find("\"cap\":2"), std::string::npos) << view;

  // A faster epoch cannot climb past the share either.
  auto [s3, body] = call("POST", "/job", R"({"job":{"id":")" + second + R"(","state":{"parallelism":2,"elapsed_time":5}}})");
  ASSERT_EQ(s3, 200) << body;
  ASSERT_TRUE(ps_.wait_for("/update/" + second, 2));
  EXPECT_EQ(ps_parallelism(second), 2);

  capacity_ = 1;  // less than one per job: nobody goes below 1
  ASSERT_TRUE(run_until(&loop_, [&] { return ps_parallelism(first) == 1 && ps_parallelism(second) == 1; }))
      << "first=" << ps_parallelism(first) << " second=" << ps_parallelism(second);
}

TEST_F(MlCapacityTest, AJobSilentForTenEpochsIsStale) {
  auto [status, id] = call("POST", "/train", kTrain);
  ASSERT_EQ(status, 200);
  EXPECT_NE(call("GET", "/v1/jobs/" + id).second.find("\"stale\":false"), std::string::npos);
  auto [s, body] = call("POST", "/job", R"({"job":{"id":")" + id + R"(","state":{"parallelism":4,"elapsed_time":0.005}}})");
  ASSERT_EQ(s, 200) << body;
  EXPECT_NE(call("GET", "/v1/jobs/" + id).second.find("\"stale\":false"), std::string::npos);
  // Ten epochs of 5 ms without a report.
  ASSERT_TRUE(run_until(&loop_, [&] { return call("GET", "/v1/jobs/" + id).second.find("\"stale\":true") != std::string::npos; }));
}

}  // namespace
}  // namespace uvsched::test
