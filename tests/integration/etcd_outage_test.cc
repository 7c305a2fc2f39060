// etcd goes away and comes back: calls fail fast (never hang), the store says
// why it is unavailable, and it recovers by itself; a watch resumes from where
// it stopped, so no event written while it was away is missed.
#include <gtest/gtest.h>
#include <signal.h>

#include <functional>
#include <optional>

#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "storage/base64.h"
#include "storage/etcd_store.h"
#include "tests/support/daemon_process.h"
#include "tests/support/etcd_process.h"
#include "tests/support/loop_runner.h"
#include "tests/support/lossy_proxy.h"
#include "tests/support/raw_http.h"

namespace uvsched::test {
namespace {

TEST(EtcdOutage, CallsFailFastWhileDownAndRecoverAfter) {
  log_configure(LogLevel::kOff, LogFormat::kText);
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  uv_loop_t loop;
  uv_loop_init(&loop);
  {
    LoopClock clock(&loop);
    std::vector<Url> eps;
    ASSERT_TRUE(parse_etcd_endpoints(etcd.url(), &eps));
    EtcdStore store(&loop, clock, eps, EtcdStore::Options{.request_timeout_ms = 1000});
    auto put = [&](const std::string& k) {
      std::optional<WriteResult> out;
      store.put(k, "v", 0, [&](WriteResult&& r) { out = std::move(r); });
      EXPECT_TRUE(run_until(
          &loop, [&] { return out.has_value(); }, 10'000))
          << "a put hung";
      return out ? std::move(*out) : WriteResult{};
    };

    std::vector<std::string> watched;
    ASSERT_TRUE(put("/o/first").status.ok());  // "from now" is then this revision, not etcd's later one
    store.watch("/o/", 0, [&](const StoreStatus&, const std::vector<WatchEvent>& evs) {
      for (const auto& e : evs) watched.push_back(e.kv.key);
    });
    ASSERT_TRUE(put("/o/before").status.ok());
    ASSERT_TRUE(run_until(&loop, [&] { return watched.size() == 1; }));

    etcd.stop(SIGKILL);
    uint64_t t0 = uv_hrtime();
    auto down = put("/o/while-down");
    EXPECT_EQ(down.status.code, StoreCode::kUnavailable);
    EXPECT_LT((uv_hrtime() - t0) / 1'000'000, 3'000u) << "an unavailable store must answer quickly";
    ASSERT_TRUE(store.unavailable_reason().has_value());
    EXPECT_NE(store.unavailable_reason()->find("etcd unreachable"), std::string::npos);

    ASSERT_TRUE(etcd.start());  // same ports, same data dir
    ASSERT_TRUE(run_until(
        &loop, [&] { return !store.unavailable_reason().has_value(); }, 20'000))
        << "the store did not notice etcd came back";
    // Written straight to etcd while our watch reconnects: the watch must still see it.
    auto direct = http_request(etcd.client_port(), "POST", "/v3/kv/put", R"({"key":"L28vZGlyZWN0","value":"dg=="})");
    ASSERT_TRUE(direct && direct->status == 200);
    ASSERT_TRUE(put("/o/after").status.ok());
    ASSERT_TRUE(run_until(
        &loop, [&] { return watched.size() >= 3; }, 20'000));
    EXPECT_EQ(watched, (std::vector<std::string>{"/o/before", "/o/direct", "/o/after"}));

    bool closed = false;
    store.close([&] { closed = true; });
    ASSERT_TRUE(run_until(&loop, [&] { return closed; }));
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

// The member a write went to applied it and its answer was lost (the member
// died, say). Sent again to the next member, a create-if-absent fails against
// its own result and the caller is told somebody else's key is there. It is
// told the store was unavailable and the write may have been applied, as
// etcd's own client does; a read is still sent to the next member.
TEST(EtcdOutage, AWriteWhoseAnswerWasLostIsNotSentAgainToAnotherMember) {
  log_configure(LogLevel::kOff, LogFormat::kText);
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  LossyProxy proxy(etcd.client_port());
  uv_loop_t loop;
  uv_loop_init(&loop);
  {
    LoopClock clock(&loop);
    std::vector<Url> eps;
    ASSERT_TRUE(parse_etcd_endpoints(proxy.url() + "," + etcd.url(), &eps));  // one etcd, two ways in
    // Each store talks to the proxy first, and to etcd itself once that failed.
    auto with_store = [&](const std::function<void(EtcdStore&)>& body) {
      EtcdStore store(&loop, clock, eps);
      body(store);
      bool closed = false;
      store.close([&] { closed = true; });
      ASSERT_TRUE(run_until(&loop, [&] { return closed; }));
    };
    auto create = [&](EtcdStore& store, const std::string& key) {
      TxnRequest t;
      t.compares.push_back({key, Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});
      t.success.push_back({TxnOp::Type::kPut, key, "mine", 0, false});
      std::optional<TxnResult> out;
      store.txn(std::move(t), [&](TxnResult&& r) { out = std::move(r); });
      EXPECT_TRUE(run_until(
          &loop, [&] { return out.has_value(); }, 10'000))
          << "a txn hung";
      return out ? std::move(*out) : TxnResult{};
    };
    auto read = [&](EtcdStore& store, const std::string& key) {
      std::optional<RangeResult> out;
      store.get(key, {}, [&](RangeResult&& r) { out = std::move(r); });
      EXPECT_TRUE(run_until(
          &loop, [&] { return out.has_value(); }, 10'000))
          << "a read hung";
      return out ? std::move(*out) : RangeResult{};
    };

    with_store([&](EtcdStore& store) {
      auto warm = create(store, "/lossy/warm");  // its connection to the proxy is pooled now
      ASSERT_TRUE(warm.status.ok() && warm.succeeded) << warm.status.message;
      proxy.lose_answer_to(base64_encode("/lossy/created"));
      auto lost = create(store, "/lossy/created");
      EXPECT_EQ(proxy.answers_lost(), 1);
      EXPECT_EQ(lost.status.code, StoreCode::kUnavailable)
          << "told " << (lost.succeeded ? "it created the key" : "the key was there") << ": " << lost.status.message;
      EXPECT_NE(lost.status.message.find("may have been applied"), std::string::npos) << lost.status.message;
      auto there = read(store, "/lossy/created");  // etcd did apply it
      ASSERT_TRUE(there.status.ok()) << there.status.message;
      ASSERT_EQ(there.kvs.size(), 1u);
      EXPECT_EQ(there.kvs[0].value, "mine");
    });
    with_store([&](EtcdStore& store) {
      proxy.lose_answer_to(base64_encode("/lossy/created"));
      auto again = read(store, "/lossy/created");  // a read whose answer is lost is read again, elsewhere
      EXPECT_EQ(proxy.answers_lost(), 2);
      EXPECT_TRUE(again.status.ok()) << again.status.message;
      EXPECT_EQ(again.kvs.size(), 1u);
    });
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

// Polls /readyz as an orchestrator would, until it answers `want` or time is up.
std::optional<RawResponse> wait_readyz(uint16_t port, int want, std::chrono::seconds deadline = 20s) {
  std::optional<RawResponse> r;
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    r = http_request(port, "GET", "/readyz");
    if (r && r->status == want) break;
    std::this_thread::sleep_for(50ms);
  }
  return r;
}

double pods_pending(const DaemonProcess& d) { return metric_value(d.port(), "uvsched_pods_pending"); }

// etcd keeps a watch's history only until it is compacted. The scheduler's
// watch, resuming after an outage from a compacted revision, is refused; the
// scheduler then reads every pod again and follows on from there, learning
// what changed unseen (a waiting pod deleted) — not deaf to new pods for good.
TEST(EtcdOutage, TheSchedulerReloadsWhenItsWatchIsCompactedAway) {
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  DaemonProcess daemon({"--store", "etcd:" + etcd.url()});
  ASSERT_TRUE(daemon.start()) << daemon.log();
  ASSERT_TRUE(daemon.wait_ready()) << daemon.log();
  auto create = [&](const std::string& name) {
    auto r =
        http_request(daemon.port(), "POST", "/api/v1/namespaces/default/pods",
                     R"({"metadata":{"name":")" + name + R"("},"spec":{"containers":[{"name":"c","image":"i"}]}})");
    return r ? r->status : 0;
  };
  ASSERT_EQ(create("gone"), 201);
  ASSERT_EQ(create("kept"), 201);
  auto until = std::chrono::steady_clock::now() + 10s;
  while (pods_pending(daemon) != 2 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(pods_pending(daemon), 2);  // no agents: both wait

  // The daemon is frozen through etcd's restart, so its watch cannot come
  // back before a pod is deleted behind its back and the history compacted.
  ASSERT_EQ(kill(daemon.pid(), SIGSTOP), 0);
  etcd.stop(SIGKILL);
  ASSERT_TRUE(etcd.start());
  auto del = http_request(etcd.client_port(), "POST", "/v3/kv/deleterange",
                          R"({"key":"L3JlZ2lzdHJ5L3BvZHMvZGVmYXVsdC9nb25l"})");  // /registry/pods/default/gone
  ASSERT_TRUE(del && del->status == 200) << (del ? del->body : "");
  // One write more, so the compaction covers the delete (a watch may resume
  // at the compacted revision itself).
  auto later = http_request(etcd.client_port(), "POST", "/v3/kv/put", R"({"key":"L290aGVy","value":"eA=="})");
  ASSERT_TRUE(later && later->status == 200) << (later ? later->body : "");
  std::string rev = later->body.substr(later->body.find("\"revision\":\"") + 12);
  rev = rev.substr(0, rev.find('"'));
  auto compact = http_request(etcd.client_port(), "POST", "/v3/kv/compaction", R"({"revision":")" + rev + R"("})");
  ASSERT_TRUE(compact && compact->status == 200) << (compact ? compact->body : "");
  ASSERT_EQ(kill(daemon.pid(), SIGCONT), 0);

  ASSERT_TRUE(daemon.wait_for_log("event=scheduler_watch_ended", 20s)) << daemon.log();
  ASSERT_TRUE(daemon.wait_ready(20s)) << daemon.log();
  ASSERT_EQ(create("later"), 201);
  until = std::chrono::steady_clock::now() + 10s;
  while (pods_pending(daemon) != 2 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(pods_pending(daemon), 2) << "kept and later wait; gone is forgotten\n" << daemon.log();
  EXPECT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();
}

TEST(EtcdOutage, DaemonReadinessFollowsEtcd) {
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  DaemonProcess daemon({"--store", "etcd:" + etcd.url()});
  ASSERT_TRUE(daemon.start()) << daemon.log();
  auto ready = wait_readyz(daemon.port(), 200);
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200) << ready->body;  // once it has won the (uncontested) election
  etcd.stop(SIGKILL);
  auto r = wait_readyz(daemon.port(), 503);  // once the health probe has failed
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->header("Retry-After"), "1");
  EXPECT_NE(r->body.find("etcd unreachable"), std::string::npos) << r->body;
  auto health = http_request(daemon.port(), "GET", "/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);  // alive, just not ready
  ASSERT_TRUE(etcd.start());
  r = wait_readyz(daemon.port(), 200);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();
}

}  // namespace
}  // namespace uvsched::test

namespace uvsched::test {
namespace {

int readyz(const DaemonProcess& d) {
  auto r = http_request(d.port(), "GET", "/readyz");
  return r ? r->status : 0;
}

// Polls until exactly one of the two is ready and the other says 503.
bool one_ready(const DaemonProcess& a, const DaemonProcess& b, std::chrono::seconds deadline, int* which) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    int ra = readyz(a), rb = readyz(b);
    if (ra == 200 && rb == 503) return *which = 0, true;
    if (rb == 200 && ra == 503) return *which = 1, true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// Starts both on one etcd; which of them leads (0: a, 1: b), or -1.
int start_two(DaemonProcess& a, DaemonProcess& b) {
  if (!a.start() || !b.start()) return -1;
  int leader = -1;
  return one_ready(a, b, 20s, &leader) ? leader : -1;
}

TEST(LeaderElection, OneOfTwoDaemonsLeadsAndTheOtherTakesOverWhenItDies) {
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  std::vector<std::string> args = {"--store", "etcd:" + etcd.url(), "--leader-ttl", "2"};
  DaemonProcess a(args), b(args);
  int leader = start_two(a, b);
  ASSERT_NE(leader, -1) << a.log() << b.log();
  DaemonProcess& dead = leader == 0 ? a : b;
  DaemonProcess& standby = leader == 0 ? b : a;
  auto r = http_request(standby.port(), "GET", "/readyz");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("standby"), std::string::npos) << r->body;

  dead.stop(SIGKILL);  // no clean hand-over: the lease must lapse
  auto until = std::chrono::steady_clock::now() + 20s;
  while (readyz(standby) != 200 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(readyz(standby), 200) << standby.log();
  // readyz answers once it leads; the log line may still be in the pipe to us.
  EXPECT_TRUE(standby.wait_for_log("event=leader_elected")) << standby.log();
  EXPECT_EQ(standby.stop(SIGTERM), 0);
}

// A leader that stops cleanly revokes its lease before it closes the store,
// so the standby takes over at once, not after the TTL (the revoke used to be
// cut off by the store's close about one stop in four).
TEST(LeaderElection, AStandbyTakesOverAtOnceWhenTheLeaderStopsCleanly) {
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start());
  std::vector<std::string> args = {"--store", "etcd:" + etcd.url(), "--leader-ttl", "60"};
  for (int round = 0; round < 3; ++round) {
    DaemonProcess a(args), b(args);
    int leader = start_two(a, b);
    ASSERT_NE(leader, -1) << a.log() << b.log();
    DaemonProcess& stopped = leader == 0 ? a : b;
    DaemonProcess& standby = leader == 0 ? b : a;
    EXPECT_EQ(stopped.stop(SIGTERM), 0);
    // A standby tries every second: well inside 10 s, and far from the 60 s TTL.
    EXPECT_TRUE(standby.wait_for_log("event=leader_elected", 10s)) << "round " << round << ": " << standby.log();
    EXPECT_EQ(standby.stop(SIGTERM), 0);  // and it hands over cleanly for the next round
  }
}

}  // namespace
}  // namespace uvsched::test
