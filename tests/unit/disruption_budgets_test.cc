// The disruption controller and the eviction's budget check
// (DisruptionBudgets) against a FakeStore whose answers the test runs and a
// ManualClock: statuses follow the pods, an eviction spends a disruption and
// records it, two at once cannot both spend the last one, a dry run spends
// nothing, and a disruption never seen going times out.
#include "handlers/pods/disruption_budgets.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "reactor/manual_clock.h"
#include "tests/support/fake_store.h"

namespace uvsched {
namespace {

using test::FakeStore;

constexpr const char* kBudget = "/registry/policy/poddisruptionbudgets/default/web";

std::string budget_pod_json(const std::string& name, const std::string& app, const std::string& phase = "Running",
                            bool ready = true) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"default","labels":{"app":")" + app +
         R"("}},"status":{"phase":")" + phase + R"(","conditions":[{"type":"Ready","status":")" +
         (ready ? "True" : "False") + R"("}]}})";
}

class DisruptionBudgetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    put(kBudget, R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web",)"
                 R"("namespace":"default","generation":1},"spec":{"minAvailable":1,)"
                 R"("selector":{"matchLabels":{"app":"web"}}}})");
    put("/registry/pods/default/a", budget_pod_json("a", "web"));
    put("/registry/pods/default/b", budget_pod_json("b", "web"));
    put("/registry/pods/default/other", budget_pod_json("other", "db"));
  }
  void put(const std::string& key, const std::string& value) {
    store_.put(key, value, 0, [](WriteResult&&) {});
    store_.run();
  }
  // Lets the controller see what changed and write what follows.
  void settle() {
    store_.run();
    clock_.advance(DisruptionBudgets::kSettleMs);
    store_.run();
  }
  std::string status() const {
    std::string error;
    auto pdb = JsonValue::parse(store_.value(kBudget).value_or("{}"), &error);
    const JsonValue* st = pdb ? pdb->get("status") : nullptr;
    return st ? st->dump() : "<none>";
  }
  int64_t allowed() const {
    std::string error;
    auto pdb = JsonValue::parse(store_.value(kBudget).value_or("{}"), &error);
    const JsonValue* v = pdb ? pdb->find({"status", "disruptionsAllowed"}) : nullptr;
    return v && v->as_integer() ? *v->as_integer() : -1;
  }
  // Asks to evict pod `name` (as stored); the refusal's status code, or 0 when it may go.
  int evict(const std::string& name, bool dry_run = false) {
    std::optional<int> code;
    ask(name, dry_run, &code);
    store_.run();
    EXPECT_TRUE(code.has_value()) << "no verdict";
    return code.value_or(-1);
  }
  void ask(const std::string& name, bool dry_run, std::optional<int>* code) {
    std::string error;
    auto p = JsonValue::parse(store_.value("/registry/pods/default/" + name).value_or("{}"), &error);
    budgets_.admit_eviction("default", *p, dry_run, [code, this](std::optional<HttpResponse> refusal) {
      *code = refusal ? refusal->status : 0;
      if (refusal) last_refusal_ = refusal->body;
    });
  }

  FakeStore store_;
  ManualClock clock_;
  PodWriter writer_{store_};
  DisruptionBudgets budgets_{store_, clock_, writer_};
  std::string last_refusal_;
};

TEST_F(DisruptionBudgetsTest, TheStatusFollowsThePodsItSelects) {
  budgets_.start();
  settle();
  EXPECT_EQ(allowed(), 1) << status();
  EXPECT_NE(status().find(R"("currentHealthy":2,"desiredHealthy":1,"expectedPods":2)"), std::string::npos) << status();
  EXPECT_NE(status().find(R"("reason":"SufficientPods")"), std::string::npos) << status();
  store_.del("/registry/pods/default/b", false, [](WriteResult&&) {});
  settle();
  EXPECT_EQ(allowed(), 0) << status();
  EXPECT_NE(status().find(R"("reason":"InsufficientPods")"), std::string::npos) << status();
  put("/registry/pods/default/c", budget_pod_json("c", "web", "Running", false));  // not ready: expected, not healthy
  settle();
  EXPECT_NE(status().find(R"("currentHealthy":1,"desiredHealthy":1,"expectedPods":2)"), std::string::npos) << status();
  // Stopped (no longer leading), it writes nothing more; leading again, it
  // catches up and follows the pods again.
  budgets_.stop();
  put("/registry/pods/default/d", budget_pod_json("d", "web"));
  settle();
  EXPECT_EQ(allowed(), 0) << status();
  budgets_.start();
  settle();
  EXPECT_EQ(allowed(), 1) << status();
  store_.del("/registry/pods/default/d", false, [](WriteResult&&) {});
  settle();
  EXPECT_EQ(allowed(), 0) << status();
}

TEST_F(DisruptionBudgetsTest, AnEvictionSpendsADisruptionAndTheNextIsRefused) {
  budgets_.start();
  settle();
  EXPECT_EQ(evict("other"), 0) << "no budget covers it";
  EXPECT_EQ(evict("a", /*dry_run=*/true), 0);
  EXPECT_EQ(allowed(), 1) << "a dry run spends nothing: " << status();
  EXPECT_EQ(evict("a"), 0);
  EXPECT_NE(status().find(R"("disruptedPods":{"a":)"), std::string::npos) << status();
  EXPECT_EQ(allowed(), 0) << status();
  EXPECT_EQ(evict("b"), 429);
  EXPECT_NE(last_refusal_.find("Cannot evict pod as it would violate the pod's disruption budget."), std::string::npos)
      << last_refusal_;
  EXPECT_NE(last_refusal_.find("The disruption budget web needs 1 healthy pods and has 1 currently"), std::string::npos)
      << last_refusal_;
  // Pod a never went: two minutes on, its disruption is forgotten and b may go.
  clock_.advance(kDisruptedPodTimeoutMs);
  settle();
  EXPECT_EQ(allowed(), 1) << status();
  EXPECT_EQ(status().find("disruptedPods"), std::string::npos) << status();
  EXPECT_EQ(evict("b"), 0);
}

TEST_F(DisruptionBudgetsTest, TwoEvictionsAtOnceCannotBothSpendTheLastDisruption) {
  budgets_.start();
  settle();
  std::optional<int> first, second;
  ask("a", false, &first);
  ask("b", false, &second);
  store_.run();
  ASSERT_TRUE(first && second);
  EXPECT_EQ((*first == 0) + (*second == 0), 1) << *first << " " << *second;
  EXPECT_EQ(*first + *second, 429);
}

TEST_F(DisruptionBudgetsTest, WhatDisruptsNothingGoesAndTwoBudgetsAreAnError) {
  put("/registry/pods/default/new", budget_pod_json("new", "web", "Pending", false));
  put("/registry/pods/default/done", budget_pod_json("done", "web", "Succeeded", false));
  put("/registry/pods/default/gone", R"({"metadata":{"name":"gone","labels":{"app":"web"},)"
                                     R"("deletionTimestamp":"2026-01-01T00:00:00Z"},"status":{"phase":"Running"}})");
  budgets_.start();
  settle();
  put(kBudget, R"({"metadata":{"name":"web","generation":1},"spec":{"minAvailable":9,"selector":{}}})");
  settle();
  EXPECT_EQ(evict("a"), 429);
  EXPECT_EQ(evict("new"), 0) << "a pending pod";
  EXPECT_EQ(evict("done"), 0) << "an ended pod";
  EXPECT_EQ(evict("gone"), 0) << "a pod being deleted";
  put("/registry/policy/poddisruptionbudgets/default/more",
      R"({"metadata":{"name":"more"},"spec":{"minAvailable":0,"selector":{}}})");
  EXPECT_EQ(evict("a"), 500);
  EXPECT_NE(last_refusal_.find("more than one PodDisruptionBudget"), std::string::npos) << last_refusal_;
}

TEST_F(DisruptionBudgetsTest, ABudgetWithoutASelectorCoversNothing) {
  put(kBudget, R"({"metadata":{"name":"web","generation":1},"spec":{"minAvailable":5}})");
  budgets_.start();
  settle();
  EXPECT_NE(status().find(R"("currentHealthy":0,"desiredHealthy":5,"expectedPods":0)"), std::string::npos) << status();
  EXPECT_EQ(evict("a"), 0);
}

}  // namespace
}  // namespace uvsched
