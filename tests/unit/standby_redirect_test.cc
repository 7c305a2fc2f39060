// StandbyRedirect: what a daemon that does not lead does with each request,
// and how requests of callers that never retry wait for a leader. A manual
// clock, a router standing for the daemon's routes, no sockets.
#include "handlers/ops/standby_redirect.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "handlers/json_response.h"
#include "handlers/router.h"
#include "reactor/log.h"
#include "reactor/manual_clock.h"
#include "tests/support/recording_channel.h"

namespace uvsched {
namespace {

using test::status_of;

constexpr uint64_t kWaitMs = 20'000;

class StandbyRedirectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_configure(LogLevel::kOff, LogFormat::kText);
    router_.add("POST", "/job", [this](RequestContext& ctx) {
      handled_.push_back(ctx.request.body);
      ctx.reply(text_response(200, "decided"));
    });
    router_.add("POST", "/train", [](RequestContext& ctx) { ctx.reply(text_response(200, "id")); });
    router_.add("GET", "/health", [](RequestContext& ctx) { ctx.reply(text_response(200, "")); });
    redirect_.set_leader_view([this]() -> std::optional<std::optional<std::string>> {
      if (leading_) return std::nullopt;
      return leader_;
    });
    StandbyRedirect::WaitRule rule;
    rule.waits = [](std::string_view path) { return path == "/job"; };
    rule.serving = [this] { return serving_; };
    rule.wait_ms = kWaitMs;
    rule.max_waiting = 3;
    redirect_.wait_for_leader(clock_, standby_waits_counter(metrics_), std::move(rule));
  }
  void TearDown() override { log_configure(LogLevel::kInfo, LogFormat::kText); }

  std::shared_ptr<detail::Exchange> send(const std::string& method, const std::string& target, std::string body = {}) {
    HttpRequest req;
    req.method = method == "POST" ? "POST" : "GET";
    req.target = target;
    req.body = std::move(body);
    auto ex = std::make_shared<detail::Exchange>();
    redirect_.handle(req, Responder(ex));
    return ex;
  }
  double waits(const char* outcome) const {
    return metrics_.counter_sum("uvsched_standby_waits_total", std::string("outcome=\"") + outcome + "\"");
  }

  ManualClock clock_;
  MetricsRegistry metrics_;
  Router router_;
  StandbyRedirect redirect_{router_};
  bool leading_ = false;
  bool serving_ = false;
  std::optional<std::string> leader_;  // a leader elsewhere, when known
  std::vector<std::string> handled_;
};

TEST_F(StandbyRedirectTest, WhatEachRequestGetsFromADaemonThatDoesNotLead) {
  struct Case {
    const char* name;
    bool leading;
    std::optional<std::string> leader;
    std::string method, target;
    int status;
    const char* header;  // a header the answer has, or null
  } cases[] = {
      {"leading: handled here", true, std::nullopt, "POST", "/train", 200, nullptr},
      {"a leader elsewhere: redirected, path and query kept", false, "http://10.0.0.2:8080", "POST", "/train?x=1", 307,
       "Location: http://10.0.0.2:8080/train?x=1"},
      {"a /job too, with a leader known", false, "http://10.0.0.2:8080", "POST", "/job", 307,
       "Location: http://10.0.0.2:8080/job"},
      {"no leader known: try again", false, std::nullopt, "POST", "/train", 503, "Retry-After: 1"},
      {"probes answered here", false, std::nullopt, "GET", "/health", 200, nullptr},
  };
  for (const auto& c : cases) {
    leading_ = c.leading;
    leader_ = c.leader;
    auto ex = send(c.method, c.target);
    EXPECT_EQ(status_of(ex->out), c.status) << c.name << "\n" << ex->out;
    if (c.header) {
      EXPECT_NE(ex->out.find(c.header), std::string::npos) << c.name << "\n" << ex->out;
    }
  }
  EXPECT_EQ(redirect_.waiting(), 0u);
}

// Etcd frozen past the lease: this daemon stepped down and no one leads. The
// /job calls wait, in order, until it leads again and has loaded its jobs.
TEST_F(StandbyRedirectTest, AJobReportWaitsUntilThisDaemonLeadsAndServesAgain) {
  auto first = send("POST", "/job", "one");
  auto second = send("POST", "/job", "two");
  EXPECT_TRUE(first->out.empty()) << first->out;
  EXPECT_EQ(redirect_.waiting(), 2u);
  leading_ = true;
  redirect_.leadership_changed();
  EXPECT_TRUE(first->out.empty()) << "handed on only once the jobs are loaded";
  serving_ = true;
  clock_.advance(200);  // the re-check sees it
  EXPECT_EQ(status_of(first->out), 200);
  EXPECT_EQ(status_of(second->out), 200);
  EXPECT_EQ(handled_, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(waits("served"), 2);
  EXPECT_EQ(redirect_.waiting(), 0u);
}

TEST_F(StandbyRedirectTest, AJobReportWaitingIsRedirectedOnceAnotherLeaderIsKnown) {
  auto ex = send("POST", "/job", "one");
  clock_.advance(1'000);
  EXPECT_TRUE(ex->out.empty());
  leader_ = "http://10.0.0.3:8080";
  clock_.advance(200);
  EXPECT_EQ(status_of(ex->out), 307);
  EXPECT_NE(ex->out.find("Location: http://10.0.0.3:8080/job"), std::string::npos) << ex->out;
  EXPECT_TRUE(handled_.empty());
  EXPECT_EQ(waits("redirected"), 1);
}

// No one leads for the whole wait: the route answers as it does on a daemon
// that does not lead (for /job: the job keeps its parallelism).
TEST_F(StandbyRedirectTest, AtTheDeadlineAWaitingRequestIsHandedOnAsItIs) {
  auto ex = send("POST", "/job", "one");
  clock_.advance(kWaitMs - 1);
  EXPECT_TRUE(ex->out.empty());
  clock_.advance(200);
  EXPECT_EQ(status_of(ex->out), 200);
  EXPECT_EQ(handled_, std::vector<std::string>{"one"});
  EXPECT_EQ(waits("deadline"), 1);
}

// Stopping, the daemon hands every waiting request on: nothing is left for
// the server's last answer (a 500, which KubeML would wait behind forever).
TEST_F(StandbyRedirectTest, AStoppingDaemonHandsEveryWaitingRequestOnAtOnce) {
  auto ex = send("POST", "/job", "one");
  redirect_.hand_on_all();
  EXPECT_EQ(status_of(ex->out), 200);
  EXPECT_EQ(waits("stopping"), 1);
  EXPECT_EQ(redirect_.waiting(), 0u);
}

TEST_F(StandbyRedirectTest, BeyondTheCapARequestIsHandedOnAtOnce) {
  for (int i = 0; i < 3; ++i) send("POST", "/job", "waits");
  auto over = send("POST", "/job", "over");
  EXPECT_EQ(status_of(over->out), 200);
  EXPECT_EQ(handled_, std::vector<std::string>{"over"});
  EXPECT_EQ(waits("full"), 1);
  EXPECT_EQ(redirect_.waiting(), 3u);
}

// The leader record names the leader's ML listener when it has one: a
// standby's --ml-listen redirects KubeML's calls there, never to --listen,
// which asks a token KubeML does not send.
TEST(LeaderRecord, NamesTheMlListenerOnlyWhenTheLeaderHasOne) {
  std::string with = leader_record("10.0.0.5:10200/42", "https://edge-1:10200", "http://edge-1:10201");
  EXPECT_EQ(leader_record_url(with), "https://edge-1:10200");
  EXPECT_EQ(leader_record_ml_url(with), "http://edge-1:10201");
  std::string without = leader_record("10.0.0.5:10200/42", "https://edge-1:10200");
  EXPECT_EQ(leader_record_url(without), "https://edge-1:10200");
  EXPECT_EQ(leader_record_ml_url(without), std::nullopt);
  EXPECT_EQ(without, R"({"id":"10.0.0.5:10200/42","url":"https://edge-1:10200"})")
      << "as before: older daemons read it";
  EXPECT_EQ(leader_record_ml_url("not json"), std::nullopt);
}

}  // namespace
}  // namespace uvsched
