#include "policy/parallelism_policy.h"

#include <gtest/gtest.h>

#include "policy/fair_share.h"

namespace uvsched {
namespace {

using Op = PolicyInput::Op;

TEST(ThroughputPolicy, FollowsKubeMLsDecisionTable) {
  struct Case {
    const char* name;
    double ref;
    PolicyInput in;
    int want;
    double want_ref;
    const char* reason;
  } cases[] = {
      {"create uses the default", 0, {Op::kCreate, 4, false, 0, 0, 32}, 4, 0, "create"},
      {"create without a default is 1", 0, {Op::kCreate, 0, false, 0, 0, 32}, 1, 0, "create"},
      {"create with a negative default is 1", 0, {Op::kCreate, -3, false, 0, 0, 32}, 1, 0, "create"},
      {"create above the cap is clamped", 0, {Op::kCreate, 50, false, 0, 0, 32}, 32, 0, "create+clamped"},
      {"first epoch scales up and sets the reference", 0, {Op::kUpdate, 2, false, 2, 10.0, 32}, 3, 10.0, "first-epoch"},
      {"faster than ref scales up", 10.0, {Op::kUpdate, 2, false, 3, 9.0, 32}, 4, 9.0, "faster"},
      {"exactly ref*1.05 scales up", 10.0, {Op::kUpdate, 2, false, 3, 10.5, 32}, 4, 10.5, "faster"},
      {"just above ref*1.05 holds", 10.0, {Op::kUpdate, 2, false, 3, 10.51, 32}, 3, 10.0, "steady"},
      {"just below ref*1.2 holds", 10.0, {Op::kUpdate, 2, false, 3, 11.99, 32}, 3, 10.0, "steady"},
      {"exactly ref*1.2 scales down", 10.0, {Op::kUpdate, 2, false, 3, 12.0, 32}, 2, 12.0, "slower"},
      {"much slower scales down", 10.0, {Op::kUpdate, 2, false, 5, 30.0, 32}, 4, 30.0, "slower"},
      {"never below 1", 10.0, {Op::kUpdate, 2, false, 1, 30.0, 32}, 1, 30.0, "slower+clamped"},
      {"never above the cap", 10.0, {Op::kUpdate, 2, false, 32, 5.0, 32}, 32, 5.0, "faster+clamped"},
      {"a shrunken cap pulls it down", 10.0, {Op::kUpdate, 2, false, 8, 10.8, 3}, 3, 10.0, "steady+clamped"},
      {"static keeps its parallelism", 10.0, {Op::kUpdate, 2, true, 6, 5.0, 32}, 6, 10.0, "static"},
      {"static still respects the cap", 10.0, {Op::kUpdate, 2, true, 6, 5.0, 4}, 4, 10.0, "static+clamped"},
  };
  ThroughputPolicy policy;
  for (const auto& c : cases) {
    Decision d = policy.decide(PolicyState{c.ref}, c.in);
    EXPECT_EQ(d.parallelism, c.want) << c.name;
    EXPECT_DOUBLE_EQ(d.state.reference_epoch_seconds, c.want_ref) << c.name;
    EXPECT_EQ(d.reason(), c.reason) << c.name;
  }
}

TEST(FairShare, SplitsCapacityWithRemainderFirstAndNoneBelowOne) {
  EXPECT_EQ(fair_shares(std::nullopt, 3, 32), (std::vector<int>{32, 32, 32}));
  EXPECT_EQ(fair_shares(10, 3, 32), (std::vector<int>{4, 3, 3}));
  EXPECT_EQ(fair_shares(100, 2, 32), (std::vector<int>{32, 32}));
  EXPECT_EQ(fair_shares(2, 4, 32), (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(fair_shares(0, 1, 32), (std::vector<int>{1}));
  EXPECT_TRUE(fair_shares(5, 0, 32).empty());
}

TEST(FairShare, FunctionsThatFitTakeTheScarcerResource) {
  EXPECT_FALSE(functions_that_fit(8, 1024, 0, 0));
  EXPECT_EQ(*functions_that_fit(8, 1024, 1, 256), 4);      // memory binds
  EXPECT_EQ(*functions_that_fit(2.5, 8192, 0.5, 256), 5);  // cpus bind
  EXPECT_EQ(*functions_that_fit(0.3, 8192, 0.5, 0), 0);
  EXPECT_EQ(*functions_that_fit(-1, 100, 1, 0), 0);
}

}  // namespace
}  // namespace uvsched
