// The framework's registration against a FakeStore and a ManualClock: the id
// a predecessor left is kept when it was alive within --failover-timeout and
// replaced when it was not; a store that fails is retried (and said so); the
// record's time moves with each refresh; a stopped registration ignores the
// answers still in flight.
#include "handlers/pods/framework_registration.h"

#include <gtest/gtest.h>

#include <string>

#include "reactor/log.h"
#include "reactor/manual_clock.h"
#include "tests/support/fake_store.h"

namespace uvsched {
namespace {

using test::FakeStore;

constexpr uint64_t kFailoverMs = 120'000;

class FrameworkRegistrationTest : public ::testing::Test {
 protected:
  void SetUp() override { log_configure(LogLevel::kOff, LogFormat::kText); }
  // A record left by a predecessor last alive `ago_ms` before now.
  void left_by_predecessor(const std::string& id, int64_t ago_ms) {
    store_.put(FrameworkRegistration::kKey, id + "|" + std::to_string(clock_.unix_ms() - ago_ms), 0,
               [](WriteResult&&) {});
    store_.run();
  }
  std::string record() const { return store_.value(FrameworkRegistration::kKey).value_or("<none>"); }
  int64_t record_time() const {
    std::string r = record();
    return std::strtoll(r.substr(r.find('|') + 1).c_str(), nullptr, 10);
  }

  ManualClock clock_;
  FakeStore store_;
  FrameworkRegistration reg_{store_, clock_, kFailoverMs};
};

TEST_F(FrameworkRegistrationTest, AFirstStartMakesAnIdAndStoresItAliveNow) {
  reg_.start();
  store_.run();
  ASSERT_TRUE(reg_.registered());
  EXPECT_EQ(reg_.id().rfind("uvsched-", 0), 0u) << reg_.id();
  EXPECT_EQ(record(), reg_.id() + "|" + std::to_string(clock_.unix_ms()));
}

TEST_F(FrameworkRegistrationTest, APredecessorAliveWithinTheTimeoutIsTheSameFramework) {
  left_by_predecessor("uvsched-old", kFailoverMs - 1000);
  reg_.start();
  store_.run();
  EXPECT_EQ(reg_.id(), "uvsched-old");
  EXPECT_EQ(record_time(), clock_.unix_ms()) << "alive now, as far as a successor can tell";
}

TEST_F(FrameworkRegistrationTest, APredecessorGoneLongerThanTheTimeoutIsReplaced) {
  left_by_predecessor("uvsched-old", kFailoverMs + 1000);
  reg_.start();
  store_.run();
  ASSERT_TRUE(reg_.registered());
  EXPECT_NE(reg_.id(), "uvsched-old");
  EXPECT_EQ(record(), reg_.id() + "|" + std::to_string(clock_.unix_ms()));
}

TEST_F(FrameworkRegistrationTest, AStoreThatFailsIsTriedAgainEverySecond) {
  store_.set_down("etcd: no leader");
  reg_.start();
  store_.run();
  EXPECT_FALSE(reg_.registered());
  clock_.advance(FrameworkRegistration::kRetryMs);
  store_.run();
  EXPECT_FALSE(reg_.registered()) << "still down";
  store_.set_down(std::nullopt);
  clock_.advance(FrameworkRegistration::kRetryMs - 1);
  store_.run();
  EXPECT_FALSE(reg_.registered()) << "not before its second";
  clock_.advance(1);
  store_.run();
  EXPECT_TRUE(reg_.registered());
  EXPECT_EQ(record(), reg_.id() + "|" + std::to_string(clock_.unix_ms()));
}

TEST_F(FrameworkRegistrationTest, EachRefreshMovesTheRecordsTime) {
  reg_.start();
  store_.run();
  int64_t first = record_time();
  clock_.advance(kFailoverMs / 2);  // the refresh interval (at most 30 s)
  store_.run();
  clock_.advance(30'000);
  store_.run();
  EXPECT_GT(record_time(), first);
  EXPECT_EQ(record_time(), clock_.unix_ms());
}

TEST_F(FrameworkRegistrationTest, AStoppedRegistrationIgnoresAnswersInFlight) {
  reg_.start();  // its read is queued
  reg_.stop();
  store_.run();
  EXPECT_FALSE(reg_.registered());
  EXPECT_EQ(record(), "<none>") << "nothing was written for a stopped run";
  EXPECT_EQ(clock_.pending_timers(), 0u);
}

}  // namespace
}  // namespace uvsched
