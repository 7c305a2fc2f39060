#include "storage/etcd_values.h"

#include <gtest/gtest.h>

#include "handlers/pods/pod_dictionary.h"

namespace uvsched {
namespace {

const std::string kDictionary = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default"}})";
const std::string kPod =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"default",)"
    R"("uid":"5d6c0e1a-8f3b-4c2d-9e7f-0a1b2c3d4e5f","creationTimestamp":"2026-11-30T03:10:13Z",)"
    R"("labels":{"app":"web","tier":"frontend"},"annotations":{"uvsched.io/bindingHost":"edge-1",)"
    R"("uvsched.io/taskId":"pod.default.web-1.0a1b2c3d4e5f","uvsched.io/agentId":"edge-1-1796008627093",)"
    R"("uvsched.io/offerId":"edge-1-o1"}},"spec":{"containers":[{"name":"web","image":"nginx:1.25",)"
    R"("ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}],)"
    R"("restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,)"
    R"("schedulerName":"uvsched","nodeName":"edge-1"},"status":{"phase":"Running","conditions":[)"
    R"({"type":"PodScheduled","status":"True","lastTransitionTime":"2026-11-30T03:10:13Z"}]}})";
const std::string kMagic("\0uvz", 4);

std::string noise(size_t n) {  // does not compress
  std::string out;
  uint32_t x = 2463534242u;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    out.push_back(static_cast<char>(x & 0xff));
  }
  return out;
}

TEST(EtcdValues, WhatIsWrittenReadsBackTheSame) {
  EtcdValues packed(kDictionary, true), plain(kDictionary, false);
  struct Case {
    std::string name, value;
    bool stored_as_is;  // by the packing codec
  } cases[] = {
      {"a pod", kPod, false},
      {"short", "leader-1", true},
      {"empty", "", true},
      {"binary", std::string("\x01\x00\xff", 3), true},
      {"beginning with the marker", kMagic + "rest", false},  // wrapped, or it would read as packed
      {"long and repetitive", std::string(300, '\0').replace(0, 3, "abc"), false},
      {"long and incompressible", noise(200), true},
  };
  for (const auto& c : cases) {
    bool marked = c.value.substr(0, 4) == kMagic;
    std::string by_packed = packed.encode(c.value), by_plain = plain.encode(c.value);
    if (c.stored_as_is) {
      EXPECT_EQ(by_packed, c.value) << c.name;
    }
    EXPECT_EQ(by_plain == c.value, !marked) << c.name;  // plain writes as is, but for the marker
    for (std::string stored : {by_packed, by_plain}) {
      ASSERT_TRUE(packed.decode(&stored)) << c.name;  // anyone reads either form
      EXPECT_EQ(stored, c.value) << c.name;
    }
  }
}

// Against the daemon's own dictionary of typical pods.
TEST(EtcdValues, APodIsStoredAFractionOfItsSize) {
  EtcdValues values(pod_value_dictionary(), true);
  std::string stored = values.encode(kPod);
  EXPECT_EQ(stored.substr(0, 4), kMagic);
  EXPECT_LT(stored.size(), kPod.size() / 3) << stored.size() << " of " << kPod.size();
}

TEST(EtcdValues, PlainValuesFromElsewhereReadAsTheyAre) {
  EtcdValues values(kDictionary, true);
  std::string legacy = kPod;  // an older uvsched, or etcdctl put
  ASSERT_TRUE(values.decode(&legacy));
  EXPECT_EQ(legacy, kPod);
}

TEST(EtcdValues, AnotherDictionarysValueIsRefusedAndLeftAsStored) {
  EtcdValues mine(kDictionary, true), theirs("a different dictionary of typical values", true);
  std::string stored = theirs.encode(kPod);
  ASSERT_EQ(stored.substr(0, 4), kMagic);  // packed
  std::string read = stored;
  EXPECT_FALSE(mine.decode(&read));
  EXPECT_EQ(read, stored);
  std::string damaged = mine.encode(kPod);
  damaged.resize(damaged.size() - 10);
  EXPECT_FALSE(mine.decode(&damaged));
}

// A release that changes the dictionary still reads what earlier ones
// packed, when told their dictionaries; new values are packed against its own.
TEST(EtcdValues, AnEarlierReleasesValuesStayReadable) {
  std::vector<std::string> before = pod_value_dictionaries_before();
  ASSERT_EQ(before.size(), 3u);
  EtcdValues now(pod_value_dictionary(), true, before);
  std::string by_now = now.encode(kPod);
  std::string read = by_now;
  ASSERT_TRUE(now.decode(&read));
  EXPECT_EQ(read, kPod);
  for (const std::string& earlier : before) {
    std::string by_earlier = EtcdValues(earlier, true).encode(kPod);
    read = by_earlier;
    ASSERT_TRUE(now.decode(&read));
    EXPECT_EQ(read, kPod);
    EXPECT_NE(by_now.substr(0, EtcdValues::kMarkerSize), by_earlier.substr(0, EtcdValues::kMarkerSize));
    // Not told of the earlier dictionary, it cannot read its values.
    read = by_earlier;
    EXPECT_FALSE(EtcdValues(pod_value_dictionary(), true).decode(&read));
  }
}

// The dictionary's entropy tables (tools/pod_dictionary_gen) belong to its
// content: with them a pod packs smaller than against the content alone.
TEST(EtcdValues, ThePodDictionarysTablesPayOff) {
  std::string with_tables = EtcdValues(pod_value_dictionary(), true).encode(kPod);
  std::string content_only = EtcdValues(pod_value_dictionary_content(), true).encode(kPod);
  EXPECT_EQ(pod_value_dictionary().substr(pod_value_dictionary().size() - pod_value_dictionary_content().size()),
            pod_value_dictionary_content());
  EXPECT_LT(with_tables.size(), content_only.size()) << with_tables.size() << " against " << content_only.size();
}

}  // namespace
}  // namespace uvsched
