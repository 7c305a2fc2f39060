// The etcd gateway's wire format: what we send and how we read what it says,
// with answers captured from etcd 3.4 (int64 as strings, defaults omitted).
#include "storage/etcd_wire.h"

#include <gtest/gtest.h>

namespace uvsched::etcd_wire {
namespace {

simdjson::dom::element parse(simdjson::dom::parser& p, const std::string& json) { return p.parse(json).value(); }

TEST(EtcdWire, PrefixEndIsTheNextKeyAfterEveryKeyWithThePrefix) {
  EXPECT_EQ(prefix_end("/a/"), "/a0");
  EXPECT_EQ(prefix_end("a\xff"), "b");
  EXPECT_EQ(prefix_end("\xff\xff"), std::string(1, '\0'));  // every key
  EXPECT_EQ(prefix_end(""), std::string(1, '\0'));
}

TEST(EtcdWire, TxnBodyCarriesComparesAndOpsInBase64AndInt64Strings) {
  TxnRequest t;
  t.compares.push_back({"/k", Compare::Target::kModRevision, Compare::Op::kEqual, 42, {}});
  t.compares.push_back({"/k", Compare::Target::kValue, Compare::Op::kNotEqual, 0, "v"});
  t.success.push_back({TxnOp::Type::kPut, "/k", "x", 7, false});
  t.failure.push_back({TxnOp::Type::kDelete, "/p/", {}, 0, true});
  EXPECT_EQ(txn_body(t, /*with_prev=*/true),
            R"({"compare":[{"key":"L2s=","target":"MOD","result":"EQUAL","mod_revision":"42"},)"
            R"({"key":"L2s=","target":"VALUE","result":"NOT_EQUAL","value":"dg=="}],)"
            R"("success":[{"request_put":{"key":"L2s=","value":"eA==","lease":"7","prev_kv":true}}],)"
            R"("failure":[{"request_delete_range":{"key":"L3Av","range_end":"L3Aw","prev_kv":true}}]})");
  EXPECT_EQ(txn_body(t, /*with_prev=*/false),
            R"({"compare":[{"key":"L2s=","target":"MOD","result":"EQUAL","mod_revision":"42"},)"
            R"({"key":"L2s=","target":"VALUE","result":"NOT_EQUAL","value":"dg=="}],)"
            R"("success":[{"request_put":{"key":"L2s=","value":"eA==","lease":"7"}}],)"
            R"("failure":[{"request_delete_range":{"key":"L3Av","range_end":"L3Aw"}}]})");
}

TEST(EtcdWire, RangeAnswersWithOmittedDefaults) {
  simdjson::dom::parser p;
  auto r = decode_range(parse(p, R"({"header":{"revision":"7"},"kvs":[{"key":"L3AvYQ==","create_revision":"2",)"
                                 R"("mod_revision":"7","version":"3","value":"MQ==","lease":"12"},{"key":"L3AvYg=="}],)"
                                 R"("more":true,"count":"5"})"));
  EXPECT_EQ(r.revision, 7);
  ASSERT_EQ(r.kvs.size(), 2u);
  EXPECT_EQ(r.kvs[0].key, "/p/a");
  EXPECT_EQ(r.kvs[0].value, "1");
  EXPECT_EQ(r.kvs[0].create_revision, 2);
  EXPECT_EQ(r.kvs[0].lease, 12);
  EXPECT_EQ(r.kvs[1].value, "");  // an empty value is omitted
  EXPECT_EQ(r.kvs[1].mod_revision, 0);
  EXPECT_TRUE(r.more);
  EXPECT_EQ(r.count, 5);
  auto empty = decode_range(parse(p, R"({"header":{"revision":"3"}})"));
  EXPECT_TRUE(empty.kvs.empty());
  EXPECT_EQ(empty.count, 0);
}

TEST(EtcdWire, TxnAnswersAndTheirPerOpWriteResults) {
  simdjson::dom::parser p;
  auto doc = parse(p, R"({"header":{"revision":"9"},"succeeded":true,"responses":[)"
                      R"({"response_put":{"prev_kv":{"key":"L2E=","value":"eA=="}}},)"
                      R"({"response_delete_range":{"deleted":"2","prev_kvs":[{"key":"L2I="},{"key":"L2M="}]}},)"
                      R"({"response_range":{"kvs":[{"key":"L2Q="}],"count":"1"}}]})");
  auto t = decode_txn(doc);
  EXPECT_TRUE(t.succeeded);
  EXPECT_EQ(t.revision, 9);
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.ranges[0].kvs[0].key, "/d");
  auto w = decode_txn_writes(doc, 2);
  ASSERT_EQ(w.size(), 2u);
  ASSERT_EQ(w[0].prev_kvs.size(), 1u);
  EXPECT_EQ(w[0].prev_kvs[0].value, "x");
  EXPECT_EQ(w[1].deleted, 2);
  EXPECT_EQ(w[1].prev_kvs.size(), 2u);
  EXPECT_EQ(decode_txn_writes(doc, 5).size(), 5u);                                 // fewer responses than ops: defaults
  EXPECT_FALSE(decode_txn(parse(p, R"({"header":{"revision":"4"}})")).succeeded);  // false is omitted
}

TEST(EtcdWire, WatchLines) {
  simdjson::dom::parser p;
  WatchLine created;
  ASSERT_TRUE(decode_watch_line(p, R"({"result":{"header":{"revision":"3"},"created":true}})", &created));
  EXPECT_TRUE(created.created);
  EXPECT_EQ(created.revision, 3);
  WatchLine events;
  ASSERT_TRUE(decode_watch_line(p,
                                R"({"result":{"header":{"revision":"5"},"events":[)"
                                R"({"kv":{"key":"L3cvYQ==","mod_revision":"4","value":"MQ=="}},)"
                                R"({"type":"DELETE","kv":{"key":"L3cvYQ==","mod_revision":"5"},)"
                                R"("prev_kv":{"key":"L3cvYQ==","value":"MQ=="}}]}})",
                                &events));
  ASSERT_EQ(events.events.size(), 2u);
  EXPECT_EQ(events.events[0].type, WatchEvent::Type::kPut);  // PUT is omitted
  EXPECT_EQ(events.events[1].type, WatchEvent::Type::kDelete);
  ASSERT_TRUE(events.events[1].prev_kv);
  EXPECT_EQ(events.events[1].prev_kv->value, "1");
  WatchLine cancelled;
  ASSERT_TRUE(decode_watch_line(p, R"({"result":{"canceled":true,"compact_revision":"2"}})", &cancelled));
  EXPECT_TRUE(cancelled.canceled);
  EXPECT_EQ(cancelled.compact_revision, 2);
  WatchLine none;
  EXPECT_FALSE(decode_watch_line(p, "  \r", &none));
  EXPECT_FALSE(decode_watch_line(p, R"({"error":{"grpc_code":14}})", &none));
  EXPECT_FALSE(decode_watch_line(p, "{not json", &none));
  EXPECT_FALSE(decode_watch_line(p, R"({"result":7})", &none));
}

}  // namespace
}  // namespace uvsched::etcd_wire
