// spec.activeDeadlineSeconds as a kubelet reads it (from status.startTime),
// the pod it fails, and the deadlines followed on a ManualClock (PodAlarms).
#include "handlers/pods/active_deadlines.h"
#include "handlers/pods/pod_alarms.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "handlers/pods/pod_validation.h"
#include "reactor/manual_clock.h"
#include "tests/support/json_literal.h"

namespace uvsched {
namespace {

using test::json;

constexpr int64_t k2026 = 1'767'225'600'000;  // 2026-01-01T00:00:00Z, the ManualClock's wall time at start

TEST(Rfc3339, ReadsWhatWeWriteAndWhatClientsSend) {
  EXPECT_EQ(parse_rfc3339_ms("2026-01-01T00:00:00Z"), k2026);
  EXPECT_EQ(parse_rfc3339_ms(rfc3339(k2026 + 61'999)), k2026 + 61'000);  // written to the second
  EXPECT_EQ(parse_rfc3339_ms("2026-01-01T00:00:01.5Z"), k2026 + 1'500);
  EXPECT_EQ(parse_rfc3339_ms("2026-01-01T00:00:01.123456789Z"), k2026 + 1'123);
  EXPECT_EQ(parse_rfc3339_ms("2026-01-01T02:00:00+02:00"), k2026);
  EXPECT_EQ(parse_rfc3339_ms("2025-12-31T23:30:00-00:30"), k2026);
  EXPECT_EQ(parse_rfc3339_ms("1970-01-01T00:00:00Z"), 0);
  for (const char* bad : {"", "2026-01-01", "2026-01-01T00:00:00", "2026-01-01 00:00:00Z", "2026-13-01T00:00:00Z",
                          "2026-01-01T24:00:00Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00Zjunk",
                          "2026-01-01T00:00:00+0200", "2026-1-01T00:00:00Z", "x026-01-01T00:00:00Z"}) {
    EXPECT_FALSE(parse_rfc3339_ms(bad)) << bad;
  }
}

TEST(ActiveDeadline, CountsFromTheStartTimeAndNeedsBoth) {
  EXPECT_EQ(active_deadline_unix_ms(
                json(R"({"spec":{"activeDeadlineSeconds":30},"status":{"startTime":"2026-01-01T00:00:00Z"}})")),
            k2026 + 30'000);
  EXPECT_EQ(active_deadline_unix_ms(
                json(R"({"spec":{"activeDeadlineSeconds":2147483647},"status":{"startTime":"2026-01-01T00:00:00Z"}})")),
            k2026 + int64_t{2147483647} * 1000);
  for (const char* pod : {R"({"spec":{"activeDeadlineSeconds":30},"status":{}})",
                          R"({"spec":{},"status":{"startTime":"2026-01-01T00:00:00Z"}})",
                          R"({"spec":{"activeDeadlineSeconds":"30"},"status":{"startTime":"2026-01-01T00:00:00Z"}})",
                          R"({"spec":{"activeDeadlineSeconds":30},"status":{"startTime":"yesterday"}})",
                          R"({"spec":{"activeDeadlineSeconds":30},"status":{"startTime":5}})"}) {
    EXPECT_FALSE(active_deadline_unix_ms(json(pod))) << pod;
  }
}

TEST(ActiveDeadline, TheStartTimeIsStampedOnceAndKeptThroughRestarts) {
  JsonValue pod = json(R"({"spec":{},"status":{"phase":"Pending"}})");
  stamp_start_time(pod, "2026-01-01T00:00:00Z");
  stamp_start_time(pod, "2026-01-01T00:05:00Z");
  EXPECT_EQ(pod.dump(), R"({"spec":{},"status":{"phase":"Pending","startTime":"2026-01-01T00:00:00Z"}})");
  JsonValue bare = json(R"({"spec":{}})");
  stamp_start_time(bare, "2026-01-01T00:00:00Z");
  EXPECT_EQ(bare.dump(), R"({"spec":{},"status":{"startTime":"2026-01-01T00:00:00Z"}})");
}

TEST(ActiveDeadline, APodPastItIsFailedAsAKubeletFailsIt) {
  JsonValue pod =
      json(R"({"status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True"},)"
           R"({"type":"Ready","status":"True"}],"containerStatuses":[)"
           R"({"name":"a","ready":true,"started":true,"state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}},)"
           R"({"name":"b","ready":false,"state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]}})");
  fail_past_deadline(pod, "2026-01-01T00:01:00Z");
  EXPECT_EQ(
      pod.dump(),
      R"({"status":{"phase":"Failed","conditions":[{"type":"PodScheduled","status":"True"},)"
      R"({"type":"Ready","status":"False","reason":"PodCompleted","lastTransitionTime":"2026-01-01T00:01:00Z"}],)"
      R"("containerStatuses":[{"name":"a","ready":false,"started":false,"state":{"terminated":{"exitCode":137,)"
      R"("reason":"Error","startedAt":"2026-01-01T00:00:00Z","finishedAt":"2026-01-01T00:01:00Z"}}},)"
      R"({"name":"b","ready":false,"state":{"terminated":{"exitCode":0,"reason":"Completed"}},"started":false}],)"
      R"("reason":"DeadlineExceeded","message":"Pod was active on the node longer than the specified deadline"}})");
}

class PodAlarmsTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  std::vector<std::string> expired_;
  PodAlarms deadlines_{clock_, [this](const std::string& pod) { expired_.push_back(pod); }};
};

TEST_F(PodAlarmsTest, EachPodIsToldOnceWhenItsDeadlinePasses) {
  deadlines_.at_unix("ns/late", k2026 + 20'000);
  deadlines_.at_unix("ns/early", k2026 + 10'000);
  clock_.advance(9'999);
  EXPECT_TRUE(expired_.empty());
  clock_.advance(1);
  EXPECT_EQ(expired_, (std::vector<std::string>{"ns/early"}));
  clock_.advance(10'000);
  EXPECT_EQ(expired_, (std::vector<std::string>{"ns/early", "ns/late"}));
  clock_.advance(100'000);
  EXPECT_EQ(expired_.size(), 2u) << "told again";
  EXPECT_EQ(deadlines_.size(), 0u);
}

TEST_F(PodAlarmsTest, ADeadlineLoweredReplacesTheOldOneAndAPastOneIsDueAtOnce) {
  deadlines_.at_unix("ns/a", k2026 + 60'000);
  deadlines_.at_unix("ns/a", k2026 + 5'000);  // lowered by an update
  clock_.advance(5'000);
  EXPECT_EQ(expired_, (std::vector<std::string>{"ns/a"}));
  deadlines_.at_unix("ns/b", k2026 - 3'600'000);  // passed while no one followed it (a failover)
  clock_.advance(0);
  EXPECT_EQ(expired_, (std::vector<std::string>{"ns/a", "ns/b"}));
}

TEST_F(PodAlarmsTest, AForgottenOrClearedPodIsNeverTold) {
  deadlines_.at_unix("ns/done", k2026 + 1'000);
  deadlines_.at_unix("ns/other", k2026 + 2'000);
  deadlines_.forget("ns/done");
  deadlines_.forget("ns/never-tracked");
  clock_.advance(1'500);
  EXPECT_TRUE(expired_.empty());
  deadlines_.clear();
  clock_.advance(10'000);
  EXPECT_TRUE(expired_.empty());
  EXPECT_EQ(clock_.pending_timers(), 0u);
}

}  // namespace
}  // namespace uvsched
