// A PodDisruptionBudget's arithmetic and the Eviction API's verdict
// (policy/disruption_budget.h), case by case as Kubernetes computes them.
#include "policy/disruption_budget.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

constexpr int64_t kNow = 1'000'000;

BudgetSpec min_available(int32_t n) { return {.min_available = IntOrPercent{n, false}}; }

BudgetPod healthy(const char* name) { return {name, true, false}; }
BudgetPod unhealthy(const char* name) { return {name, false, false}; }
BudgetPod terminating(const char* name) { return {name, true, true}; }

TEST(DisruptionBudgetTest, ScaledValuesRoundUpAsKubernetesDoes) {
  EXPECT_EQ(scaled_value({3, false}, 10), 3);
  EXPECT_EQ(scaled_value({50, true}, 3), 2);
  EXPECT_EQ(scaled_value({1, true}, 1), 1);
  EXPECT_EQ(scaled_value({0, true}, 9), 0);
  EXPECT_EQ(scaled_value({100, true}, 7), 7);
}

TEST(DisruptionBudgetTest, TheStatusCountsHealthyPodsAgainstWhatTheBudgetNeeds) {
  struct Case {
    const char* name;
    BudgetSpec spec;
    std::vector<BudgetPod> pods;
    DisruptedPods disrupted;
    int32_t expected, healthy, desired, allowed;
    size_t still_disrupted;
    bool sync_error;
  } cases[] = {
      {"one to spare", min_available(2), {healthy("a"), healthy("b"), healthy("c")}, {}, 3, 3, 2, 1, 0, false},
      {"none to spare", min_available(2), {healthy("a"), healthy("b")}, {}, 2, 2, 2, 0, 0, false},
      {"fewer than needed: none, not a negative",
       min_available(3),
       {healthy("a"), healthy("b")},
       {},
       2,
       2,
       3,
       0,
       0,
       false},
      {"an unready pod and one being deleted are not healthy, but expected",
       min_available(1),
       {healthy("a"), unhealthy("b"), terminating("c")},
       {},
       3,
       1,
       1,
       0,
       0,
       false},
      {"a pod an eviction took is not healthy until it is seen going",
       min_available(1),
       {healthy("a"), healthy("b")},
       {{"b", kNow - 1'000}},
       2,
       1,
       1,
       0,
       1,
       false},
      {"a disruption not seen going in two minutes is dropped",
       min_available(1),
       {healthy("a"), healthy("b")},
       {{"b", kNow - kDisruptedPodTimeoutMs}},
       2,
       2,
       1,
       1,
       0,
       false},
      {"a disrupted pod being deleted, or gone, leaves the record",
       min_available(1),
       {healthy("a"), terminating("b")},
       {{"b", kNow - 1'000}, {"gone", kNow - 1'000}},
       2,
       1,
       1,
       0,
       0,
       false},
      {"a budget over no pods allows nothing", min_available(0), {}, {}, 0, 0, 0, 0, 0, false},
      {"maxUnavailable needs a controller's scale",
       {.max_unavailable = IntOrPercent{1, false}},
       {healthy("a"), healthy("b")},
       {},
       0,
       2,
       0,
       0,
       0,
       true},
      {"so does a percentage", {.min_available = IntOrPercent{50, true}}, {healthy("a")}, {}, 0, 1, 0, 0, 0, true},
      {"without pods there is nothing to scale",
       {.max_unavailable = IntOrPercent{1, false}},
       {},
       {},
       0,
       0,
       0,
       0,
       0,
       false},
      {"neither field: nothing expected, nothing allowed", {}, {healthy("a")}, {}, 0, 1, 0, 0, 0, false},
  };
  for (const auto& c : cases) {
    BudgetStatus st = budget_status(c.spec, c.pods, c.disrupted, kNow);
    EXPECT_EQ(st.expected_pods, c.expected) << c.name;
    EXPECT_EQ(st.current_healthy, c.healthy) << c.name;
    EXPECT_EQ(st.desired_healthy, c.desired) << c.name;
    EXPECT_EQ(st.disruptions_allowed, c.allowed) << c.name;
    EXPECT_EQ(st.disrupted.size(), c.still_disrupted) << c.name;
    EXPECT_EQ(!st.sync_error.empty(), c.sync_error) << c.name;
  }
}

TEST(DisruptionBudgetTest, AnEvictionSpendsADisruptionOrIsRefused) {
  BudgetStatus spare{.expected_pods = 3, .current_healthy = 3, .desired_healthy = 2, .disruptions_allowed = 1};
  BudgetStatus tight{.expected_pods = 2, .current_healthy = 2, .desired_healthy = 2, .disruptions_allowed = 0};
  BudgetStatus short_one{.expected_pods = 3, .current_healthy = 1, .desired_healthy = 2, .disruptions_allowed = 0};
  BudgetStatus unconfirmed = spare;
  for (int i = 0; i <= static_cast<int>(kMaxDisruptedPods); ++i) unconfirmed.disrupted["p" + std::to_string(i)] = kNow;
  BudgetSpec always = min_available(2);
  always.always_allow_unhealthy = true;
  struct Case {
    const char* name;
    BudgetSpec spec;
    BudgetStatus status;
    bool pod_healthy;
    EvictionVerdict verdict;
  } cases[] = {
      {"a healthy pod with one to spare spends it", min_available(2), spare, true, EvictionVerdict::kCounted},
      {"a healthy pod with none to spare stays", min_available(2), tight, true, EvictionVerdict::kRefused},
      {"an unhealthy pod goes free while the budget holds", min_available(2), tight, false, EvictionVerdict::kAllowed},
      {"an unhealthy pod stays when the budget is short", min_available(2), short_one, false,
       EvictionVerdict::kRefused},
      {"AlwaysAllow lets an unhealthy pod go even then", always, short_one, false, EvictionVerdict::kAllowed},
      {"AlwaysAllow does nothing for a healthy one", always, tight, true, EvictionVerdict::kRefused},
      {"too many unconfirmed disruptions", min_available(2), unconfirmed, true, EvictionVerdict::kTooManyUnconfirmed},
  };
  for (const auto& c : cases) EXPECT_EQ(check_eviction(c.spec, c.status, c.pod_healthy), c.verdict) << c.name;
}

}  // namespace
}  // namespace uvsched
