// uvsched against KubeML as it really runs (tools/kubeml_emulator: the PS's
// blocking /start, its unbuffered update hand-off, train jobs that ignore
// /job's status and wait for their update without a time-out). Every test
// runs whole training jobs and then reads the emulator's counts of what a
// real job would have suffered: a second /start, an update it did not ask for,
// a wait past the limit.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <thread>

#include "tests/support/agent_sim_fixture.h"
#include "tests/support/daemon_process.h"
#include "tests/support/etcd_process.h"
#include "tests/support/kubeml_emulator_process.h"
#include "tests/support/raw_http.h"
#include "tests/support/store_fixture.h"

namespace uvsched::test {
namespace {

class KubemlTest : public ::testing::Test {
 protected:
  // The emulator needs the scheduler's address before the daemon has the
  // PS's: the daemon gets a port picked here.
  void SetUp() override { port_ = free_loopback_port(); }
  void TearDown() override {
    if (agents_ > 0) ::kill(agents_, SIGTERM);
    if (daemon_ && daemon_->running()) {
      EXPECT_EQ(daemon_->stop(SIGTERM), 0) << daemon_->log();
    }
  }
  std::string scheduler_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Where KubeML's components call: the daemon's --listen, or its --ml-listen.
  std::string kubeml_url() const {
    return kubeml_port_ ? "http://127.0.0.1:" + std::to_string(kubeml_port_) : scheduler_url();
  }
  void start_emulator(std::vector<std::string> args) {
    args.insert(args.begin(), {"--scheduler", kubeml_url()});
    ASSERT_TRUE(emu_.start(args)) << emu_.log();
  }
  void start_daemon(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--listen",
                                     "127.0.0.1:" + std::to_string(port_),
                                     "--ps-url",
                                     emu_.ps_url(),
                                     "--ps-metrics-url",
                                     emu_.metrics_url(),
                                     "--metrics-poll-interval",
                                     "0.2"};
    args.insert(args.end(), extra.begin(), extra.end());
    daemon_ = std::make_unique<DaemonProcess>(args);
    ASSERT_TRUE(daemon_->start()) << daemon_->log();
    ASSERT_EQ(daemon_->port(), port_);
  }
  // Waits until every job finished; then no violation may be counted.
  // `leader`: the daemon that holds the jobs (default: the one on port_).
  void expect_all_finished_cleanly(int jobs, int epochs, std::chrono::milliseconds deadline, uint16_t leader = 0) {
    ASSERT_TRUE(emu_.wait_stat("finished", jobs, deadline)) << "stats: " << stats_text() << "\nemulator:\n"
                                                            << emu_.log() << "\ndaemon:\n"
                                                            << daemon_->log();
    auto s = emu_.stats();
    EXPECT_EQ(violations_of(s), "") << stats_text() << "\n" << emu_.log();
    EXPECT_EQ(s["starts"], jobs) << "exactly one /start per job";
    EXPECT_EQ(s["epochs"], jobs * epochs);
    EXPECT_EQ(s["finish_errors"], 0);
    // /job and /finish are answered without a body, as KubeML's scheduler
    // answers them: KubeML never closes a body, and one would keep its
    // connection open, out of Go's pool.
    EXPECT_EQ(s["connections_held"], 0);
    // Every /job that reached the scheduler was answered with one update.
    EXPECT_EQ(s["answers"], s["job_posts"] - s["job_post_errors"]);
    auto list = http_request(leader ? leader : port_, "GET", "/v1/jobs", {}, reader_headers_);
    ASSERT_TRUE(list);
    EXPECT_NE(list->body.find("\"jobs\":[]"), std::string::npos) << "finished jobs are forgotten: " << list->body;
  }
  // Simulated agents (tools/agent_sim, 4 cpus each) beside the daemon, so
  // that with --function-size 1,1024 the cluster holds 4 functions an agent;
  // waits until the daemon lists them and holds an offer from each (an agent
  // is listed when it subscribes, and offers after).
  void start_agents(int n) {
    std::string out;
    ASSERT_EQ(run_shell("timeout 60 " + agent_sim_binary() + " --server " + scheduler_url() + " --agents " +
                            std::to_string(n) + " >/dev/null 2>&1 & echo $!",
                        &out),
              0);
    agents_ = static_cast<pid_t>(std::atol(out.c_str()));
    ASSERT_GT(agents_, 0) << out;
    auto until = std::chrono::steady_clock::now() + 10s;
    size_t listed = 0;
    while (std::chrono::steady_clock::now() < until) {
      auto nodes = http_request(port_, "GET", "/api/v1/nodes");
      listed = nodes ? count(nodes->body, "\"kind\":\"Node\"") : 0;
      if (listed >= static_cast<size_t>(n) && metric_value(port_, "uvsched_offers_live") >= n) return;
      std::this_thread::sleep_for(20ms);
    }
    FAIL() << "the daemon lists " << listed << " of " << n << " agents and holds "
           << metric_value(port_, "uvsched_offers_live") << " offers";
  }
  // The workers a model's jobs ran at, on average, while both jobs shared
  // the cluster (the emulator's <model>_shared_* counts).
  double shared_parallelism(const std::string& model) const {
    auto s = emu_.stats();
    double epochs = static_cast<double>(s[model + "_shared_epochs"]);
    return epochs > 0 ? static_cast<double>(s[model + "_shared_worker_epochs"]) / epochs : 0;
  }
  // GET /v1/jobs until it lists no job or the deadline passes: the last body.
  std::string jobs_list_once_empty(std::chrono::milliseconds deadline) {
    auto until = std::chrono::steady_clock::now() + deadline;
    std::string list;
    while (std::chrono::steady_clock::now() < until) {
      list = answered(http_request(port_, "GET", "/v1/jobs")).body;
      if (list.find("\"jobs\":[]") != std::string::npos) break;
      std::this_thread::sleep_for(20ms);
    }
    return list;
  }
  std::string stats_text() const {
    std::string out;
    for (const auto& [k, v] : emu_.stats()) out += k + "=" + std::to_string(v) + " ";
    return out;
  }

  uint16_t port_ = 0;
  uint16_t kubeml_port_ = 0;    // the daemon's --ml-listen, when the test gives one
  std::string reader_headers_;  // what the test's own reads of --listen send (a token)
  pid_t agents_ = 0;
  KubemlEmulator emu_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(KubemlTest, JobsWhosePsStartTakesOverTenSecondsFinishEveryEpoch) {
  start_emulator({"--start-delay", "11", "--jobs", "3", "--epochs", "10", "--epoch-ms", "100", "--wait-limit", "3"});
  start_daemon({"--ps-check-interval", "0"});  // /tasks only where a /start needs it
  // While they run, the PS's own gauges show per job.
  ASSERT_TRUE(emu_.wait_stat("answers", 3, 30s)) << stats_text();
  std::string view;
  auto until = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < until) {
    auto list = http_request(port_, "GET", "/v1/jobs");
    ASSERT_TRUE(list);
    view = list->body;
    if (view.find("\"kubeml_job_validation_accuracy\":") != std::string::npos) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_NE(view.find("\"kubeml_job_epoch_duration_seconds\":"), std::string::npos) << view;
  EXPECT_NE(view.find("\"train\":3"), std::string::npos) << "kubeml_job_running_total: " << view;
  expect_all_finished_cleanly(3, 10, 60s);
  EXPECT_EQ(emu_.stats()["tasks_listed"], 0) << "no /start timed out, so /tasks was never needed";
}

// The speedup policy against KubeML as it runs: still one /start per job, one
// update per /job and nothing the train jobs would not take; its decisions
// are recorded as "speedup".
TEST_F(KubemlTest, TheSpeedupPolicyKeepsKubemlsProtocol) {
  start_emulator({"--start-delay", "0", "--jobs", "6", "--epochs", "12", "--epoch-ms", "30", "--serial-fraction", "0.3",
                  "--wait-limit", "3"});
  start_daemon({"--parallelism-policy", "speedup"});
  expect_all_finished_cleanly(6, 12, 60s);
  auto metrics = http_request(port_, "GET", "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("uvsched_ml_decisions_total{reason=\"speedup"), std::string::npos) << metrics->body;
}

// What the speedup policy is for, against KubeML's jobs as they run: two jobs
// share 8 functions, one that hardly scales (resnet34 here, 90% of its epoch
// serial) and one that does (lenet, 5%). The speedup policy gives the
// workers to the job they speed up, within the capacity; KubeML's rule (the
// control below) grows both alike within their fair share of 4. Each job
// starts at 2 and its first three epochs are not counted: they are what the
// policy learns from. The job that does not scale is submitted first, so
// that a division blind to speed (which breaks ties by arrival) would favour
// it.
constexpr const char* kDoesNotAndScales = "0.9,0.05";

TEST_F(KubemlTest, TheSpeedupPolicyGivesTheWorkersToTheJobTheySpeedUp) {
  start_emulator({"--start-delay", "1", "--jobs", "2", "--epochs", "40", "--epoch-ms", "200", "--serial-fraction",
                  kDoesNotAndScales, "--wait-limit", "5"});
  start_daemon({"--parallelism-policy", "speedup", "--function-size", "1,1024"});
  start_agents(2);
  expect_all_finished_cleanly(2, 40, 60s);
  double does_not = shared_parallelism("resnet34"), scales = shared_parallelism("lenet");
  EXPECT_GE(scales, 6.0) << stats_text();
  EXPECT_LE(does_not, 1.5) << stats_text();
  EXPECT_LE(scales + does_not, 8.0 + 1e-9) << "the two ran on more functions than the cluster holds: " << stats_text();
}

TEST_F(KubemlTest, KubemlsRuleGrowsBothJobsWithinTheirFairShare) {
  start_emulator({"--start-delay", "1", "--jobs", "2", "--epochs", "40", "--epoch-ms", "200", "--serial-fraction",
                  kDoesNotAndScales, "--wait-limit", "5"});
  start_daemon({"--function-size", "1,1024"});
  start_agents(2);
  expect_all_finished_cleanly(2, 40, 60s);
  double does_not = shared_parallelism("resnet34"), scales = shared_parallelism("lenet");
  EXPECT_GE(scales, 3.5) << stats_text();
  EXPECT_LE(scales, 4.0) << stats_text();
  EXPECT_GE(does_not, 3.0) << "KubeML's rule grows a job whose epochs get no slower: " << stats_text();
  EXPECT_LE(does_not, 4.0) << stats_text();
}

TEST_F(KubemlTest, AStartTimeOutAsksThePsInsteadOfStartingTwice) {
  start_emulator({"--start-delay", "2", "--jobs", "2", "--epochs", "4", "--epoch-ms", "50", "--wait-limit", "3"});
  start_daemon({"--ps-start-timeout", "0.5"});
  expect_all_finished_cleanly(2, 4, 30s);
  EXPECT_GE(emu_.stats()["tasks_listed"], 2);
  EXPECT_TRUE(daemon_->wait_for_log("event=ps_already_holds_job"));
}

// KubeML's train jobs ignore /job's status and wait for their update (SPEC
// §8), and they all run in the PS's pod: one client to --rate-limit. A /job
// answered 429 was a job waiting for ever (by hand, 20 jobs and a rate of 30
// a second: 20 of 20 stranded; a /finish answered 429 would keep a finished
// job). /job and /finish/{id} are never limited; the client's other requests
// still are.
TEST_F(KubemlTest, JobsGoOnPastTheirClientsRateLimit) {
  start_emulator({"--start-delay", "0", "--jobs", "10", "--epochs", "30", "--epoch-ms", "20", "--wait-limit", "5"});
  start_daemon({"--rate-limit", "20", "--rate-burst", "20"});
  expect_all_finished_cleanly(10, 30, 60s);
  EXPECT_EQ(emu_.stats()["job_post_non_2xx"], 0) << stats_text();
  int refused = 0;
  for (int i = 0; i < 40; ++i) {
    auto r = http_request(port_, "GET", "/v1/jobs");
    ASSERT_TRUE(r);
    refused += r->status == 429 ? 1 : 0;
  }
  EXPECT_GT(refused, 0) << "the limit holds for the rest";
}

// Slow requests fill --max-connections while the jobs train. A train job
// takes the 503 a connection past the limit got as its /job's answer. Go's
// client keeps a job's connection for its next call, but one whose epoch is
// longer than --idle-timeout finds it closed and opens another for every
// call: every job waited for ever (by hand: 5 of 5). Past the limit /job and
// /finish are still served; the rest still gets the 503.
TEST_F(KubemlTest, JobsGoOnWhileSlowRequestsFillTheConnectionLimit) {
  constexpr int kLimit = 20;
  start_emulator({"--start-delay", "0", "--jobs", "5", "--epochs", "300", "--epoch-ms", "60", "--serial-fraction",
                  "1", "--wait-limit", "5"});
  start_daemon({"--max-connections", std::to_string(kLimit), "--idle-timeout", "0.01", "--request-timeout", "120"});
  ASSERT_TRUE(emu_.wait_stat("answers", 10, 30s)) << stats_text();
  std::vector<RawConnection> slow;  // the jobs' own connections come and go: retried until all are held
  auto until = std::chrono::steady_clock::now() + 10s;
  while (slow.size() < kLimit && std::chrono::steady_clock::now() < until) {
    RawConnection c;
    ASSERT_TRUE(c.connect(port_));
    // Answered, then a second request whose head never ends: held to --request-timeout.
    ASSERT_TRUE(c.send("GET /health HTTP/1.1\r\nHost: t\r\n\r\nGET /health HTTP/1.1\r\nHost: t\r\n"));
    auto r = c.read_response();
    if (r && r->status == 200) slow.push_back(std::move(c));
  }
  ASSERT_EQ(slow.size(), static_cast<size_t>(kLimit));
  EXPECT_EQ(emu_.stats()["finished"], 0) << "the jobs ended before the connections were all taken";
  {
    RawConnection past;
    ASSERT_TRUE(past.connect(port_));
    ASSERT_TRUE(past.send("GET /v1/jobs HTTP/1.1\r\nHost: t\r\n\r\n"));
    auto r = past.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503) << "the limit holds for the rest";
  }
  ASSERT_TRUE(emu_.wait_stat("finished", 5, 60s)) << stats_text() << "\n" << emu_.log();
  auto s = emu_.stats();
  EXPECT_EQ(violations_of(s), "") << stats_text();
  EXPECT_EQ(s["job_post_non_2xx"], 0) << stats_text();
  EXPECT_EQ(s["finish_errors"], 0) << stats_text();
  slow.clear();
  EXPECT_NE(jobs_list_once_empty(10s).find("\"jobs\":[]"), std::string::npos) << "finished jobs are forgotten";
}

// KubeML's components speak plain HTTP and send no token. With a token file
// they reach the daemon on --ml-listen, which serves their calls alone and
// asks nothing; --listen still asks everyone a token, and the ML listener
// refuses everything but KubeML's calls and the probes.
TEST_F(KubemlTest, KubemlCallsItsOwnListenerWhileEveryoneElseShowsAToken) {
  TempDir dir;
  const std::string admin = "admin-token-0123456789abcdef";
  std::ofstream(dir.path() + "/tokens") << admin << ",ops,admin\n";
  ASSERT_EQ(::chmod((dir.path() + "/tokens").c_str(), 0600), 0);
  kubeml_port_ = free_loopback_port();
  reader_headers_ = "Authorization: Bearer " + admin + "\r\n";
  start_emulator({"--start-delay", "0", "--jobs", "4", "--epochs", "10", "--epoch-ms", "20", "--wait-limit", "5"});
  start_daemon({"--token-file", dir.path() + "/tokens", "--ml-listen", "127.0.0.1:" + std::to_string(kubeml_port_)});
  expect_all_finished_cleanly(4, 10, 60s);
  EXPECT_EQ(emu_.stats()["job_post_non_2xx"], 0) << stats_text();
  EXPECT_EQ(answered(http_request(port_, "POST", "/train", "{}")).status, 401) << "--listen still asks a token";
  auto pods = answered(http_request(kubeml_port_, "GET", "/api/v1/pods"));
  EXPECT_EQ(pods.status, 403);
  EXPECT_NE(pods.body.find("--ml-listen serves only KubeML's calls"), std::string::npos) << pods.body;
  EXPECT_EQ(answered(http_request(kubeml_port_, "GET", "/metrics")).status, 403);
  EXPECT_EQ(answered(http_request(kubeml_port_, "GET", "/health")).status, 200);
}

// SIGKILL while 200 jobs wait on answers, then a new daemon. A job whose
// /job was answered waits for its update for ever; one whose POST failed
// goes on, and takes the next update it reads as its next epoch's answer.
// With updates waiting for one of 32 connections to the PS, this failed in 3
// of 4 runs (up to half the jobs stranded); with updates written before the
// turn's answers, in 1 of 4 (20 jobs shifted an epoch). An update now follows
// its answer at once: the window left, one write, strands a job rarely.
TEST_F(KubemlTest, ADaemonKilledUnderLoadNeitherStrandsNorShiftsJobs) {
  constexpr int kJobs = 200;
  TempDir data;
  std::string store = "embedded:" + data.path() + "/data";
  start_emulator({"--start-delay", "0", "--jobs", std::to_string(kJobs), "--epochs", "150", "--epoch-ms", "10",
                  "--wait-limit", "3"});
  start_daemon({"--store", store});
  ASSERT_TRUE(emu_.wait_stat("answers", 5000, 60s)) << stats_text();
  EXPECT_EQ(daemon_->stop(SIGKILL), 128 + SIGKILL);
  start_daemon({"--store", store});
  // A stranded job never finishes: it is counted once it has waited past --wait-limit.
  EXPECT_TRUE(emu_.wait_stats([](auto& s) { return s["finished"] + s["late_waits"] >= kJobs; }, 120s))
      << stats_text();
  auto s = emu_.stats();
  EXPECT_EQ(s["unsolicited_updates"], 0) << "a job took an update meant for an epoch before: " << stats_text();
  EXPECT_LE(s["late_waits"], 2) << "jobs stranded: " << stats_text();
  EXPECT_EQ(s["duplicate_starts"], 0) << stats_text();
}

TEST_F(KubemlTest, JobsGoOnThroughADaemonKilledMidTraining) {
  TempDir data;
  std::string store = "embedded:" + data.path() + "/data";
  start_emulator({"--start-delay", "0.5", "--jobs", "3", "--epochs", "30", "--epoch-ms", "100", "--wait-limit", "3"});
  start_daemon({"--store", store});
  ASSERT_TRUE(emu_.wait_stat("answers", 15, 30s)) << stats_text();
  EXPECT_EQ(daemon_->stop(SIGKILL), 128 + SIGKILL);
  // Meanwhile the jobs' posts are refused and they go on without an answer.
  ASSERT_TRUE(emu_.wait_stat("job_post_errors", 1, 10s)) << stats_text();
  start_daemon({"--store", store});
  expect_all_finished_cleanly(3, 30, 60s);
}

// The same through a graceful stop (SIGTERM), with 150 jobs that report as
// fast as they are answered: more updates are owed at once than the client
// opens connections to the PS (32), so some always wait for one. The stopping
// daemon answers what is in flight and delivers the updates it owes before it
// closes its client. Before it did, the close cancelled the waiting ones and
// their jobs, which had their /job answers, waited forever (36 to 68 jobs of
// 100 in three runs by hand; this test failed 4 runs of 4). The next daemon,
// on the same store, goes on with all.
// Between the two daemons the jobs' posts are refused and, with no epoch time,
// a job may run out of epochs before the next daemon listens (under ASan it
// starts slowly: 150 of 150 did once in CI). Its /finish is then refused too,
// which KubeML's PS logs and forgets (so finish errors are not counted here);
// the next daemon asks the PS what it holds and forgets the jobs that ended.
TEST_F(KubemlTest, JobsGoOnThroughADaemonStoppedUnderLoad) {
  TempDir data;
  std::string store = "embedded:" + data.path() + "/data";
  start_emulator({"--start-delay", "0", "--jobs", "150", "--epochs", "60", "--epoch-ms", "0", "--wait-limit", "5"});
  start_daemon({"--store", store});
  ASSERT_TRUE(emu_.wait_stat("answers", 2'000, 30s)) << stats_text();
  EXPECT_EQ(daemon_->stop(SIGTERM), 0) << daemon_->log();
  EXPECT_EQ(daemon_->log().find("ps_updates_undelivered"), std::string::npos) << daemon_->log();
  ASSERT_TRUE(emu_.wait_stat("job_post_errors", 1, 10s)) << stats_text();
  start_daemon({"--store", store});
  ASSERT_TRUE(emu_.wait_stat("finished", 150, 60s)) << "stats: " << stats_text() << "\ndaemon:\n" << daemon_->log();
  auto s = emu_.stats();
  EXPECT_EQ(violations_of(s), "") << stats_text();
  EXPECT_EQ(s["starts"], 150) << "exactly one /start per job";
  EXPECT_EQ(s["epochs"], 150 * 60);
  // Every /job that reached a daemon was answered with one update.
  EXPECT_EQ(s["answers"], s["job_posts"] - s["job_post_errors"]) << stats_text();
  // And it follows no job: those whose /finish it heard, and those that ended unheard.
  ASSERT_TRUE(daemon_->wait_ready()) << daemon_->log();
  std::string list = jobs_list_once_empty(10s);
  EXPECT_NE(list.find("\"jobs\":[]"), std::string::npos)
      << "finish_errors=" << s["finish_errors"] << ": " << list.substr(0, 300);
}

// Jobs that run out of epochs while no daemon listens end with a /finish
// that is refused (the PS logs it and forgets it). The next daemon asks the
// PS what it holds, and follows none of them.
TEST_F(KubemlTest, JobsThatEndWhileNoDaemonListensAreForgottenByTheNext) {
  TempDir data;
  std::string store = "embedded:" + data.path() + "/data";
  // 100 epochs, of which the daemon answers about 4 each: none ends while it listens.
  start_emulator({"--start-delay", "0", "--jobs", "5", "--epochs", "100", "--epoch-ms", "10", "--wait-limit", "5"});
  start_daemon({"--store", store});
  ASSERT_TRUE(emu_.wait_stat("answers", 20, 30s)) << stats_text();
  EXPECT_EQ(daemon_->stop(SIGTERM), 0) << daemon_->log();
  ASSERT_TRUE(emu_.wait_stat("finished", 5, 30s)) << stats_text();
  EXPECT_EQ(emu_.stats()["finish_errors"], 5) << "every /finish came while no daemon listened: " << stats_text();
  start_daemon({"--store", store});
  ASSERT_TRUE(daemon_->wait_ready()) << daemon_->log();  // the jobs are loaded: listed, until the PS has answered
  std::string list = jobs_list_once_empty(10s);
  EXPECT_NE(list.find("\"jobs\":[]"), std::string::npos) << list.substr(0, 300);
  EXPECT_EQ(metric_value(port_, "uvsched_ml_jobs_lost_total{phase=\"ended-unheard\"}"), 5);
}

TEST_F(KubemlTest, JobsGoOnThroughASixSecondStoreStall) {
  if (!etcd_installed()) GTEST_SKIP() << "etcd not installed";
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  // About 10 s of training: the stall falls in the middle.
  start_emulator({"--start-delay", "0.5", "--jobs", "3", "--epochs", "100", "--epoch-ms", "200", "--wait-limit", "3"});
  start_daemon({"--store", "etcd:" + etcd.url()});
  ASSERT_TRUE(emu_.wait_stat("answers", 6, 30s)) << stats_text();
  kill(etcd.pid(), SIGSTOP);
  std::this_thread::sleep_for(6s);  // the stall itself is the test's input, not a wait for an event
  auto during = emu_.stats();
  kill(etcd.pid(), SIGCONT);
  EXPECT_EQ(violations_of(during), "") << "during the stall: " << stats_text();
  EXPECT_EQ(during["finished"], 0) << "the jobs ended before the stall did";
  expect_all_finished_cleanly(3, 100, 60s);
  EXPECT_GT(metric_value(port_, "uvsched_ml_answers_held_total{cause=\"store-failed-or-slow\"}") +
                std::max(0.0, metric_value(port_, "uvsched_ml_answers_held_total{cause=\"store-unavailable\"}")),
            0)
      << "no answer was held: the stall did not reach the decisions";
}

// A stall longer than the leader lease: the leader steps down and, etcd
// frozen, no one leads. A train job's /job answered with an error status
// waits for its update forever (KubeML ignores the status), so the /job
// calls of those seconds wait for a leader instead; this daemon leads again
// once etcd is back and answers them.
TEST_F(KubemlTest, JobsGoOnThroughAStallThatOutlastsTheLeaderLease) {
  if (!etcd_installed()) GTEST_SKIP() << "etcd not installed";
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  start_emulator({"--start-delay", "0.2", "--jobs", "3", "--epochs", "60", "--epoch-ms", "100", "--wait-limit", "20"});
  start_daemon({"--store", "etcd:" + etcd.url(), "--leader-ttl", "2"});
  ASSERT_TRUE(emu_.wait_stat("answers", 6, 30s)) << stats_text();
  kill(etcd.pid(), SIGSTOP);
  EXPECT_TRUE(daemon_->wait_for_log("event=ml_standing_by", 10s)) << daemon_->log();
  std::this_thread::sleep_for(2s);  // the leaderless time is the test's input, not a wait for an event
  kill(etcd.pid(), SIGCONT);
  expect_all_finished_cleanly(3, 60, 90s);
  EXPECT_EQ(emu_.stats()["job_post_non_2xx"], 0) << stats_text() << "\n" << daemon_->log();
  EXPECT_GT(metric_value(port_, "uvsched_standby_waits_total{outcome=\"served\"}"), 0)
      << "no /job waited for a leader: the stall did not reach them";
}

TEST_F(KubemlTest, APsRestartMarksItsJobsLost) {
  start_emulator({"--start-delay", "0.2", "--jobs", "2", "--epochs", "1000", "--epoch-ms", "50", "--wait-limit", "60"});
  start_daemon();
  ASSERT_TRUE(emu_.wait_stat("answers", 4, 30s)) << stats_text();
  ASSERT_TRUE(emu_.forget());
  auto until = std::chrono::steady_clock::now() + 10s;
  std::string list;
  while (std::chrono::steady_clock::now() < until) {
    list = answered(http_request(port_, "GET", "/v1/jobs")).body;
    size_t lost = 0;
    for (size_t at = list.find("\"lost\":true"); at != std::string::npos; at = list.find("\"lost\":true", at + 1))
      ++lost;
    if (lost == 2) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_NE(list.find("\"state\":\"lost\""), std::string::npos) << list;
  EXPECT_EQ(metric_value(port_, "uvsched_ml_jobs_lost_total{phase=\"lost\"}"), 2);
  auto s = emu_.stats();
  EXPECT_EQ(s["duplicate_starts"], 0);
  EXPECT_EQ(s["unsolicited_updates"], 0);
  // Each lost job was told 400 once, and nothing more was sent for it.
  EXPECT_EQ(s["updates_unknown_job"], 2) << stats_text();
}

// A PS restart drops its jobs (their train jobs, told 400 on their next
// update, wait for ever). They never send /finish: the daemon learns from
// the PS's index, every --ps-check-interval, that they have ended, and they
// no longer take a share of the cluster.
TEST_F(KubemlTest, JobsAPsRestartDroppedStopBeingFollowedOnceSilent) {
  start_emulator({"--start-delay", "0.2", "--jobs", "3", "--epochs", "1000", "--epoch-ms", "50", "--wait-limit", "60"});
  start_daemon({"--ps-check-interval", "0.3"});
  ASSERT_TRUE(emu_.wait_stat("answers", 6, 30s)) << stats_text();
  ASSERT_TRUE(emu_.wait_stat("tasks_listed", 2, 10s)) << stats_text();
  EXPECT_LE(metric_value(port_, "uvsched_ml_jobs_lost_total{phase=\"ended-unheard\"}"), 0)  // -1: no sample yet
      << "a job the PS holds was forgotten";
  ASSERT_TRUE(emu_.forget());
  std::string list = jobs_list_once_empty(15s);
  EXPECT_NE(list.find("\"jobs\":[]"), std::string::npos) << list.substr(0, 300);
  EXPECT_EQ(metric_value(port_, "uvsched_ml_jobs_lost_total{phase=\"ended-unheard\"}"), 3);
  auto s = emu_.stats();
  EXPECT_EQ(s["updates_unknown_job"], 3) << stats_text();
  EXPECT_EQ(s["unsolicited_updates"], 0) << stats_text();
}

TEST_F(KubemlTest, AStandbyHandsEveryCallToTheLeader) {
  if (!etcd_installed()) GTEST_SKIP() << "etcd not installed";
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  // The jobs and the PS talk to the standby only (port_); the leader is elsewhere.
  start_emulator({"--start-delay", "0.2", "--jobs", "2", "--epochs", "8", "--epoch-ms", "50", "--wait-limit", "3"});
  const std::vector<std::string> common = {
      "--ps-url", emu_.ps_url(),        "--ps-metrics-url",        emu_.metrics_url(),
      "--store",  "etcd:" + etcd.url(), "--metrics-poll-interval", "0"};
  std::vector<std::string> leader_args = common;
  DaemonProcess leader(leader_args);
  ASSERT_TRUE(leader.start()) << leader.log();
  ASSERT_TRUE(leader.wait_ready()) << leader.log();
  std::vector<std::string> standby_args = common;
  standby_args.insert(standby_args.end(), {"--listen", "127.0.0.1:" + std::to_string(port_)});
  daemon_ = std::make_unique<DaemonProcess>(standby_args);
  ASSERT_TRUE(daemon_->start()) << daemon_->log();
  // Its own probes it answers itself; the rest goes to the leader.
  auto ready = http_request(port_, "GET", "/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503);
  auto until = std::chrono::steady_clock::now() + 10s;
  std::optional<RawResponse> r;
  while (std::chrono::steady_clock::now() < until) {
    r = http_request(port_, "GET", "/v1/jobs?x=1");
    if (r && r->status == 307) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 307) << r->body;
  EXPECT_EQ(r->header("Location"), "http://127.0.0.1:" + std::to_string(leader.port()) + "/v1/jobs?x=1");
  expect_all_finished_cleanly(2, 8, 30s, leader.port());
  EXPECT_EQ(leader.stop(SIGTERM), 0) << leader.log();
}

// The same through the ML listeners, with tokens on --listen: the standby's
// sends KubeML's calls to the leader's ML listener (named in the leader
// record), not to its --listen, which would answer them 401.
TEST_F(KubemlTest, AStandbysMlListenerHandsKubemlsCallsToTheLeadersMlListener) {
  if (!etcd_installed()) GTEST_SKIP() << "etcd not installed";
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  kubeml_port_ = free_loopback_port();
  TempDir dir;
  const std::string admin = "admin-token-0123456789abcdef";
  std::ofstream(dir.path() + "/tokens") << admin << ",ops,admin\n";
  ASSERT_EQ(::chmod((dir.path() + "/tokens").c_str(), 0600), 0);
  reader_headers_ = "Authorization: Bearer " + admin + "\r\n";
  start_emulator({"--start-delay", "0.2", "--jobs", "2", "--epochs", "8", "--epoch-ms", "50", "--wait-limit", "3"});
  const std::vector<std::string> common = {
      "--ps-url",     emu_.ps_url(),         "--ps-metrics-url",        emu_.metrics_url(),
      "--store",      "etcd:" + etcd.url(),  "--metrics-poll-interval", "0",
      "--token-file", dir.path() + "/tokens"};
  const uint16_t leader_ml = free_loopback_port();
  std::vector<std::string> leader_args = common;
  leader_args.insert(leader_args.end(), {"--ml-listen", "127.0.0.1:" + std::to_string(leader_ml)});
  DaemonProcess leader(leader_args);
  ASSERT_TRUE(leader.start()) << leader.log();
  ASSERT_TRUE(leader.wait_ready()) << leader.log();
  std::vector<std::string> standby_args = common;
  standby_args.insert(standby_args.end(), {"--listen", "127.0.0.1:" + std::to_string(port_), "--ml-listen",
                                           "127.0.0.1:" + std::to_string(kubeml_port_)});
  daemon_ = std::make_unique<DaemonProcess>(standby_args);
  ASSERT_TRUE(daemon_->start()) << daemon_->log();
  auto until = std::chrono::steady_clock::now() + 10s;
  std::optional<RawResponse> r;
  while (std::chrono::steady_clock::now() < until) {
    r = http_request(kubeml_port_, "POST", "/infer", "{}");
    if (r && r->status == 307) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 307) << r->body;
  EXPECT_EQ(r->header("Location"), "http://127.0.0.1:" + std::to_string(leader_ml) + "/infer");
  expect_all_finished_cleanly(2, 8, 30s, leader.port());
  EXPECT_EQ(leader.stop(SIGTERM), 0) << leader.log();
}

}  // namespace
}  // namespace uvsched::test
