// The ML scheduler's orchestration without sockets or a loop: a FakeStore whose
// answers the test runs, a FakeHttp standing for KubeML's parameter server
// (the test answers each call as the real PS would, or fails it), and a
// ManualClock that drains the queue (advance(0)) and runs deadlines, back-offs
// and the PS time-outs. What it checks is what SPEC §8 asks: a job's id is
// answered once stored; every /job gets exactly one update, stored first or,
// when the store is slow or down, with the job's parallelism kept; /start is
// never sent twice for a job the PS holds; a timed-out update is never resent.
#include "handlers/ml/ml_scheduler.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <memory>
#include <string>

#include "handlers/ops/metrics_registry.h"
#include "reactor/log.h"
#include "reactor/manual_clock.h"
#include "tests/support/fake_http.h"
#include "tests/support/fake_store.h"
#include "tests/support/recording_channel.h"

namespace uvsched {
namespace {

using test::exchange;
using test::FakeHttp;
using test::FakeStore;
using test::status_of;

const std::string kTrain = R"({"model_type":"resnet34","batch_size":128,"epochs":10,"dataset":"cifar10","lr":0.01,)"
                           R"("function_name":"resnet","options":{"default_parallelism":3,"static_parallelism":false,)"
                           R"("validate_every":2,"k":-1,"goal_accuracy":0.9}})";

// kTrain at another batch size: a job of another kind (SpeedHistory::kind_of).
std::string train_of_another_kind() {
  std::string r = kTrain;
  const std::string batch = "\"batch_size\":128";
  return r.replace(r.find(batch), batch.size(), "\"batch_size\":256");
}

std::string job_report(const std::string& id, int parallelism, double elapsed, const std::string& request = kTrain) {
  return R"({"request":)" + request + R"(,"job":{"id":")" + id + R"(","state":{"parallelism":)" +
         std::to_string(parallelism) + R"(,"elapsed_time":)" + std::to_string(elapsed) + "}}}";
}

std::string body_of(const std::string& answer) {
  size_t at = answer.find("\r\n\r\n");
  return at == std::string::npos ? "" : answer.substr(at + 4);
}

constexpr uint64_t kStoreDeadlineMs = 1'000;

class MlSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_configure(LogLevel::kOff, LogFormat::kText);
    ml_ = make_scheduler();
    ml_->start();
    store_.run();
    ASSERT_TRUE(ml_->loaded());
  }
  void TearDown() override {
    ml_->stop();
    log_configure(LogLevel::kInfo, LogFormat::kText);
  }
  std::unique_ptr<MlScheduler> make_scheduler(ParallelismPolicyKind policy = ParallelismPolicyKind::kKubeml) {
    MlScheduler::Settings s;
    s.policy = policy;
    s.ps_url = "http://ps";
    s.metrics_poll_interval_ms = 0;
    s.recompute_interval_ms = 0;
    s.decision_store_deadline_ms = kStoreDeadlineMs;
    s.ps_check_interval_ms = ps_check_interval_ms_;
    router_ = Router();
    auto ml = std::make_unique<MlScheduler>(clock_, store_, ps_, metrics_, s, [this] { return leading_; });
    ml->add_routes(router_);
    return ml;
  }
  // A new daemon over the same store (and PS), the jobs loaded from it.
  void restart_scheduler() {
    ml_->stop();
    ml_ = make_scheduler();
    ml_->start();
    store_.run();
  }
  // The scheduler replaced by one on the speedup policy over `workers` workers.
  void restart_with_speedup_policy(long workers) {
    ml_->stop();
    ml_ = make_scheduler(ParallelismPolicyKind::kSpeedup);
    ml_->set_capacity([workers]() -> std::optional<long> { return workers; });
    ml_->start();
    store_.run();
  }
  // The queue drains on the loop's next turn; then the store answers.
  void turn() {
    clock_.advance(0);
    store_.run();
  }
  // A /train answered with its id, and the PS's /start answered 200.
  std::string train(const std::string& request = kTrain) {
    auto ex = exchange(router_, "POST", "/train", request);
    turn();
    EXPECT_EQ(status_of(ex->out), 200) << ex->out;
    std::string id = body_of(ex->out);
    EXPECT_TRUE(ps_.answer(ps_.next("POST /start"), 200)) << "no /start for " << id;
    store_.run();
    return id;
  }
  std::shared_ptr<detail::Exchange> report(const std::string& id, int parallelism, double elapsed,
                                           const std::string& request = kTrain) {
    return exchange(router_, "POST", "/job", job_report(id, parallelism, elapsed, request));
  }
  // `id` reports an epoch: the parallelism its update names (-1: none), that
  // update answered 200 so that the job can report its next epoch.
  int decided(const std::string& id, int parallelism, double elapsed, const std::string& request = kTrain) {
    report(id, parallelism, elapsed, request);
    turn();
    int told = update_parallelism(id);
    EXPECT_TRUE(ps_.answer(ps_.next("POST /update/" + id), 200)) << "no /update for " << id;
    return told;
  }
  // The parallelism of the oldest open /update for `id` (-1: none).
  int update_parallelism(const std::string& id) {
    FakeHttp::Call* c = ps_.next("POST /update/" + id);
    if (!c) return -1;
    size_t at = c->request.body.find("\"parallelism\":");
    return at == std::string::npos ? -1 : std::atoi(c->request.body.c_str() + at + 14);
  }
  // Stops the scheduler as a stopping daemon does, then waits (up to
  // kStopBoundMs) for the updates it owes: true once the daemon may close
  // its client.
  static constexpr uint64_t kStopBoundMs = 5'000;
  std::shared_ptr<bool> stop_and_await_updates() {
    ml_->stop();
    auto delivered = std::make_shared<bool>(false);
    ml_->when_updates_delivered(kStopBoundMs, [delivered] { *delivered = true; });
    return delivered;
  }
  size_t calls_to(const std::string& prefix) const {
    size_t n = 0;
    for (const auto& line : ps_.log()) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  }

  ManualClock clock_;
  FakeStore store_;
  FakeHttp ps_;
  MetricsRegistry metrics_;
  Router router_;
  bool leading_ = true;
  uint64_t ps_check_interval_ms_ = 0;  // the PS is asked what it holds at load only
  std::unique_ptr<MlScheduler> ml_;
};

// Jobs that arrived before the agents offered get their share of the workers
// that came since at their next epoch, not at the next recompute (which this
// fixture never runs); a drop in capacity waits for the recompute.
TEST_F(MlSchedulerTest, CapacityThatRoseSinceTheSharesWereComputedCountsAtTheNextDecision) {
  ml_->stop();
  ml_ = make_scheduler();
  auto workers = std::make_shared<long>(2);
  ml_->set_capacity([workers]() -> std::optional<long> { return *workers; });
  ml_->start();
  store_.run();
  std::string a = train(), b = train();
  EXPECT_EQ(decided(a, 1, 10.0), 1) << "a share of 2 workers between two jobs";
  *workers = 8;
  EXPECT_EQ(decided(b, 1, 10.0), 2) << "KubeML's rule grows it within its share of 8";
  *workers = 2;
  EXPECT_EQ(decided(a, 1, 10.0), 2) << "the drop waits for the recompute";
}

TEST_F(MlSchedulerTest, AJobsIdIsAnsweredOnlyOnceItIsStoredAndThenThePsStartsIt) {
  auto ex = exchange(router_, "POST", "/train", kTrain);
  EXPECT_TRUE(ex->out.empty()) << "queued for the loop's next turn";
  clock_.advance(0);
  EXPECT_TRUE(ex->out.empty()) << "answered before it was stored";
  EXPECT_EQ(ps_.open_calls(), 0u) << "the PS hears of a job only once it is stored";
  store_.run();
  ASSERT_EQ(status_of(ex->out), 200) << ex->out;
  std::string id = body_of(ex->out);
  EXPECT_EQ(id.size(), 8u) << id;
  EXPECT_TRUE(store_.value(std::string(MlScheduler::kRequestPrefix) + id).has_value());
  EXPECT_TRUE(store_.value(std::string(MlScheduler::kJobPrefix) + id).has_value());
  FakeHttp::Call* start = ps_.next("POST /start");
  ASSERT_NE(start, nullptr);
  EXPECT_NE(start->request.body.find("\"id\":\"" + id + "\""), std::string::npos) << start->request.body;
  EXPECT_NE(start->request.body.find("\"parallelism\":3"), std::string::npos) << "its default parallelism";
}

// A job whose /job answer never reached it (its connection closed while the
// decision was stored) goes on at its parallelism without waiting. An update
// sent all the same would be taken as its next epoch's answer, and every
// answer after it would come an epoch late.
TEST_F(MlSchedulerTest, NoUpdateIsSentForAnAnswerThatNeverReachedTheJob) {
  std::string id = train();
  auto ex = report(id, 3, 10.0);
  ex->peer_left = true;
  turn();
  EXPECT_EQ(status_of(ex->out), 200) << "decided and answered as any";
  EXPECT_EQ(ps_.next("POST /update/" + id), nullptr) << "an update the job would take as its next epoch's";
  EXPECT_EQ(metrics_.counter_sum("uvsched_ml_updates_withheld_total"), 1);
  EXPECT_NE(decided(id, 3, 10.0), -1) << "its next report gets its update";
  EXPECT_EQ(calls_to("POST /update/" + id), 1u);
}

TEST_F(MlSchedulerTest, ATrainThatCannotBeStoredIs503AndForgotten) {
  store_.set_down("etcd: no leader");
  std::string answer = test::route(router_, "POST", "/train", kTrain);
  EXPECT_EQ(status_of(answer), 503) << answer;
  turn();
  EXPECT_EQ(ps_.calls().size(), 0u);
  EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs")), 200);
  EXPECT_EQ(body_of(test::route(router_, "GET", "/v1/jobs")).find("\"id\""), std::string::npos);
}

TEST_F(MlSchedulerTest, EveryEpochIsStoredThenAnsweredWithExactlyOneUpdate) {
  std::string id = train();
  struct Epoch {
    int runs;
    double seconds;
    int next;  // what the policy decides (KubeML's thresholds: faster <= x1.05, slower >= x1.2)
  } epochs[] = {{3, 10.0, 4}, {4, 9.0, 5}, {5, 10.0, 5}, {5, 11.0, 4}};
  for (const auto& e : epochs) {
    auto ex = report(id, e.runs, e.seconds);
    clock_.advance(0);
    EXPECT_TRUE(ex->out.empty()) << "answered before its decision was stored";
    EXPECT_EQ(update_parallelism(id), -1) << "the PS heard before the decision was stored";
    store_.run();
    EXPECT_EQ(status_of(ex->out), 200) << ex->out;
    EXPECT_EQ(update_parallelism(id), e.next) << e.seconds << " s at " << e.runs;
    ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + id), 200));
  }
  EXPECT_EQ(calls_to("POST /update/" + id), 4u) << "one update per /job";
  EXPECT_EQ(calls_to("POST /start"), 1u);
}

TEST_F(MlSchedulerTest, ADecisionNotStoredInTimeKeepsTheJobsParallelismForThatEpoch) {
  std::string id = train();
  auto ex = report(id, 3, 10.0);
  clock_.advance(0);  // decided (4), its write not answered yet
  clock_.advance(kStoreDeadlineMs - 1);
  EXPECT_TRUE(ex->out.empty()) << "not before the deadline";
  clock_.advance(1);
  EXPECT_EQ(status_of(ex->out), 200) << "answered at the deadline: " << ex->out;
  EXPECT_EQ(update_parallelism(id), 3) << "the parallelism it runs, not the unstored decision";
  store_.run();  // the late write lands; memory holds 3, and that is stored next
  clock_.advance(1000);
  store_.run();
  std::string job = test::route(router_, "GET", "/v1/jobs/" + id);
  EXPECT_NE(body_of(job).find("\"parallelism\":3"), std::string::npos) << job;
  EXPECT_NE(body_of(job).find("\"held\""), std::string::npos) << job;
  EXPECT_NE(store_.value(std::string(MlScheduler::kJobPrefix) + id).value_or("").find("\"parallelism\":3"),
            std::string::npos)
      << *store_.value(std::string(MlScheduler::kJobPrefix) + id);
  EXPECT_EQ(calls_to("POST /update/" + id), 1u);
}

TEST_F(MlSchedulerTest, WithTheStoreDownAJobIsStillAnsweredAtOnceWithItsParallelism) {
  std::string id = train();
  store_.set_down("etcd: no leader");
  auto ex = report(id, 3, 10.0);
  clock_.advance(0);
  EXPECT_EQ(status_of(ex->out), 200) << ex->out;
  EXPECT_EQ(update_parallelism(id), 3);
}

TEST_F(MlSchedulerTest, AStartThatTimedOutIsFollowedByAQuestionNotASecondStart) {
  auto ex = exchange(router_, "POST", "/train", kTrain);
  turn();
  std::string id = body_of(ex->out);
  ASSERT_TRUE(ps_.fail(ps_.next("POST /start"), UV_ETIMEDOUT, "request timed out"));
  clock_.advance(100);  // the first back-off
  FakeHttp::Call* tasks = ps_.next("GET /tasks");
  ASSERT_NE(tasks, nullptr) << "the PS is asked whether it holds the job";
  ASSERT_TRUE(ps_.answer(tasks, 200, R"([{"job":{"id":")" + id + R"("}}])"));
  clock_.advance(60'000);
  EXPECT_EQ(calls_to("POST /start"), 1u) << "a second /start makes the PS drop the job";
  // Its epochs' updates go out as usual.
  report(id, 3, 10.0);
  turn();
  EXPECT_EQ(update_parallelism(id), 4);
}

TEST_F(MlSchedulerTest, AStartThePsDoesNotHoldIsSentAgain) {
  auto ex = exchange(router_, "POST", "/train", kTrain);
  turn();
  ASSERT_TRUE(ps_.fail(ps_.next("POST /start"), UV_ECONNRESET, "connection closed before the response"));
  clock_.advance(100);
  ASSERT_TRUE(ps_.answer(ps_.next("GET /tasks"), 200, "null"));  // Go's empty index
  EXPECT_NE(ps_.next("POST /start"), nullptr);
  EXPECT_EQ(calls_to("POST /start"), 2u);
}

TEST_F(MlSchedulerTest, AnUpdateThatTimedOutIsNeverSentAgain) {
  std::string id = train();
  report(id, 3, 10.0);
  turn();
  ASSERT_TRUE(ps_.fail(ps_.next("POST /update/" + id), UV_ETIMEDOUT, "request timed out"));
  clock_.advance(120'000);
  EXPECT_EQ(calls_to("POST /update/" + id), 1u) << "a second copy would answer a later epoch";
}

// KubeML's PS reads the whole request, then hands the update to the job
// whatever becomes of the connection: one lost after it was written may have
// arrived, and is not sent again.
TEST_F(MlSchedulerTest, AnUpdateWhoseConnectionWasLostAfterItWasWrittenIsNeverSentAgain) {
  std::string id = train();
  report(id, 3, 10.0);
  turn();
  ASSERT_TRUE(ps_.fail(ps_.next("POST /update/" + id), UV_ECONNRESET, "connection closed before the response",
                       /*sent=*/true));
  clock_.advance(120'000);
  EXPECT_EQ(calls_to("POST /update/" + id), 1u) << "a second copy would answer a later epoch";
}

TEST_F(MlSchedulerTest, AnUpdateThatSurelyDidNotArriveIsRetriedOnce) {
  std::string id = train();
  report(id, 3, 10.0);
  turn();
  ASSERT_TRUE(ps_.fail(ps_.next("POST /update/" + id), UV_ECONNREFUSED, "connection refused"));
  clock_.advance(99);
  EXPECT_EQ(calls_to("POST /update/" + id), 1u) << "not before its back-off";
  clock_.advance(1);
  EXPECT_EQ(update_parallelism(id), 4) << "the same update, once more";
  ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + id), 200));
  clock_.advance(120'000);
  EXPECT_EQ(calls_to("POST /update/" + id), 2u);
}

// A stopping daemon closes its client (which cancels every call) only once
// the updates its train jobs wait for are delivered: one in flight, and one
// that failed and waits for its back-off.
TEST_F(MlSchedulerTest, UpdatesOwedWhenStoppingAreDeliveredBeforeTheClientMayClose) {
  std::string a = train(), b = train();
  report(a, 3, 10.0);
  report(b, 3, 10.0);
  turn();
  ASSERT_TRUE(ps_.fail(ps_.next("POST /update/" + b), UV_ECONNREFUSED, "connection refused"));
  auto delivered = stop_and_await_updates();
  clock_.advance(0);
  EXPECT_FALSE(*delivered) << "a's update is in flight";
  ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + a), 200));
  clock_.advance(0);
  EXPECT_FALSE(*delivered) << "b's waits for its back-off";
  clock_.advance(100);
  ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + b), 200));
  EXPECT_FALSE(*delivered) << "run from a timer, not from within the call's answer";
  clock_.advance(0);
  EXPECT_TRUE(*delivered);
}

TEST_F(MlSchedulerTest, AStopWaitsForOwedUpdatesNoLongerThanItsBound) {
  std::string id = train();
  report(id, 3, 10.0);
  turn();
  auto delivered = stop_and_await_updates();
  clock_.advance(kStopBoundMs - 1);
  EXPECT_FALSE(*delivered);
  clock_.advance(1);
  EXPECT_TRUE(*delivered) << "the PS never answered: the stop goes on";
}

TEST_F(MlSchedulerTest, AStopWithNoUpdateOwedGoesOnAtTheNextTurn) {
  std::string id = train();
  report(id, 3, 10.0);
  turn();
  ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + id), 200));
  auto delivered = stop_and_await_updates();
  clock_.advance(0);
  EXPECT_TRUE(*delivered);
}

TEST_F(MlSchedulerTest, AJobThePsNoLongerHoldsGetsNoMoreUpdatesButItsReportsAreAnswered) {
  std::string id = train();
  report(id, 3, 10.0);
  turn();
  ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + id), 400, "job not found"));
  auto ex = report(id, 4, 10.0);
  turn();
  EXPECT_EQ(status_of(ex->out), 200);
  EXPECT_EQ(calls_to("POST /update/" + id), 1u);
}

TEST_F(MlSchedulerTest, AFinishedJobIsForgottenItsRecordsDeletedAndItsPsCallCancelled) {
  std::string id = train();
  report(id, 3, 10.0);
  turn();
  FakeHttp::Call* update = ps_.next("POST /update/" + id);
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(status_of(test::route(router_, "DELETE", "/finish/" + id)), 200);
  store_.run();
  EXPECT_TRUE(update->cancelled);
  EXPECT_FALSE(store_.value(std::string(MlScheduler::kJobPrefix) + id).has_value());
  EXPECT_FALSE(store_.value(std::string(MlScheduler::kRequestPrefix) + id).has_value());
  EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + id)), 404);
}

TEST_F(MlSchedulerTest, ARestartKeepsItsJobsAndAsksThePsOnlyAboutUnconfirmedStarts) {
  std::string started = train();
  auto ex = exchange(router_, "POST", "/train", kTrain);
  turn();
  std::string unconfirmed = body_of(ex->out);  // its /start never answered
  report(started, 3, 10.0);
  turn();
  ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + started), 200));

  size_t before = ps_.calls().size();
  restart_scheduler();
  ASSERT_TRUE(ml_->loaded());
  std::vector<std::string> log = ps_.log();
  std::vector<std::string> after(log.begin() + static_cast<long>(before), log.end());
  // The unconfirmed start is asked about; and once loaded, what the PS holds
  // (a job that ended while no daemon listened is forgotten: the next test).
  // Nothing is sent again.
  EXPECT_EQ(after, (std::vector<std::string>{"GET /tasks", "GET /tasks"}));
  ASSERT_TRUE(ps_.answer(ps_.calls()[ps_.calls().size() - 1].get(), 200, R"([{"job":{"id":")" + started + R"("}}])"));
  std::string job = test::route(router_, "GET", "/v1/jobs/" + started);
  EXPECT_NE(body_of(job).find("\"reference_epoch_seconds\":10"), std::string::npos) << job;
  // The started job's next epoch is decided from its stored reference.
  report(started, 4, 9.0);
  turn();
  EXPECT_EQ(update_parallelism(started), 5);
  (void)unconfirmed;
}

// A job that ran out of epochs while no daemon listened ended with a /finish
// nobody heard (the PS sends it once). The next daemon asks the PS what it
// holds and forgets, with its records, a resumed job the PS no longer holds
// and that has not reported since; the rest it keeps.
TEST_F(MlSchedulerTest, AJobThatEndedWhileNoDaemonListenedIsForgottenWhenTheNextLoads) {
  std::string ended = train(), running = train(), reporting = train();
  restart_scheduler();
  ASSERT_TRUE(ml_->loaded());
  FakeHttp::Call* tasks = ps_.next("GET /tasks");
  ASSERT_NE(tasks, nullptr);
  report(reporting, 3, 10.0);  // reports before the PS answers: kept, whatever the PS says
  turn();
  ASSERT_TRUE(ps_.answer(tasks, 200, R"([{"job":{"id":")" + running + R"("}}])"));
  store_.run();
  EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + ended)), 404);
  EXPECT_FALSE(store_.value(std::string(MlScheduler::kJobPrefix) + ended).has_value());
  EXPECT_FALSE(store_.value(std::string(MlScheduler::kRequestPrefix) + ended).has_value());
  EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + running)), 200);
  EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + reporting)), 200);
  EXPECT_EQ(metrics_.counter_sum("uvsched_ml_jobs_lost_total", "phase=\"ended-unheard\""), 1);
}

// A PS that cannot say what it holds (an error, an unreachable PS) makes the
// daemon forget nothing.
TEST_F(MlSchedulerTest, APsThatCannotSayWhatItHoldsMakesTheNextDaemonForgetNothing) {
  std::string a = train(), b = train();
  for (int answer : {500, 0}) {
    restart_scheduler();
    FakeHttp::Call* tasks = ps_.next("GET /tasks");
    ASSERT_NE(tasks, nullptr);
    if (answer) {
      ASSERT_TRUE(ps_.answer(tasks, answer, "boom"));
    } else {
      ASSERT_TRUE(ps_.fail(tasks, UV_ECONNREFUSED, "connection refused"));
    }
    store_.run();
    EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + a)), 200);
    EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + b)), 200);
  }
}

// The PS sends a job's one /finish and goes on whatever became of it; and a
// job it dropped (400 to /update) never finishes. The leader asks it, every
// interval, which jobs it holds, and forgets a started one it no longer
// holds and that has not reported since the question.
TEST_F(MlSchedulerTest, AJobWhoseFinishWasLostIsForgottenAtTheNextCheck) {
  constexpr uint64_t kInterval = 30'000;
  ps_check_interval_ms_ = kInterval;
  restart_scheduler();
  std::string ended = train(), running = train(), reporting = train(), dropped = train();
  EXPECT_EQ(decided(reporting, 3, 10.0), 4);
  report(dropped, 3, 10.0);
  turn();
  ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + dropped), 400, "job not found"));
  EXPECT_EQ(calls_to("GET /tasks"), 0u) << "no job was started when the jobs were loaded";

  clock_.advance(kInterval);
  FakeHttp::Call* tasks = ps_.next("GET /tasks");
  ASSERT_NE(tasks, nullptr);
  report(reporting, 4, 9.0);  // reports while the PS answers: kept, whatever the PS says
  turn();
  ASSERT_TRUE(ps_.answer(tasks, 200, R"([{"job":{"id":")" + running + R"("}}])"));
  store_.run();
  for (const std::string& gone : {ended, dropped}) {
    EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + gone)), 404) << gone;
    EXPECT_FALSE(store_.value(std::string(MlScheduler::kJobPrefix) + gone).has_value());
  }
  EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + running)), 200);
  EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + reporting)), 200);
  EXPECT_EQ(metrics_.counter_sum("uvsched_ml_jobs_lost_total", "phase=\"ended-unheard\""), 2);

  // A PS that cannot say makes it forget nothing; a PS slower than the
  // interval is not asked again before it answers.
  ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + reporting), 200));
  clock_.advance(kInterval);
  tasks = ps_.next("GET /tasks");
  ASSERT_NE(tasks, nullptr);
  clock_.advance(kInterval);
  EXPECT_EQ(calls_to("GET /tasks"), 2u);
  ASSERT_TRUE(ps_.answer(tasks, 500, "boom"));
  store_.run();
  EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + reporting)), 200);
  clock_.advance(kInterval);
  tasks = ps_.next("GET /tasks");
  ASSERT_NE(tasks, nullptr) << "asked again at the next interval";
  ASSERT_TRUE(ps_.answer(tasks, 200, "null"));  // Go's empty index: every job has ended
  store_.run();
  EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + reporting)), 404);
  EXPECT_EQ(status_of(test::route(router_, "GET", "/v1/jobs/" + running)), 404);
}

// A /job reaches a daemon that does not lead only when no leader was known
// for as long as it waited (StandbyRedirect): refused, the train job would
// wait for its update forever, so it keeps the parallelism it reported.
TEST_F(MlSchedulerTest, AStandbyRefusesTrainingButAJobsEpochKeepsItsParallelism) {
  leading_ = false;
  EXPECT_EQ(status_of(test::route(router_, "POST", "/train", kTrain)), 503);
  EXPECT_EQ(status_of(test::route(router_, "POST", "/job", job_report("abc", 3, 10.0))), 200);
  EXPECT_EQ(update_parallelism("abc"), 3);
  EXPECT_EQ(metrics_.counter_sum("uvsched_ml_answers_held_total", "cause=\"no-leader\""), 1);
  leading_ = true;
  EXPECT_FALSE(train().empty());
}

// An update the PS did not take (refused) waits for its retry; leadership
// lost meanwhile, it is still delivered: it is the train job's only answer.
TEST_F(MlSchedulerTest, AnUpdateOwedWhenLeadershipIsLostIsStillDelivered) {
  std::string id = train();
  report(id, 3, 10.0);
  turn();
  ASSERT_TRUE(ps_.fail(ps_.next("POST /update/" + id), UV_ECONNREFUSED, "connection refused"));
  leading_ = false;
  ml_->leadership_changed(false);
  clock_.advance(100);
  EXPECT_EQ(update_parallelism(id), 4) << "the owed update, sent again after its back-off";
  ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + id), 200));
  clock_.advance(120'000);
  EXPECT_EQ(calls_to("POST /update/" + id), 2u) << "and nothing more for a job this daemon no longer follows";
}

// An update on its way when leadership is lost is the train job's only
// answer as well: refused, it is sent again after its back-off, and a daemon
// stopping right after the loss waits for it before it closes its client.
TEST_F(MlSchedulerTest, AnUpdateInFlightWhenLeadershipIsLostIsStillRetriedAndAStopWaitsForIt) {
  std::string id = train();
  report(id, 3, 10.0);
  turn();
  FakeHttp::Call* in_flight = ps_.next("POST /update/" + id);
  ASSERT_NE(in_flight, nullptr);
  leading_ = false;
  ml_->leadership_changed(false);
  auto delivered = stop_and_await_updates();
  clock_.advance(0);
  EXPECT_FALSE(*delivered) << "its update is still on its way";
  ASSERT_TRUE(ps_.fail(in_flight, UV_ECONNREFUSED, "connection refused"));
  clock_.advance(100);
  EXPECT_EQ(update_parallelism(id), 4) << "the refused update, sent again after its back-off";
  EXPECT_FALSE(*delivered);
  ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + id), 200));
  clock_.advance(0);
  EXPECT_TRUE(*delivered);
  clock_.advance(120'000);
  EXPECT_EQ(calls_to("POST /update/" + id), 2u);
}

// A /job taken but not yet decided when leadership goes is answered then,
// at the parallelism the job reported.
TEST_F(MlSchedulerTest, AJobReportNotYetDecidedWhenLeadershipGoesKeepsItsParallelism) {
  std::string id = train();
  auto ex = report(id, 3, 10.0);  // queued: drained on the next turn
  leading_ = false;
  ml_->leadership_changed(false);
  EXPECT_EQ(status_of(ex->out), 200);
  EXPECT_EQ(update_parallelism(id), 3);
  turn();
  EXPECT_EQ(calls_to("POST /update/" + id), 1u);
}

TEST_F(MlSchedulerTest, TheSpeedupPolicyGivesAJobTheWorkersItsModelSaysAndTheJobNearerItsEndKeepsThem) {
  restart_with_speedup_policy(8);
  std::string first = train();
  // One epoch at 3 workers: the prior (95% parallel) says more workers pay: all 8.
  EXPECT_EQ(decided(first, 3, 40.0), 8);
  // At 8 it took 15 s: t(p) = 120/p fits both points; 8 is still best.
  EXPECT_EQ(decided(first, 8, 15.0), 8);
  // A second job of its kind starts at its default (3). Both gain as much
  // from a worker (120/p), and the first is nearer its end (7 epochs left
  // against 10): it keeps all but the newcomer's one worker, and the
  // newcomer is told 1 when it reports.
  std::string second = train();
  report(first, 8, 15.0);
  turn();
  EXPECT_EQ(update_parallelism(first), 7);
  ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + first), 200));
  std::string job = test::route(router_, "GET", "/v1/jobs/" + first);
  EXPECT_NE(body_of(job).find("\"speedup\""), std::string::npos) << "the decision's reason: " << job;
  report(second, 3, 40.0);
  turn();
  EXPECT_EQ(update_parallelism(second), 1);
}

// The jobs in view are kept between decisions (MlScheduler's by_arrival_):
// a job that finishes leaves it, and one that arrives joins it, before the
// next decision. Kept stale, the first job would stay at 7 after the second
// finished, and take all 8 with a third running.
TEST_F(MlSchedulerTest, TheSpeedupPolicysViewFollowsJobsThatFinishAndArrive) {
  restart_with_speedup_policy(8);
  std::string first = train();
  ASSERT_EQ(decided(first, 3, 40.0), 8);  // the prior: more workers pay
  ASSERT_EQ(decided(first, 8, 15.0), 8);  // t(p) = 120/p
  std::string second = train();
  ASSERT_EQ(decided(first, 8, 15.0), 7) << "one worker for the newcomer";
  ASSERT_EQ(decided(second, 3, 40.0), 1);
  ASSERT_EQ(status_of(test::route(router_, "DELETE", "/finish/" + second)), 200);
  store_.run();
  EXPECT_EQ(decided(first, 7, 120.0 / 7), 8) << "the finished job's worker back";
  std::string third = train();
  EXPECT_EQ(decided(first, 8, 15.0), 7) << "the newcomer in view";
}

// And each job's entry in the kept view has its latest model: a job whose
// epoch at 8 workers took five times as long as at 3 is told fewer than 8
// at once (on the model the view was built with, one epoch at 3 and the
// prior, 8 would still look fastest).
TEST_F(MlSchedulerTest, TheSpeedupPolicysViewHasEachJobsLatestModel) {
  restart_with_speedup_policy(8);
  std::string job = train();
  ASSERT_EQ(decided(job, 3, 40.0), 8) << "the prior: more workers pay";
  report(job, 8, 200.0);
  turn();
  EXPECT_LT(update_parallelism(job), 8) << "measured slower at 8 than at 3";
}

// Jobs of one kind (function, model, dataset, batch size) take the same time
// per epoch: a newcomer's model starts from what its predecessors measured,
// not from the optimistic prior.
TEST_F(MlSchedulerTest, TheSpeedupPolicyStartsANewJobFromWhatJobsOfItsKindMeasured) {
  restart_with_speedup_policy(8);
  // The first job does not scale at all: 100 s an epoch at 1, 2 and 4 workers.
  std::string first = train();
  for (int p : {1, 2, 4}) ASSERT_GE(decided(first, p, 100.0), 1);
  // A second job of its kind, one epoch at 3: its kind says no worker helps.
  std::string second = train();
  EXPECT_EQ(decided(second, 3, 100.0), 1) << "what its kind measured at 1, 2 and 4";
  // The same epoch from a job of another kind (another batch size): nothing
  // is known of it but its one point, and the prior tries more workers.
  std::string other_kind = train_of_another_kind();
  std::string third = train(other_kind);
  report(third, 3, 100.0, other_kind);
  turn();
  EXPECT_GT(update_parallelism(third), 3) << "the prior: 95% parallel";
}

// A job's model is fitted again when its kind learns something where the job
// has no points of its own, though the job has not reported since: here a
// job that measured one epoch at 2 (the prior makes it scale) and another
// of its kind that measured no gain at 1, 4 and 8 workers. Kept on its
// first fit, it would go on claiming workers from a newcomer that scales.
TEST_F(MlSchedulerTest, TheSpeedupPolicyRefitsAJobWhenItsKindLearnsWhereTheJobNeverRan) {
  restart_with_speedup_policy(8);
  std::string first = train();
  ASSERT_GT(decided(first, 2, 100.0), 2) << "the prior: 95% parallel";
  std::string second = train();
  for (int p : {1, 4, 8}) ASSERT_GE(decided(second, p, 100.0), 1);
  std::string other_kind = train_of_another_kind();
  std::string third = train(other_kind);
  report(third, 2, 100.0, other_kind);
  turn();
  EXPECT_EQ(update_parallelism(third), 6) << "all but one worker for each job of the kind that does not scale";
}

// Reports that the loop takes in one turn are decided together (SpeedupRound):
// every report's epoch is in the models before the cluster is divided, and
// each decision is made knowing the ones before it, so the answers do not
// depend on which report came first. The case of
// TheSpeedupPolicyGivesAJobTheWorkersItsModelSaysAndTheJobNearerItsEndKeepsThem,
// with both reports in one turn: the older job is told 7 and the newcomer 1,
// in either order. (Decided one at a time, a newcomer decided first saw the
// older job's view before its report, and was told 4: 11 workers of 8.)
// Each order runs on a kind of its own, so that the first run's epochs do
// not teach the second.
TEST_F(MlSchedulerTest, TheSpeedupPolicyDecidesReportsOfOneTurnTogetherWhateverTheirOrder) {
  restart_with_speedup_policy(8);
  std::vector<std::pair<int, int>> told;  // (the older job's, the newcomer's)
  for (bool newcomer_first : {false, true}) {
    std::string kind = newcomer_first ? train_of_another_kind() : kTrain;
    std::string older = train(kind);
    ASSERT_EQ(decided(older, 3, 40.0, kind), 8) << "the prior: more workers pay";
    std::string newcomer = train(kind);
    if (newcomer_first) report(newcomer, 3, 40.0, kind);
    report(older, 8, 15.0, kind);
    if (!newcomer_first) report(newcomer, 3, 40.0, kind);
    turn();
    told.push_back({update_parallelism(older), update_parallelism(newcomer)});
    ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + older), 200));
    ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + newcomer), 200));
    for (const auto& id : {older, newcomer}) ASSERT_EQ(status_of(test::route(router_, "DELETE", "/finish/" + id)), 200);
    store_.run();
  }
  EXPECT_EQ(told[0], told[1]);
  EXPECT_EQ(told[0], std::make_pair(7, 1));
}

// A job that reports twice in one turn (a client that retried) has each
// report answered, the first decided before the second is taken in, as if
// each had come in a turn of its own.
TEST_F(MlSchedulerTest, TheSpeedupPolicyAnswersAJobThatReportsTwiceInOneTurn) {
  restart_with_speedup_policy(8);
  std::string job = train();
  auto first = report(job, 3, 40.0);
  auto second = report(job, 3, 40.0);
  turn();
  EXPECT_EQ(status_of(first->out), 200) << first->out;
  EXPECT_EQ(status_of(second->out), 200) << second->out;
  std::string got = test::route(router_, "GET", "/v1/jobs/" + job);
  EXPECT_NE(body_of(got).find("\"epochs_reported\":2"), std::string::npos) << got;
}

// A job that says what no job runs is refused, and one at the bounds is
// answered within the cluster: a report of 2^31-1 workers had the speedup
// policy count up to it (hours on the loop thread), and epochs of 1e308
// seconds overflow its model's sums.
TEST_F(MlSchedulerTest, AReportBeyondWhatAnyJobRunsIsRefusedAndOneAtTheBoundsAnswered) {
  restart_with_speedup_policy(8);
  std::string a = train();
  std::string b = train();
  for (const auto& [parallelism, elapsed] : std::vector<std::pair<int64_t, std::string>>{
           {2147483647, "10"}, {kMaxParallelism + 1, "10"}, {3, "1e308"}, {3, "1e9"}}) {
    auto ex = exchange(router_, "POST", "/job",
                       R"({"request":)" + kTrain + R"(,"job":{"id":")" + a + R"(","state":{"parallelism":)" +
                           std::to_string(parallelism) + R"(,"elapsed_time":)" + elapsed + "}}}");
    turn();
    EXPECT_EQ(status_of(ex->out), elapsed == "1e9" ? 200 : 400) << parallelism << " " << elapsed << ": " << ex->out;
    if (elapsed == "1e9") {
      ASSERT_TRUE(ps_.answer(ps_.next("POST /update/" + a), 200));
    }
  }
  for (double e : {1e9, 1e9, 5.0, 1e-300, 1e9, 3.0}) {
    for (const auto& id : {a, b}) {
      int p = decided(id, kMaxParallelism, e);
      EXPECT_GE(p, 1) << e;
      EXPECT_LE(p, 8) << e;
    }
  }
}

}  // namespace
}  // namespace uvsched
