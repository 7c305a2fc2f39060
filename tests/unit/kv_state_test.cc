// The embedded store's in-memory state: the watch history is bounded by count
// and by bytes, and a watch from before what is kept is told so.
#include "storage/kv_state.h"

#include "storage/wal_codec.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(KvStateHistory, KeepsTheNewestEventsWithinItsByteBudget) {
  KvState state(/*history_limit=*/100, /*history_byte_limit=*/4'000);
  const std::string big(1'000, 'v');
  int64_t first = 0;
  for (int i = 0; i < 10; ++i) {
    auto a = state.put("/k/" + std::to_string(i), big, 0);
    ASSERT_TRUE(a.status.ok());
    if (i == 0) first = a.revision;
  }
  EXPECT_FALSE(state.history("/k/", first).has_value()) << "10 KB of events cannot fit in 4 KB";
  auto recent = state.history("/k/", state.revision() - 2);
  ASSERT_TRUE(recent.has_value());
  EXPECT_EQ(recent->size(), 3u);
  EXPECT_EQ(recent->back().kv.key, "/k/9");
}

TEST(KvStateHistory, SmallEventsAreBoundByCount) {
  KvState state(/*history_limit=*/5, /*history_byte_limit=*/1 << 20);
  int64_t first = state.put("/s/0", "x", 0).revision;
  for (int i = 1; i < 8; ++i) state.put("/s/" + std::to_string(i), "x", 0);
  EXPECT_FALSE(state.history("/s/", first).has_value());
  auto kept = state.history("/s/", state.revision() - 4);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->size(), 5u);
}

TEST(KvStateHistory, ADeleteCountsTheValueItCarries) {
  KvState state(100, 3'000);
  int64_t first = state.put("/u", std::string(900, 'a'), 0).revision;
  state.del("/u", false);  // the event carries the deleted 900 B value
  auto both = state.history("/u", first);
  ASSERT_TRUE(both.has_value());
  ASSERT_EQ(both->size(), 2u);
  ASSERT_TRUE((*both)[1].prev_kv);
  EXPECT_EQ((*both)[1].prev_kv->value, std::string(900, 'a'));
  state.put("/u", std::string(900, 'c'), 0);  // now over 3 KB: the oldest goes
  EXPECT_FALSE(state.history("/u", first).has_value());
}

TEST(KvStateHistory, UpdatesDoNotCarryTheOldValue) {
  KvState state(100, 3'000);
  int64_t first = state.put("/u", std::string(900, 'a'), 0).revision;
  for (char c : {'b', 'c'}) state.put("/u", std::string(900, c), 0);  // 3 x ~1.1 KB would not fit with old values
  auto kept = state.history("/u", first + 1);
  ASSERT_TRUE(kept.has_value());
  ASSERT_EQ(kept->size(), 2u);
  EXPECT_FALSE((*kept)[0].prev_kv.has_value());
  EXPECT_EQ((*kept)[1].kv.value, std::string(900, 'c'));
}

TEST(KvStateValues, PackedInMemoryAndReadBackWhole) {
  std::string pod = R"({"kind":"Pod","metadata":{"name":"web-1","namespace":"default"},"spec":{"containers":[]}})";
  KvState state(100, 1 << 20, /*value_dictionary=*/pod + pod);
  std::string value = pod;
  value.replace(value.find("web-1"), 5, "web-2");
  state.put("/p", value, 0);
  state.put("/small", "x", 0);
  EXPECT_GT(state.packed_value_bytes(), value.size()) << "a fresh value is kept raw for a while";
  state.settle();
  EXPECT_LT(state.packed_value_bytes(), value.size() / 2) << "a value like the dictionary packs small";
  RangeOptions all;
  all.prefix = true;
  auto r = state.range("/", all);
  ASSERT_EQ(r.kvs.size(), 2u);
  EXPECT_EQ(r.kvs[0].value, value);
  EXPECT_EQ(r.kvs[1].value, "x");
}

TEST(KvStateValues, PackedOnceLaterWritesHaveGoneBy) {
  std::string pod = R"({"kind":"Pod","metadata":{"name":"web-1","namespace":"default"},"spec":{"containers":[]}})";
  KvState state(100, 1 << 20, pod);
  state.put("/a", pod, 0);
  state.put("/a", pod + " ", 0);  // rewritten while raw: only this version will be packed
  size_t raw = state.packed_value_bytes();
  for (size_t i = 0; i + 1 < KvState::kRawBacklog; ++i) state.put("/b", std::string(100, 'b'), 0);
  EXPECT_EQ(state.packed_value_bytes(), raw + 1 + 100) << "nothing settled yet: /b replaced /b";
  state.put("/b", std::string(100, 'c'), 0);  // the write that pushes /a's latest version out of the backlog
  EXPECT_LT(state.packed_value_bytes(), pod.size() / 2 + 1 + 100);
  auto r = state.range("/a", {});
  ASSERT_EQ(r.kvs.size(), 1u);
  EXPECT_EQ(r.kvs[0].value, pod + " ");
}

TEST(KvStateValues, PackedElsewhereAndPutBackOnlyIfUnchanged) {
  std::string pod = R"({"kind":"Pod","metadata":{"name":"web-1","namespace":"default"},"spec":{"containers":[]}})";
  KvState state(100, 1 << 20, pod);
  state.defer_packing(true);
  state.put("/a", pod, 0);
  state.put("/c", pod + " ", 0);
  for (size_t i = 0; i < KvState::kRawBacklog; ++i) state.put("/b", std::string(100, 'b'), 0);
  size_t raw = state.packed_value_bytes();
  EXPECT_EQ(raw, 2 * (1 + pod.size()) + 1 + 1 + 100) << "deferred: a put packs nothing";
  ASSERT_TRUE(state.has_settled());
  auto jobs = state.take_settled();
  ASSERT_EQ(jobs.size(), 2u) << "/a and /c; the older /b versions were replaced";
  EXPECT_EQ(jobs[0].key, "/a");
  EXPECT_EQ(jobs[1].value, pod + " ");
  EXPECT_FALSE(state.has_settled());
  ValueCodec elsewhere(state.value_dictionary());
  for (auto& j : jobs) j.packed = elsewhere.pack(j.value);
  state.put("/c", pod + "  ", 0);  // changed while its job was out: that packing is stale
  state.install_packed(jobs);
  EXPECT_LT(state.packed_value_bytes(), raw - pod.size() / 2) << "/a was put back packed";
  auto a = state.range("/a", {});
  auto c = state.range("/c", {});
  ASSERT_EQ(a.kvs.size(), 1u);
  ASSERT_EQ(c.kvs.size(), 1u);
  EXPECT_EQ(a.kvs[0].value, pod);
  EXPECT_EQ(c.kvs[0].value, pod + "  ") << "a stale packing must not bring the old value back";
  EXPECT_EQ(a.kvs[0].mod_revision, jobs[0].revision) << "packing is not a write";
}

TEST(KvStateSnapshot, RoundTripsAndRepacksForAnotherDictionary) {
  KvState a(100, 1 << 20, "dictionary one {\"kind\":\"Pod\"}");
  std::string big(300, 'z');
  a.put("/a", big, 0);
  a.put("/b", "small", 0);
  auto lease = a.lease_grant(30);
  a.put("/c", big + "c", lease.lease_id);
  std::string snap = a.encode_snapshot();
  for (const std::string& dict : {std::string("dictionary one {\"kind\":\"Pod\"}"), std::string("another one")}) {
    KvState b(100, 1 << 20, dict);
    ASSERT_TRUE(b.load_snapshot(snap)) << dict;
    EXPECT_EQ(b.revision(), a.revision());
    RangeOptions all;
    all.prefix = true;
    auto r = b.range("/", all);
    ASSERT_EQ(r.kvs.size(), 3u);
    EXPECT_EQ(r.kvs[0].value, big);
    EXPECT_EQ(r.kvs[1].value, "small");
    EXPECT_EQ(r.kvs[2].value, big + "c");
    EXPECT_EQ(r.kvs[2].lease, lease.lease_id);
    EXPECT_TRUE(b.lease_exists(lease.lease_id));
  }
  // A snapshot whose packed value is damaged is refused, not loaded half.
  std::string bad = snap;
  size_t at = bad.find("small");
  ASSERT_NE(at, std::string::npos);
  bad[at - 1] = 7;  // the tag byte in front of the raw value
  KvState c;
  EXPECT_FALSE(c.load_snapshot(bad));
}

// A frozen snapshot is the state as it was frozen, however the state changes
// while the view is encoded (on the store's threadpool): the blocks that
// changes replace stay until the view is released. Under ASan a freed block
// read here would be an error, not a wrong byte.
TEST(KvStateSnapshot, AFrozenViewIsTheStateAsItWasWhileTheStateChanges) {
  KvState state(100, 1 << 20, "a dictionary");
  for (int i = 0; i < 50; ++i) state.put("/k/" + std::to_string(i), std::string(200, 'a' + i % 26), 0);
  auto lease = state.lease_grant(30);
  state.put("/leased", "mine", lease.lease_id);
  std::string before = state.encode_snapshot("prefix");
  auto view = state.freeze_snapshot("prefix");
  for (int i = 0; i < 50; i += 3) state.put("/k/" + std::to_string(i), "changed", 0);
  for (int i = 1; i < 50; i += 3) state.del("/k/" + std::to_string(i), false);
  state.put("/k/new", "added", 0);
  state.settle();  // packs (replaces) the blocks of values still raw
  std::string frozen;
  size_t pieces = 0;
  view->encode(512, [&](std::string_view piece) {
    frozen.append(piece);
    ++pieces;
    return true;
  });
  EXPECT_EQ(frozen.size(), view->size());
  EXPECT_GT(pieces, 2u);
  EXPECT_EQ(frozen, before);
  state.release_snapshot();
  KvState loaded(100, 1 << 20, "a dictionary");
  ASSERT_TRUE(loaded.load_snapshot(std::string_view(frozen).substr(6)));  // past "prefix"
  RangeOptions all;
  all.prefix = true;
  EXPECT_EQ(loaded.range("/k/", all).kvs.size(), 50u);
  EXPECT_EQ(loaded.range("/leased", {}).kvs.at(0).lease, lease.lease_id);
  // After the release the state goes on as it was changed.
  EXPECT_EQ(state.range("/k/0", {}).kvs.at(0).value, "changed");
  EXPECT_TRUE(state.range("/k/1", {}).kvs.empty());
  std::string after = state.encode_snapshot();
  KvState again;
  ASSERT_TRUE(again.load_snapshot(after));
  EXPECT_EQ(again.range("/k/new", {}).kvs.at(0).value, "added");
}

TEST(KvStateSnapshot, ReadsTheOlderFormatOfPlainValues) {
  // What a build before packed values wrote: revision, next lease, leases,
  // then each key with its plain value and metadata.
  WalWriter w;
  w.i64(42);
  w.i64(1);
  w.u32(0);
  w.u32(1);
  w.str("/registry/pods/default/old");
  w.str(std::string(200, 'o'));
  for (int64_t v : {7, 40, 3, 0}) w.i64(v);
  KvState state;
  ASSERT_TRUE(state.load_snapshot(w.take()));
  EXPECT_EQ(state.revision(), 42);
  auto r = state.range("/registry/pods/default/old", {});
  ASSERT_EQ(r.kvs.size(), 1u);
  EXPECT_EQ(r.kvs[0].value, std::string(200, 'o'));
  EXPECT_EQ(r.kvs[0].create_revision, 7);
  EXPECT_EQ(r.kvs[0].mod_revision, 40);
  EXPECT_EQ(r.kvs[0].version, 3);
}

}  // namespace
}  // namespace uvsched
