// How a pod leaves the store (handlers/pods/pod_deletion.h): the grace period
// as the pod strategy decides it, and the marks a graceful, a shortened and a
// forced deletion leave, against a FakeStore.
#include "handlers/pods/pod_deletion.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "handlers/pods/pod_validation.h"
#include "tests/support/fake_store.h"

namespace uvsched {
namespace {

using test::FakeStore;

JsonValue parsed(const std::string& json) {
  std::string error;
  auto v = JsonValue::parse(json, &error);
  EXPECT_TRUE(v) << error;
  return v ? std::move(*v) : JsonValue();
}

TEST(PodDeletion, TheGracePeriodIsDecidedAsThePodStrategyDecidesIt) {
  struct Case {
    const char* name;
    std::string pod;
    std::optional<int64_t> requested;
    int64_t grace;
  } cases[] = {
      {"a bound pod: its spec's", R"({"spec":{"nodeName":"n","terminationGracePeriodSeconds":45}})", {}, 45},
      {"none in its spec: 30", R"({"spec":{"nodeName":"n"}})", {}, 30},
      {"the client's wins", R"({"spec":{"nodeName":"n","terminationGracePeriodSeconds":45}})", 5, 5},
      {"a forced delete", R"({"spec":{"nodeName":"n"}})", 0, 0},
      {"a negative period is 1", R"({"spec":{"nodeName":"n"}})", -3, 1},
      {"not bound: at once", R"({"spec":{"terminationGracePeriodSeconds":45}})", 20, 0},
      {"succeeded: at once", R"({"spec":{"nodeName":"n"},"status":{"phase":"Succeeded"}})", {}, 0},
      {"failed: at once", R"({"spec":{"nodeName":"n"},"status":{"phase":"Failed"}})", 20, 0},
  };
  for (const auto& c : cases) EXPECT_EQ(deletion_grace_seconds(parsed(c.pod), c.requested), c.grace) << c.name;
}

TEST(PodDeletion, ATaskIsKilledWithItsDeletionsGraceElseItsSpecs) {
  struct Case {
    const char* name;
    std::string pod;
    uint32_t grace;
  } cases[] = {
      {"its spec's", R"({"spec":{"terminationGracePeriodSeconds":45}})", 45},
      {"none: 30", R"({"spec":{}})", 30},
      {"being deleted: its deletion's", R"({"metadata":{"deletionGracePeriodSeconds":5},"spec":{}})", 5},
      {"negative: 1", R"({"spec":{"terminationGracePeriodSeconds":-2}})", 1},
  };
  for (const auto& c : cases) EXPECT_EQ(termination_grace_seconds(parsed(c.pod)), c.grace) << c.name;
}

class PodDeletionStoreTest : public ::testing::Test {
 protected:
  static constexpr const char* kKey = "/registry/pods/default/web";
  static constexpr int64_t kNow = 1'800'000'000'000;
  void SetUp() override {
    store_.put(kKey, R"({"metadata":{"name":"web"},"spec":{"nodeName":"edge-1","terminationGracePeriodSeconds":30}})",
               0, [](WriteResult&&) {});
    store_.run();
  }
  PodDeletion remove(int64_t now, std::optional<DeleteHold> hold) {
    PodDeletion out;
    delete_pod_object(store_, kKey, now, hold, [&out](PodDeletion&& d) { out = std::move(d); });
    store_.run();
    return out;
  }
  // The stored pod's metadata.<field>, as text ("<none>" when absent).
  std::string meta(const char* field) {
    JsonValue pod = parsed(store_.value(kKey).value_or("null"));
    const JsonValue* v = pod.find({"metadata", field});
    return !v ? "<none>" : v->is_string() ? v->text() : v->dump();
  }
  FakeStore store_;
};

TEST_F(PodDeletionStoreTest, AHeldPodIsMarkedForItsGracePeriodWhichALaterDeletionMayShorten) {
  PodDeletion d = remove(kNow, DeleteHold{});
  EXPECT_TRUE(d.found);
  EXPECT_FALSE(d.removed);
  EXPECT_EQ(d.grace_seconds, 30);
  EXPECT_EQ(meta("deletionTimestamp"), rfc3339(kNow + 30'000));
  EXPECT_EQ(meta("deletionGracePeriodSeconds"), "30");
  // A longer one later changes nothing; a shorter one brings the end nearer.
  d = remove(kNow + 1'000, DeleteHold{60});
  EXPECT_EQ(d.grace_seconds, 30);
  EXPECT_EQ(meta("deletionTimestamp"), rfc3339(kNow + 30'000));
  d = remove(kNow + 2'000, DeleteHold{5});
  EXPECT_EQ(d.grace_seconds, 5);
  EXPECT_EQ(meta("deletionTimestamp"), rfc3339(kNow + 7'000));
  EXPECT_EQ(meta("deletionGracePeriodSeconds"), "5");
  // Forced: the object goes at once.
  d = remove(kNow + 3'000, DeleteHold{0});
  EXPECT_TRUE(d.found);
  EXPECT_TRUE(d.removed);
  EXPECT_EQ(d.grace_seconds, 0);
  EXPECT_EQ(store_.value(kKey), std::nullopt);
}

TEST_F(PodDeletionStoreTest, APodNotHeldGoesAtOnce) {
  PodDeletion d = remove(kNow, std::nullopt);
  EXPECT_TRUE(d.removed);
  EXPECT_EQ(store_.value(kKey), std::nullopt);
  EXPECT_FALSE(remove(kNow, std::nullopt).found);
}

}  // namespace
}  // namespace uvsched
