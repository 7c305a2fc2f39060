// The token bucket as a table of (time, take?) steps, and the limiter's
// buckets per client on a manual clock.
#include <gtest/gtest.h>

#include "handlers/ml/kubeml_types.h"
#include "handlers/ops/rate_limiter.h"
#include "policy/token_bucket.h"
#include "reactor/manual_clock.h"

namespace uvsched {
namespace {

TEST(TokenBucket, RefillsAtTheRateUpToTheBurst) {
  RateLimit limit{2, 3};  // 2 a second, 3 at once
  TokenBucket b;
  struct Step {
    uint64_t at_ms;
    bool taken;
    uint64_t wait_ms;  // after the step
  } steps[] = {
      {0, true, 0},      {0, true, 0},        {0, true, 500},  // a new bucket is full: the burst
      {0, false, 500},                                         // then empty: the next token in 1/rate
      {250, false, 250},                                       // half a token
      {500, true, 500},                                        // one token came
      {10'000, true, 0},                                       // long idle: full again, not 20
      {10'000, true, 0}, {10'000, true, 500}, {10'000, false, 500},
  };
  for (const auto& s : steps) {
    EXPECT_EQ(limit.take(b, s.at_ms), s.taken) << "at " << s.at_ms;
    EXPECT_EQ(limit.wait_ms(b, s.at_ms), s.wait_ms) << "at " << s.at_ms;
  }
  EXPECT_FALSE(limit.full(b, 10'000));
  EXPECT_TRUE(limit.full(b, 11'500));
  RateLimit none{0, 0};
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(none.take(b, 0));
}

TEST(RateLimiter, EachClientHasItsBucketAndHealthIsNeverLimited) {
  ManualClock clock(0);
  RateLimiter limiter(clock, RateLimit{10, 5});
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(limiter.admit("token:a", "/api/v1/pods"));
  auto wait = limiter.admit("token:a", "/api/v1/pods");
  ASSERT_TRUE(wait);
  EXPECT_EQ(*wait, 1u);                                    // Retry-After is whole seconds, at least 1
  EXPECT_FALSE(limiter.admit("token:b", "/api/v1/pods"));  // another client is not held up
  for (const char* path : {"/health", "/healthz", "/readyz"}) EXPECT_FALSE(limiter.admit("token:a", path));
  clock.advance(100);
  EXPECT_FALSE(limiter.admit("token:a", "/api/v1/pods"));
  EXPECT_TRUE(limiter.admit("token:a", "/api/v1/pods"));
  EXPECT_EQ(limiter.refused(), 2u);
}

// The paths the daemon names are neither refused nor counted: KubeML's /job
// and /finish/{id}, which its client never retries and whose status it ignores.
TEST(RateLimiter, ThePathsItIsToldNeverToLimitAreNeitherRefusedNorCounted) {
  ManualClock clock(0);
  RateLimiter limiter(clock, RateLimit{10, 2}, is_kubeml_call_never_retried);
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(limiter.admit("addr:ps", "/job"));
    EXPECT_FALSE(limiter.admit("addr:ps", "/finish/abc123"));
  }
  EXPECT_FALSE(limiter.admit("addr:ps", "/train"));  // the client's burst is untouched
  EXPECT_FALSE(limiter.admit("addr:ps", "/train"));
  EXPECT_TRUE(limiter.admit("addr:ps", "/train"));
  EXPECT_TRUE(limiter.admit("addr:ps", "/jobs")) << "only those paths";
  EXPECT_TRUE(limiter.admit("addr:ps", "/v1/jobs/job"));
  EXPECT_EQ(limiter.refused(), 3u);
}

// A bucket that has refilled is dropped when the map grows: the map holds
// the clients of the last refill time, not every client ever seen.
TEST(RateLimiter, IdleClientsAreForgotten) {
  ManualClock clock(0);
  RateLimiter limiter(clock, RateLimit{1000, 1});  // refilled 1 ms after a request
  for (int i = 0; i < 20'000; ++i) {
    clock.advance(1);
    limiter.admit("addr:" + std::to_string(i), "/x");
  }
  EXPECT_LE(limiter.clients(), 4096u);
  // Clients still active are kept (and stay limited).
  ManualClock frozen(0);
  RateLimiter busy(frozen, RateLimit{1, 1});
  for (int i = 0; i < 5000; ++i) busy.admit("addr:" + std::to_string(i), "/x");
  EXPECT_EQ(busy.clients(), 5000u);
  EXPECT_TRUE(busy.admit("addr:7", "/x"));
}

}  // namespace
}  // namespace uvsched
