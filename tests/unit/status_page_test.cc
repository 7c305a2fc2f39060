// The status page's server side (issue 23) without sockets: its files as the
// router serves them (gzip, ETag, security headers), the cluster summary it
// pages through, the recent scheduling events and /v1/status, on a fake
// store and a manual clock. The page itself is tested in a real browser
// (tests/browser/status_page_test.py).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "handlers/agents/agent_hub.h"
#include "handlers/ops/metrics_registry.h"
#include "handlers/ops/status_routes.h"
#include "handlers/pods/cluster_view.h"
#include "handlers/pods/scheduling_log.h"
#include "handlers/ui/ui_assets.h"
#include "handlers/ui/ui_routes.h"
#include "policy/access.h"
#include "reactor/log.h"
#include "reactor/manual_clock.h"
#include "tests/support/fake_store.h"
#include "tests/support/recording_channel.h"

namespace uvsched {
namespace {

std::string get(Router& router, std::string target, HttpHeaders headers = {}) {
  HttpRequest req;
  req.method = "GET";
  req.target = std::move(target);
  req.headers = std::move(headers);
  auto ex = std::make_shared<detail::Exchange>();
  router.handle(req, Responder(ex));
  return ex->out;
}

std::string body_of(const std::string& answer) {
  size_t at = answer.find("\r\n\r\n");
  return at == std::string::npos ? "" : answer.substr(at + 4);
}

TEST(AcceptsGzip, ReadsTheCodingsAndTheirQualities) {
  struct Case {
    const char* header;
    bool gzip;
  } cases[] = {
      {"gzip", true},      {"gzip, deflate, br", true},
      {"br, GZIP", true},  {"deflate, gzip;q=0.5", true},
      {"gzip;q=0", false}, {"gzip; q=0.0", false},
      {"x-gzip", true},    {"br, deflate", false},
      {"identity", false}, {"", false},
      {"gzipped", false},  {"*", false},  // a wildcard is not relied on: the raw file is always right
  };
  for (const auto& c : cases) EXPECT_EQ(accepts_gzip(c.header), c.gzip) << c.header;
}

TEST(UiRoutes, ServeEveryFileGzippedWhenAskedWithItsTypeAndAnETag) {
  Router router;
  add_ui_routes(router);
  ASSERT_GE(kUiAssetCount, 4u);
  for (const char* name : {"index.html", "ui.css", "ui.js", "chart.min.js"}) {
    const UiAsset* a = find_ui_asset(name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_LT(a->gzipped.size(), a->raw.size()) << name;
    std::string plain = get(router, std::string("/ui/") + name);
    EXPECT_EQ(test::status_of(plain), 200) << name;
    EXPECT_EQ(body_of(plain), a->raw) << name;
    EXPECT_EQ(plain.find("Content-Encoding"), std::string::npos) << name;
    EXPECT_NE(plain.find("Content-Type: " + std::string(a->content_type)), std::string::npos) << plain.substr(0, 400);
    EXPECT_NE(plain.find("ETag: " + std::string(a->etag)), std::string::npos);
    EXPECT_NE(plain.find("Content-Security-Policy: default-src 'self'"), std::string::npos);
    EXPECT_NE(plain.find("X-Content-Type-Options: nosniff"), std::string::npos);
    std::string packed = get(router, std::string("/ui/") + name, {{"Accept-Encoding", "gzip, deflate"}});
    EXPECT_NE(packed.find("Content-Encoding: gzip"), std::string::npos) << name;
    EXPECT_NE(packed.find("Vary: Accept-Encoding"), std::string::npos);
    EXPECT_EQ(body_of(packed), a->gzipped) << name;
    std::string again = get(router, std::string("/ui/") + name, {{"If-None-Match", std::string(a->etag)}});
    EXPECT_EQ(test::status_of(again), 304) << name;
    EXPECT_EQ(body_of(again), "");
  }
  // Chart.js is Debian's, whole; the page is the index.
  EXPECT_NE(find_ui_asset("chart.min.js")->raw.find("Chart.js v"), std::string_view::npos);
  EXPECT_EQ(body_of(get(router, "/ui/")), find_ui_asset("index.html")->raw);
}

TEST(UiRoutes, TheWholePageIsUnder300KBCompressed) {
  size_t total = 0;
  for (size_t i = 0; i < kUiAssetCount; ++i) total += kUiAssets[i].gzipped.size();
  EXPECT_LT(total, 300u * 1024) << "issue 23's weight limit";
}

TEST(UiRoutes, RedirectToTheSlashAndAnswer404ForNoSuchFile) {
  Router router;
  add_ui_routes(router);
  std::string r = get(router, "/ui");
  EXPECT_EQ(test::status_of(r), 308);
  EXPECT_NE(r.find("Location: /ui/"), std::string::npos);
  EXPECT_EQ(test::status_of(get(router, "/ui/nope.js")), 404);
  EXPECT_EQ(test::status_of(get(router, "/ui/..%2Fetc%2Fpasswd")), 404);
  EXPECT_EQ(find_ui_asset("../index.html"), nullptr);
}

TEST(UiAccess, ThePagesFilesAreOpenAndTheirDataIsNot) {
  EXPECT_TRUE(is_open_path("/ui"));
  EXPECT_TRUE(is_open_path("/ui/"));
  EXPECT_TRUE(is_open_path("/ui/ui.js"));
  EXPECT_FALSE(is_open_path("/uix"));
  EXPECT_FALSE(is_open_path("/v1/cluster"));
  EXPECT_FALSE(is_open_path("/v1/status"));
  EXPECT_TRUE(allowed(Role::kReader, "ops", "GET", "/v1/cluster"));
  EXPECT_FALSE(allowed(Role::kReader, "ops", "POST", "/api/v1/namespaces/default/pods"));
  EXPECT_FALSE(allowed(Role::kAgent, "sim-1", "GET", "/v1/cluster"));
}

TEST(SchedulingLog, KeepsTheNewestAndSaysThemInKubeSchedulersWords) {
  SchedulingLog log;
  for (size_t i = 0; i < SchedulingLog::kKept + 5; ++i) {
    log.add(1'700'000'000'000 + static_cast<int64_t>(i), SchedulingLog::Kind::kScheduled,
            "default/p" + std::to_string(i), "sim-1");
  }
  EXPECT_EQ(log.size(), SchedulingLog::kKept);
  log.add(1'800'000'000'000, SchedulingLog::Kind::kFailedScheduling, "default/big",
          "0/3 nodes are available: 3 Insufficient cpu.");
  log.add(1'800'000'000'001, SchedulingLog::Kind::kPreempted, "default/low",
          "Preempted by default/high (priority 1000) on node sim-1");
  JsonWriter w;
  w.begin_object();
  log.write(w, 3);
  w.end_object();
  EXPECT_EQ(w.take(),
            R"({"events":[)"
            R"({"time":"2027-01-15T08:00:00Z","type":"Normal","reason":"Preempted","pod":"default/low",)"
            R"("message":"Preempted by default/high (priority 1000) on node sim-1"},)"
            R"({"time":"2027-01-15T08:00:00Z","type":"Warning","reason":"FailedScheduling","pod":"default/big",)"
            R"("message":"0/3 nodes are available: 3 Insufficient cpu."},)"
            R"({"time":"2023-11-14T22:13:20Z","type":"Normal","reason":"Scheduled","pod":"default/p204",)"
            R"("message":"Successfully assigned default/p204 to sim-1"}]})");
}

class ClusterViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_configure(LogLevel::kOff, LogFormat::kText);
    AgentHub::Settings s;
    s.agent_timeout_ms = 30'000;
    hub_ = std::make_unique<AgentHub>(clock_, metrics_, s);
  }
  void TearDown() override {
    hub_->stop();
    log_configure(LogLevel::kInfo, LogFormat::kText);
  }
  std::shared_ptr<test::RecordingChannel> subscribe(const std::string& host, Labels labels, double cpus) {
    auto c = std::make_shared<test::RecordingChannel>();
    hub_->subscribe_on(host, std::move(labels), Resources{cpus, 4096, {}}, "", c);
    return c;
  }
  void run_task(const std::string& pod, const std::string& agent, float cpus, float mem) {
    PodTask t;
    t.agent = tasks_.intern_agent(agent);
    t.cpus = cpus;
    t.mem_mib = mem;
    tasks_.add(pod, t);
  }
  std::string view(const std::string& query) {
    std::string error, field;
    auto q = parse_cluster_query(query, &error, &field);
    EXPECT_TRUE(q) << error;
    return q ? cluster_view_json(*hub_, tasks_, 7, *q) : "";
  }

  ManualClock clock_;
  MetricsRegistry metrics_;
  std::unique_ptr<AgentHub> hub_;
  PodTaskRegistry tasks_;
};

TEST_F(ClusterViewTest, TotalsOverAllAndEachListedAgentsShareAndPods) {
  auto a = subscribe("edge-a", {{"zone", "north"}}, 4);
  auto b = subscribe("edge-b", {{"zone", "south"}}, 2);
  run_task("default/one", "edge-a", 1.5, 512);
  run_task("default/two", "edge-a", 0.5, 256);
  run_task("ml/three", "edge-b", 2, 1024);
  EXPECT_EQ(view(""),
            R"({"totals":{"agents":2,"connected":2,"disconnected":0,"lost":0,"cpus":6,"cpus_used":4,)"
            R"("mem_mib":8192,"mem_mib_used":1792,"pods":3,"pods_pending":7},"matched":2,"offset":0,"limit":50,)"
            R"("agents":[{"hostname":"edge-a","state":"connected","labels":{"zone":"north"},"cpus":4,"cpus_used":2,)"
            R"("mem_mib":4096,"mem_mib_used":768,"pods":2,"pod_names":["default/one","default/two"]},)"
            R"({"hostname":"edge-b","state":"connected","labels":{"zone":"south"},"cpus":2,"cpus_used":2,)"
            R"("mem_mib":4096,"mem_mib_used":1024,"pods":1,"pod_names":["ml/three"]}]})");
}

// kubectl cordon: the agent is connected and takes no new pod; the page says
// which, and a search for it finds it.
TEST_F(ClusterViewTest, ACordonedAgentSaysSo) {
  auto a = subscribe("edge-a", {}, 4);
  auto b = subscribe("edge-b", {}, 4);
  hub_->set_cordoned("edge-b", true);
  std::string all = view("");
  EXPECT_NE(all.find(R"("connected":2,)"), std::string::npos) << all;
  EXPECT_NE(all.find(R"({"hostname":"edge-a","state":"connected")"), std::string::npos) << all;
  EXPECT_NE(all.find(R"({"hostname":"edge-b","state":"cordoned")"), std::string::npos) << all;
  EXPECT_NE(view("q=cordon").find(R"("matched":1,)"), std::string::npos) << view("q=cordon");
}

TEST_F(ClusterViewTest, DisconnectedThenLostAgentsSaySoAndSearchAndPagesNarrowTheList) {
  std::vector<std::shared_ptr<test::RecordingChannel>> channels;
  for (int i = 0; i < 5; ++i)
    channels.push_back(subscribe("n" + std::to_string(i), {{"zone", i % 2 ? "odd" : "even"}}, 1));
  channels[1]->hang_up();
  EXPECT_NE(view("q=n1").find(R"("hostname":"n1","state":"disconnected")"), std::string::npos);
  channels[3]->hang_up();
  clock_.advance(30'000);  // past --agent-timeout: both are lost
  std::string all = view("");
  EXPECT_NE(all.find(R"("agents":3,"connected":3,"disconnected":0,"lost":2)"), std::string::npos) << all;
  EXPECT_NE(all.find(R"({"hostname":"n3","state":"lost","lost_at":")"), std::string::npos) << all;
  // Pages: the live ones by name, then the lost, newest first.
  EXPECT_NE(view("offset=2&limit=2").find(R"("matched":5,"offset":2,"limit":2,"agents":[{"hostname":"n4")"),
            std::string::npos);
  EXPECT_NE(view("offset=3&limit=2").find(R"("agents":[{"hostname":"n3","state":"lost")"), std::string::npos);
  EXPECT_NE(view("offset=9").find(R"("matched":5,"offset":9,"limit":50,"agents":[]})"), std::string::npos);
  // Search: by label, by state, by part of a name, in any case.
  EXPECT_NE(view("q=ZONE%3Deven").find(R"("matched":3,)"), std::string::npos) << view("q=ZONE%3Deven");
  EXPECT_NE(view("q=lost").find(R"("matched":2,)"), std::string::npos);
  EXPECT_NE(view("q=n4").find(R"("matched":1,)"), std::string::npos);
  // One that comes back is no longer lost.
  subscribe("n3", {}, 1);
  EXPECT_NE(view("").find(R"("lost":1)"), std::string::npos);
}

TEST(ClusterQuery, RefusesWhatIsNotAWholeNumberInRange) {
  struct Case {
    const char* query;
    const char* field;
  } bad[] = {{"limit=0", "limit"},  {"limit=1001", "limit"},  {"limit=x", "limit"},
             {"limit=-1", "limit"}, {"offset=1.5", "offset"}, {"offset=", "offset"}};
  for (const auto& c : bad) {
    std::string error, field;
    EXPECT_FALSE(parse_cluster_query(c.query, &error, &field)) << c.query;
    EXPECT_EQ(field, c.field) << c.query;
    EXPECT_FALSE(error.empty());
  }
  std::string error, field;
  auto q = parse_cluster_query("q=Sim&offset=100&limit=1000", &error, &field);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->search, "sim");
  EXPECT_EQ(q->offset, 100u);
  EXPECT_EQ(q->limit, 1000u);
}

TEST(StatusRoute, SaysRoleStoreAndCountersAndTheStoresErrorWhenItIsDown) {
  ManualClock clock;
  test::FakeStore store;
  MetricsRegistry metrics;
  metrics.counter("uvsched_pod_placements_total", "").add(labels({{"result", "placed"}}), 12);
  metrics.counter("uvsched_pod_placements_total", "").add(labels({{"result", "unschedulable"}}), 3);
  metrics.counter("uvsched_http_requests_total", "").add(labels({{"route", "/x"}, {"code", "503"}}), 2);
  Router router;
  std::string role = "leader";
  add_status_routes(router, clock, store, metrics,
                    {.version = "9.8.7",
                     .store = "etcd:http://127.0.0.1:2379",
                     .role = [&role] { return role; },
                     .pending_pods = [] { return size_t{4}; },
                     .pod_tasks = [] { return size_t{5}; },
                     .training_jobs = [] { return size_t{2}; }});
  clock.advance(90'500);
  auto ex = test::exchange(router, "GET", "/v1/status");
  EXPECT_EQ(ex->out, "") << "answered once the store has";
  store.run();
  std::string body = body_of(ex->out);
  EXPECT_NE(body.find(R"({"version":"9.8.7","uptime_seconds":90.5,"role":"leader",)"
                      R"("store":{"backend":"etcd","address":"http://127.0.0.1:2379","revision":)"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find(R"("read_latency_ms":)"), std::string::npos);
  EXPECT_NE(body.find(R"("pods":{"pending":4,"tasks":5},"training_jobs":2,"counters":{"placements":12,)"
                      R"("unschedulable":3,"preemptions":0,"ml_decisions":0,"ps_call_errors":0,"http_requests":2,)"
                      R"("http_server_errors":2,)"),
            std::string::npos)
      << body;
  role = "standby";
  store.set_down("etcd: no leader");
  ex = test::exchange(router, "GET", "/v1/status");
  store.run();
  body = body_of(ex->out);
  EXPECT_NE(body.find(R"("role":"standby")"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("error":)"), std::string::npos) << body;
  EXPECT_NE(body.find(R"("unavailable":"etcd: no leader")"), std::string::npos) << body;
  EXPECT_EQ(body.find("read_latency_ms"), std::string::npos) << body;
}

}  // namespace
}  // namespace uvsched
