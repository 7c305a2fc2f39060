// One behaviour, every backend: the same tests run on the embedded store and
// on a real etcd started for the suite.
#include <gtest/gtest.h>
#include <functional>

#include <map>

#include <optional>

#include "reactor/log.h"
#include "storage/etcd_store.h"
#include "tests/support/etcd_process.h"
#include "tests/support/loop_runner.h"
#include "tests/support/raw_http.h"
#include "tests/support/store_fixture.h"

namespace uvsched::test {
namespace {

using BackendFactory = std::unique_ptr<StoreBackend> (*)();

class StoreConformance : public ::testing::TestWithParam<BackendFactory> {
 protected:
  void SetUp() override {
    log_configure(LogLevel::kWarn, LogFormat::kText);
    uv_loop_init(&loop_);
    clock_ = std::make_unique<LoopClock>(&loop_);
    backend_ = GetParam()();
    ASSERT_TRUE(backend_) << "backend could not be started (is etcd-server installed?)";
    std::string error;
    store_ = backend_->open(&loop_, *clock_, &error);
    ASSERT_TRUE(store_) << error;
  }
  void TearDown() override {
    close_store();
    clock_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }
  void close_store() {
    if (!store_) return;
    bool closed = false;
    store_->close([&] { closed = true; });
    ASSERT_TRUE(run_until(&loop_, [&] { return closed; }));
    store_.reset();
  }
  void reopen() {
    close_store();
    std::string error;
    store_ = backend_->open(&loop_, *clock_, &error);
    ASSERT_TRUE(store_) << error;
  }

  // Synchronous wrappers: issue, then run the loop until the answer comes.
  template <typename R, typename F>
  R wait(F issue) {
    std::optional<R> out;
    issue([&](R&& r) { out = std::move(r); });
    EXPECT_TRUE(run_until(&loop_, [&] { return out.has_value(); })) << "no answer from the store";
    return out ? std::move(*out) : R{};
  }
  WriteResult put(const std::string& k, const std::string& v, int64_t lease = 0) {
    return wait<WriteResult>([&](auto cb) { store_->put(k, v, lease, cb); });
  }
  RangeResult get(const std::string& k, RangeOptions o = {}) {
    return wait<RangeResult>([&](auto cb) { store_->get(k, o, cb); });
  }
  WriteResult del(const std::string& k, bool prefix = false) {
    return wait<WriteResult>([&](auto cb) { store_->del(k, prefix, cb); });
  }
  TxnResult txn(TxnRequest t) {
    return wait<TxnResult>([&](auto cb) { store_->txn(t, cb); });
  }
  LeaseResult grant(int64_t ttl) {
    return wait<LeaseResult>([&](auto cb) { store_->lease_grant(ttl, cb); });
  }

  uv_loop_t loop_;
  std::unique_ptr<LoopClock> clock_;
  std::unique_ptr<StoreBackend> backend_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreConformance, PutGetAndRevisions) {
  auto p1 = put("/t/a", "1");
  ASSERT_TRUE(p1.status.ok()) << p1.status.message;
  EXPECT_TRUE(p1.prev_kvs.empty());
  auto p2 = put("/t/a", "2");
  EXPECT_EQ(p2.revision, p1.revision + 1);
  ASSERT_EQ(p2.prev_kvs.size(), 1u);
  EXPECT_EQ(p2.prev_kvs[0].value, "1");
  auto g = get("/t/a");
  ASSERT_TRUE(g.status.ok());
  ASSERT_EQ(g.kvs.size(), 1u);
  EXPECT_EQ(g.kvs[0].value, "2");
  EXPECT_EQ(g.kvs[0].create_revision, p1.revision);
  EXPECT_EQ(g.kvs[0].mod_revision, p2.revision);
  EXPECT_EQ(g.kvs[0].version, 2);
  EXPECT_GE(g.revision, p2.revision);
  EXPECT_TRUE(get("/t/missing").kvs.empty());
  EXPECT_GE(store_->revision(), p2.revision);
}

// A leader fences its writes with a compare on its own leader key: once
// another daemon has made the key again, the deposed leader's writes fail
// (etcd) instead of landing. One process per directory needs no fence: the
// embedded store ignores it.
TEST_P(StoreConformance, AWriteFenceRefusesADeposedLeadersWrites) {
  using T = Compare::Target;
  using O = Compare::Op;
  auto made = put("/t/leader", "me");
  ASSERT_TRUE(made.status.ok());
  store_->set_write_fence({"/t/leader", T::kCreateRevision, O::kEqual, made.revision, {}});
  ASSERT_TRUE(put("/t/x", "1").status.ok());
  TxnRequest cas;
  cas.compares = {{"/t/x", T::kVersion, O::kEqual, 1, {}}};
  cas.success = {{TxnOp::Type::kPut, "/t/x", "2", 0, false}};
  EXPECT_TRUE(txn(cas).succeeded);
  // A txn whose own compare fails says so, with its own failure reads only.
  TxnRequest stale;
  stale.compares = {{"/t/x", T::kVersion, O::kEqual, 7, {}}};
  stale.success = {{TxnOp::Type::kPut, "/t/x", "3", 0, false}};
  stale.failure = {{TxnOp::Type::kRange, "/t/x", {}, 0, false}};
  auto lost = txn(stale);
  EXPECT_TRUE(lost.status.ok()) << lost.status.message;
  EXPECT_FALSE(lost.succeeded);
  ASSERT_EQ(lost.ranges.size(), 1u);
  EXPECT_EQ(lost.ranges[0].kvs.at(0).value, "2");

  // Another daemon takes over: it deletes and makes the key again (unfenced, as an election does).
  TxnRequest take;
  take.success = {{TxnOp::Type::kDelete, "/t/leader", {}, 0, false}};
  take.unfenced = true;
  ASSERT_TRUE(txn(take).status.ok());
  take.success = {{TxnOp::Type::kPut, "/t/leader", "other", 0, false}};
  ASSERT_TRUE(txn(take).status.ok());

  auto p = put("/t/x", "4");
  auto d = del("/t/x");
  cas.compares = {{"/t/x", T::kVersion, O::kGreater, 0, {}}};
  auto c = txn(cas);
  if (backend_->name() == "embedded") {
    EXPECT_TRUE(p.status.ok() && d.status.ok() && c.status.ok());
    return;
  }
  EXPECT_EQ(p.status.code, StoreCode::kFenced) << p.status.message;
  EXPECT_EQ(d.status.code, StoreCode::kFenced) << d.status.message;
  EXPECT_EQ(c.status.code, StoreCode::kFenced) << c.status.message;
  EXPECT_FALSE(c.succeeded);
  auto g = get("/t/x");  // reads go on, and nothing of the deposed leader's landed
  ASSERT_EQ(g.kvs.size(), 1u);
  EXPECT_EQ(g.kvs[0].value, "2");
}

TEST_P(StoreConformance, BinaryValuesSurvive) {
  std::string v("\0\x01\xff{\"json\":1}\n", 14);
  ASSERT_TRUE(put("/t/bin", v).status.ok());
  auto g = get("/t/bin");
  ASSERT_EQ(g.kvs.size(), 1u);
  EXPECT_EQ(g.kvs[0].value, v);
}

// Large values (which the etcd backend stores packed) come back as they were
// put through every path that returns values: get, a put's and a delete's
// old value, a txn's range and watch events.
TEST_P(StoreConformance, LargeValuesComeBackWhole) {
  auto big = [](char c) {
    return R"({"kind":"Pod","spec":{"containers":[{"name":")" + std::string(400, c) + R"("}]}})";
  };
  std::string marked = std::string("\0uvz", 4) + big('m');  // looks like the packed form, and is not
  ASSERT_TRUE(get("/big/").status.ok());
  std::vector<WatchEvent> seen;
  store_->watch("/big/", 0, [&](const StoreStatus& st, const std::vector<WatchEvent>& evs) {
    EXPECT_TRUE(st.ok()) << st.message;
    seen.insert(seen.end(), evs.begin(), evs.end());
  });
  ASSERT_TRUE(put("/big/a", big('a')).status.ok());
  auto second = put("/big/a", big('b'));
  ASSERT_EQ(second.prev_kvs.size(), 1u);
  EXPECT_EQ(second.prev_kvs[0].value, big('a'));
  ASSERT_TRUE(put("/big/m", marked).status.ok());
  EXPECT_EQ(get("/big/m").kvs.at(0).value, marked);
  TxnRequest t;
  t.compares.push_back({"/big/a", Compare::Target::kVersion, Compare::Op::kEqual, 2, {}});
  t.success.push_back({TxnOp::Type::kPut, "/big/c", big('c'), 0, false});
  t.success.push_back({TxnOp::Type::kRange, "/big/a", {}, 0, false});
  auto r = txn(std::move(t));
  ASSERT_TRUE(r.succeeded);
  ASSERT_EQ(r.ranges.size(), 1u);
  ASSERT_EQ(r.ranges[0].kvs.size(), 1u);
  EXPECT_EQ(r.ranges[0].kvs[0].value, big('b'));
  auto gone = del("/big/c");
  ASSERT_EQ(gone.prev_kvs.size(), 1u);
  EXPECT_EQ(gone.prev_kvs[0].value, big('c'));
  ASSERT_TRUE(run_until(&loop_, [&] { return seen.size() >= 5; }));
  EXPECT_EQ(seen[0].kv.value, big('a'));
  EXPECT_EQ(seen[1].kv.value, big('b'));
  EXPECT_EQ(seen[2].kv.value, marked);
  EXPECT_EQ(seen[3].kv.value, big('c'));
  ASSERT_TRUE(seen[4].prev_kv);
  EXPECT_EQ(seen[4].prev_kv->value, big('c'));
}

TEST_P(StoreConformance, PrefixRangeWithLimit) {
  for (std::string k : {"/r/a", "/r/b", "/r/c", "/r0", "/q"}) ASSERT_TRUE(put(k, k).status.ok());
  RangeOptions all;
  all.prefix = true;
  auto r = get("/r/", all);
  ASSERT_EQ(r.kvs.size(), 3u);
  EXPECT_EQ(r.kvs[0].key, "/r/a");
  EXPECT_EQ(r.kvs[2].key, "/r/c");
  EXPECT_FALSE(r.more);
  RangeOptions two = all;
  two.limit = 2;
  auto l = get("/r/", two);
  EXPECT_EQ(l.kvs.size(), 2u);
  EXPECT_TRUE(l.more);
  EXPECT_EQ(l.count, 3);
}

TEST_P(StoreConformance, DeleteOneAndPrefix) {
  for (std::string k : {"/d/a", "/d/b", "/d/c"}) ASSERT_TRUE(put(k, "x").status.ok());
  auto one = del("/d/a");
  EXPECT_EQ(one.deleted, 1);
  ASSERT_EQ(one.prev_kvs.size(), 1u);
  auto rest = del("/d/", true);
  EXPECT_EQ(rest.deleted, 2);
  EXPECT_EQ(rest.revision, one.revision + 1);  // one revision for the whole prefix
  auto none = del("/d/", true);
  EXPECT_EQ(none.deleted, 0);
  RangeOptions all;
  all.prefix = true;
  EXPECT_TRUE(get("/d/", all).kvs.empty());
}

TEST_P(StoreConformance, CreateIfAbsentAndCompareAndSwap) {
  auto create = [&](const std::string& v) {
    TxnRequest t;
    t.compares.push_back({"/lock", Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});
    t.success.push_back({TxnOp::Type::kPut, "/lock", v, 0, false});
    t.failure.push_back({TxnOp::Type::kRange, "/lock", {}, 0, false});
    return txn(t);
  };
  auto first = create("me");
  ASSERT_TRUE(first.status.ok()) << first.status.message;
  EXPECT_TRUE(first.succeeded);
  auto second = create("you");
  EXPECT_FALSE(second.succeeded);
  ASSERT_EQ(second.ranges.size(), 1u);
  ASSERT_EQ(second.ranges[0].kvs.size(), 1u);
  EXPECT_EQ(second.ranges[0].kvs[0].value, "me");

  int64_t mod = second.ranges[0].kvs[0].mod_revision;
  TxnRequest stale;
  stale.compares.push_back({"/lock", Compare::Target::kModRevision, Compare::Op::kEqual, mod - 1, {}});
  stale.success.push_back({TxnOp::Type::kPut, "/lock", "stolen", 0, false});
  EXPECT_FALSE(txn(stale).succeeded);
  TxnRequest fresh;
  fresh.compares.push_back({"/lock", Compare::Target::kModRevision, Compare::Op::kEqual, mod, {}});
  fresh.success.push_back({TxnOp::Type::kPut, "/lock", "swapped", 0, false});
  fresh.success.push_back({TxnOp::Type::kPut, "/lock2", "too", 0, false});
  auto swapped = txn(fresh);
  EXPECT_TRUE(swapped.succeeded);
  EXPECT_EQ(get("/lock").kvs[0].value, "swapped");
  EXPECT_EQ(get("/lock").kvs[0].mod_revision, get("/lock2").kvs[0].mod_revision);  // one revision per txn

  TxnRequest by_value;
  by_value.compares.push_back({"/lock", Compare::Target::kValue, Compare::Op::kEqual, 0, "swapped"});
  by_value.success.push_back({TxnOp::Type::kDelete, "/lock", {}, 0, false});
  EXPECT_TRUE(txn(by_value).succeeded);
  EXPECT_TRUE(get("/lock").kvs.empty());

  // An absent key's mod revision compares as 0 (a read-then-swap of a record
  // that may not exist yet, as the node label edits' is).
  TxnRequest absent;
  absent.compares.push_back({"/lock", Compare::Target::kModRevision, Compare::Op::kEqual, 0, {}});
  absent.success.push_back({TxnOp::Type::kPut, "/lock", "again", 0, false});
  EXPECT_TRUE(txn(absent).succeeded);
  TxnRequest present;
  present.compares.push_back({"/lock2", Compare::Target::kModRevision, Compare::Op::kEqual, 0, {}});
  present.success.push_back({TxnOp::Type::kPut, "/lock2", "lost", 0, false});
  EXPECT_FALSE(txn(present).succeeded);
}

TEST_P(StoreConformance, WatchSeesPutsAndDeletesUnderItsPrefix) {
  // A store that has served a call watches "from now" as from the revision it
  // saw, so the puts below are seen however late etcd sets the watch up.
  ASSERT_TRUE(get("/w/").status.ok());
  std::vector<WatchEvent> seen;
  auto id = store_->watch("/w/", 0, [&](const StoreStatus& st, const std::vector<WatchEvent>& evs) {
    EXPECT_TRUE(st.ok()) << st.message;
    seen.insert(seen.end(), evs.begin(), evs.end());
  });
  ASSERT_TRUE(put("/w/a", "1").status.ok());
  ASSERT_TRUE(put("/other", "x").status.ok());
  ASSERT_TRUE(put("/w/a", "2").status.ok());
  ASSERT_TRUE(del("/w/a").status.ok());
  ASSERT_TRUE(run_until(&loop_, [&] { return seen.size() >= 3; }));
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].type, WatchEvent::Type::kPut);
  EXPECT_EQ(seen[0].kv.value, "1");
  EXPECT_EQ(seen[1].kv.value, "2");
  EXPECT_EQ(seen[2].type, WatchEvent::Type::kDelete);
  EXPECT_EQ(seen[2].kv.key, "/w/a");
  ASSERT_TRUE(seen[2].prev_kv);  // a delete says what it deleted
  EXPECT_EQ(seen[2].prev_kv->value, "2");
  EXPECT_LT(seen[0].kv.mod_revision, seen[2].kv.mod_revision);
  store_->cancel_watch(id);
  ASSERT_TRUE(put("/w/after-cancel", "x").status.ok());
  get("/w/after-cancel");  // one more round trip for a stray event to show up
  EXPECT_EQ(seen.size(), 3u);
}

TEST_P(StoreConformance, WatchFromAPastRevisionReplaysHistory) {
  auto a = put("/h/a", "1");
  ASSERT_TRUE(put("/h/b", "2").status.ok());
  std::vector<WatchEvent> seen;
  store_->watch("/h/", a.revision, [&](const StoreStatus& st, const std::vector<WatchEvent>& evs) {
    EXPECT_TRUE(st.ok());
    seen.insert(seen.end(), evs.begin(), evs.end());
  });
  ASSERT_TRUE(run_until(&loop_, [&] { return seen.size() >= 2; }));
  EXPECT_EQ(seen[0].kv.key, "/h/a");
  EXPECT_EQ(seen[1].kv.key, "/h/b");
  ASSERT_TRUE(put("/h/c", "3").status.ok());
  ASSERT_TRUE(run_until(&loop_, [&] { return seen.size() >= 3; }));
  EXPECT_EQ(seen[2].kv.key, "/h/c");
}

TEST_P(StoreConformance, LeasedKeysVanishOnRevokeAndOnExpiry) {
  auto lease = grant(60);
  ASSERT_TRUE(lease.status.ok()) << lease.status.message;
  EXPECT_EQ(lease.ttl_seconds, 60);
  ASSERT_TRUE(put("/l/held", "x", lease.id).status.ok());
  EXPECT_EQ(get("/l/held").kvs[0].lease, lease.id);
  auto revoked = wait<LeaseResult>([&](auto cb) { store_->lease_revoke(lease.id, cb); });
  EXPECT_TRUE(revoked.status.ok());
  EXPECT_TRUE(get("/l/held").kvs.empty());

  auto short_lease = grant(1);
  ASSERT_TRUE(put("/l/brief", "x", short_lease.id).status.ok());
  auto kept = wait<LeaseResult>([&](auto cb) { store_->lease_keepalive(short_lease.id, cb); });
  EXPECT_TRUE(kept.status.ok());
  EXPECT_GE(kept.ttl_seconds, 1);
  bool gone = false;
  store_->watch("/l/brief", 0, [&](const StoreStatus&, const std::vector<WatchEvent>& evs) {
    for (const auto& e : evs) gone = gone || e.type == WatchEvent::Type::kDelete;
  });
  ASSERT_TRUE(run_until(
      &loop_, [&] { return gone; }, 15'000))
      << "leased key outlived its lease";
  EXPECT_TRUE(get("/l/brief").kvs.empty());
  auto late = wait<LeaseResult>([&](auto cb) { store_->lease_keepalive(short_lease.id, cb); });
  EXPECT_EQ(late.status.code, StoreCode::kNotFound);
}

TEST_P(StoreConformance, PutWithAnUnknownLeaseFails) {
  auto r = put("/l/x", "x", 987654321);
  EXPECT_FALSE(r.status.ok());
  EXPECT_TRUE(get("/l/x").kvs.empty());
}

TEST_P(StoreConformance, DataSurvivesARestart) {
  auto a = put("/p/a", "1");
  ASSERT_TRUE(put("/p/b", "2").status.ok());
  ASSERT_TRUE(del("/p/b").status.ok());
  reopen();
  auto g = get("/p/a");
  ASSERT_EQ(g.kvs.size(), 1u);
  EXPECT_EQ(g.kvs[0].value, "1");
  EXPECT_EQ(g.kvs[0].mod_revision, a.revision);
  EXPECT_TRUE(get("/p/b").kvs.empty());
  auto next = put("/p/c", "3");
  EXPECT_GT(next.revision, a.revision + 1);  // the revision keeps rising across restarts
}

TEST_P(StoreConformance, ManyWritesInOneTurnAllComplete) {
  int done = 0;
  for (int i = 0; i < 500; ++i) {
    store_->put("/many/" + std::to_string(i), std::string(100, 'v'), 0, [&](WriteResult&& r) {
      EXPECT_TRUE(r.status.ok()) << r.status.message;
      ++done;
    });
  }
  ASSERT_TRUE(run_until(
      &loop_, [&] { return done == 500; }, 30'000));
  RangeOptions all;
  all.prefix = true;
  EXPECT_EQ(get("/many/", all).kvs.size(), 500u);
}

// Many compare-and-writes in one turn (etcd sends them as one txn while all
// hold): each still gets its own answer when some of the compares fail.
TEST_P(StoreConformance, CompareAndWritesOfOneTurnEachGetTheirOwnAnswer) {
  ASSERT_TRUE(put("/cas/3", "old").status.ok());
  ASSERT_TRUE(put("/cas/7", "old").status.ok());
  int64_t mod9 = put("/cas/9", "old").revision;
  std::map<int, TxnResult> results;
  for (int i = 0; i < 200; ++i) {
    std::string key = "/cas/" + std::to_string(i);
    TxnRequest t;
    if (i == 9) {
      t.compares.push_back({key, Compare::Target::kModRevision, Compare::Op::kEqual, mod9, {}});  // holds
    } else {
      t.compares.push_back({key, Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});  // create if absent
    }
    t.success.push_back({TxnOp::Type::kPut, key, "new", 0, false});
    store_->txn(std::move(t), [&results, i](TxnResult&& r) { results[i] = std::move(r); });
  }
  ASSERT_TRUE(run_until(
      &loop_, [&] { return results.size() == 200; }, 30'000));
  for (const auto& [i, r] : results) {
    EXPECT_TRUE(r.status.ok()) << i << ": " << r.status.message;
    EXPECT_EQ(r.succeeded, i != 3 && i != 7) << i;
  }
  EXPECT_EQ(get("/cas/3").kvs[0].value, "old");
  EXPECT_EQ(get("/cas/9").kvs[0].value, "new");
  EXPECT_EQ(get("/cas/150").kvs[0].value, "new");
  RangeOptions all;
  all.prefix = true;
  EXPECT_EQ(get("/cas/", all).kvs.size(), 200u);
}

// Creates of one turn that each also check a shared key (a pod storm's
// namespace): those whose shared key exists all succeed, the others all fail
// and read the shared key in their failure branch; a txn that writes a key
// others compare still gets its own answer.
TEST_P(StoreConformance, CompareAndWritesSharingAComparedKeyEachGetTheirOwnAnswer) {
  ASSERT_TRUE(put("/shared/ns/here", "ns").status.ok());
  std::map<int, TxnResult> results;
  for (int i = 0; i < 120; ++i) {
    std::string ns = i % 2 == 0 ? "/shared/ns/here" : "/shared/ns/gone";
    std::string key = "/shared/pods/" + std::to_string(i);
    TxnRequest t;
    t.compares.push_back({key, Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});
    t.compares.push_back({ns, Compare::Target::kCreateRevision, Compare::Op::kGreater, 0, {}});
    t.success.push_back({TxnOp::Type::kPut, key, "pod", 0, false});
    t.failure.push_back({TxnOp::Type::kRange, ns, {}, 0, false});
    if (i == 60) {  // and one that rewrites the namespace the others check
      t = TxnRequest{};
      t.compares.push_back({"/shared/ns/here", Compare::Target::kCreateRevision, Compare::Op::kGreater, 0, {}});
      t.success.push_back({TxnOp::Type::kPut, "/shared/ns/here", "ns2", 0, false});
    }
    store_->txn(std::move(t), [&results, i](TxnResult&& r) { results[i] = std::move(r); });
  }
  ASSERT_TRUE(run_until(
      &loop_, [&] { return results.size() == 120; }, 30'000));
  for (const auto& [i, r] : results) {
    ASSERT_TRUE(r.status.ok()) << i << ": " << r.status.message;
    EXPECT_EQ(r.succeeded, i % 2 == 0) << i;
    if (i % 2 == 1) {
      ASSERT_EQ(r.ranges.size(), 1u) << i;
      EXPECT_TRUE(r.ranges[0].kvs.empty()) << i;  // the failure branch read the (absent) key
    }
  }
  RangeOptions all;
  all.prefix = true;
  EXPECT_EQ(get("/shared/pods/", all).kvs.size(), 59u);  // the even ones but 60
  EXPECT_EQ(get("/shared/ns/here").kvs[0].value, "ns2");
}

TEST_P(StoreConformance, AWatchThatSkipsDeletedValuesStillNamesDeletedKeys) {
  ASSERT_TRUE(get("/nd/").status.ok());
  std::vector<WatchEvent> seen;
  store_->watch(
      "/nd/", 0,
      [&](const StoreStatus& st, const std::vector<WatchEvent>& evs) {
        EXPECT_TRUE(st.ok()) << st.message;
        seen.insert(seen.end(), evs.begin(), evs.end());
      },
      /*deleted_values=*/false);
  ASSERT_TRUE(put("/nd/a", "1").status.ok());
  ASSERT_TRUE(del("/nd/a").status.ok());
  ASSERT_TRUE(run_until(&loop_, [&] { return seen.size() >= 2; }));
  EXPECT_EQ(seen[1].type, WatchEvent::Type::kDelete);
  EXPECT_EQ(seen[1].kv.key, "/nd/a");
}

// Chains of dependent writes (each issued from the last one's answer) over
// many keys at once: with etcd, writes wait while txns are in flight and go
// out together; every one is still answered, in order per key.
TEST_P(StoreConformance, WritesQueuedBehindTxnsInFlightAreAllAnsweredInOrder) {
  constexpr int kKeys = 40, kSteps = 10;
  int finished = 0;
  std::function<void(int, int)> step = [&](int key, int n) {
    store_->put("/chain/" + std::to_string(key), std::to_string(n), 0, [&, key, n](WriteResult&& r) {
      EXPECT_TRUE(r.status.ok()) << r.status.message;
      if (n + 1 < kSteps) return step(key, n + 1);
      ++finished;
    });
  };
  for (int k = 0; k < kKeys; ++k) step(k, 0);
  ASSERT_TRUE(run_until(
      &loop_, [&] { return finished == kKeys; }, 30'000));
  RangeOptions all;
  all.prefix = true;
  auto r = get("/chain/", all);
  ASSERT_EQ(r.kvs.size(), static_cast<size_t>(kKeys));
  for (const auto& kv : r.kvs) {
    EXPECT_EQ(kv.value, std::to_string(kSteps - 1)) << kv.key;
    EXPECT_EQ(kv.version, kSteps) << kv.key;
  }
}

// etcd alone: the compare every create of a pod storm makes (its namespace
// exists) goes out once in the turn's shared txn, not once per create. etcd
// counts each compare it evaluates as a range.
TEST(EtcdTxnGroups, ACompareTheMembersShareIsSentOnce) {
  EtcdProcess etcd;
  ASSERT_TRUE(etcd.start()) << "is etcd-server installed?";
  uv_loop_t loop;
  uv_loop_init(&loop);
  {
    LoopClock clock(&loop);
    std::vector<Url> eps;
    ASSERT_TRUE(parse_etcd_endpoints(etcd.url(), &eps));
    EtcdStore store(&loop, clock, std::move(eps));
    bool put_done = false;
    store.put("/ns/default", "ns", 0, [&](WriteResult&& r) { put_done = r.status.ok(); });
    ASSERT_TRUE(run_until(&loop, [&] { return put_done; }));

    constexpr int kCreates = 40;
    double ranges_before = metric_value(etcd.client_port(), "etcd_mvcc_range_total");
    int answered = 0, succeeded = 0;
    for (int i = 0; i < kCreates; ++i) {
      std::string key = "/pods/default/p" + std::to_string(i);
      TxnRequest t;
      t.compares.push_back({key, Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});
      t.compares.push_back({"/ns/default", Compare::Target::kCreateRevision, Compare::Op::kGreater, 0, {}});
      t.success.push_back({TxnOp::Type::kPut, key, "pod", 0, false});
      store.txn(std::move(t), [&](TxnResult&& r) {
        ++answered;
        succeeded += r.status.ok() && r.succeeded;
      });
    }
    ASSERT_TRUE(run_until(
        &loop, [&] { return answered == kCreates; }, 30'000));
    EXPECT_EQ(succeeded, kCreates);
    double ranges = metric_value(etcd.client_port(), "etcd_mvcc_range_total") - ranges_before;
    EXPECT_GE(ranges, kCreates + 1);
    EXPECT_LE(ranges, kCreates + 2) << "each create's namespace compare was sent on its own";  // 2 * kCreates before

    bool closed = false;
    store.close([&] { closed = true; });
    ASSERT_TRUE(run_until(&loop, [&] { return closed; }));
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreConformance,
                         ::testing::Values(&make_embedded_backend, &make_etcd_backend, &make_etcd_cluster_backend),
                         [](const auto& info) {
                           return std::string(info.index == 0 ? "embedded" : info.index == 1 ? "etcd" : "etcd3");
                         });

}  // namespace
}  // namespace uvsched::test
