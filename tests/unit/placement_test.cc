#include "policy/placement.h"

#include <gtest/gtest.h>

#include "tests/support/offers.h"

namespace uvsched {
namespace {

using test::offer;

TEST(Placement, FitsByResourcesPortsNodeNameAndSelector) {
  const Offer o = offer("o", "edge-1", 2, 1024, {{31000, 32000}, {8080, 8080}});
  const Labels labels = {{"zone", "north"}, {"gpu", "yes"}};
  struct Case {
    const char* name;
    PodNeeds pod;
    std::optional<std::string> why;
  } cases[] = {
      {"fits", {1, 512, {}, "", {}}, std::nullopt},
      {"exactly fits", {2, 1024, {}, "", {}}, std::nullopt},
      {"too many cpus", {2.5, 512, {}, "", {}}, "insufficient cpus"},
      {"too much memory", {1, 2048, {}, "", {}}, "insufficient memory"},
      {"ports in ranges", {1, 1, {31000, 32000, 8080}, "", {}}, std::nullopt},
      {"port outside", {1, 1, {80}, "", {}}, "hostPort 80 not offered"},
      {"port twice", {1, 1, {31500, 31500}, "", {}}, "hostPort 31500 asked twice"},
      {"node name matches", {1, 1, {}, "edge-1", {}}, std::nullopt},
      {"node name differs", {1, 1, {}, "edge-2", {}}, "spec.nodeName is edge-2"},
      {"selector matches", {1, 1, {}, "", {{"zone", "north"}}}, std::nullopt},
      {"selector differs", {1, 1, {}, "", {{"zone", "south"}}}, "nodeSelector does not match"},
      {"selector label missing", {1, 1, {}, "", {{"ssd", "yes"}}}, "nodeSelector does not match"},
      {"float sums", {0.1 + 0.2, 1, {}, "", {}}, std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(misfit(c.pod, o, labels), c.why) << c.name;
  const Offer tight = offer("t", "edge-1", 0.3, 64);
  EXPECT_EQ(misfit({0.1 + 0.2, 64, {}, "", {}}, tight, labels), std::nullopt);
}

// kube-scheduler's NodeUnschedulable: a cordoned agent only for a pod that tolerates it.
TEST(Placement, ACordonedAgentTakesOnlyAPodThatToleratesIt) {
  PodNeeds plain, tolerant;
  tolerant.tolerations.push_back({.key = kUnschedulableTaint, .op = "Exists", .effect = "NoSchedule"});
  EXPECT_FALSE(cordon_misfit(plain, false));
  EXPECT_FALSE(cordon_misfit(tolerant, true));
  auto m = cordon_misfit(plain, true);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, MisfitKind::kUnschedulable);
}

// v1.Toleration.ToleratesTaint, case by case.
TEST(Taints, ATolerationMatchesATaintAsKubernetesSays) {
  const Taint gpu{.key = "dedicated", .value = "gpu", .effect = "NoSchedule"};
  struct Case {
    const char* name;
    Toleration toleration;
    bool tolerates;
  } cases[] = {
      {"key and value", {.key = "dedicated", .value = "gpu"}, true},
      {"key, value and effect", {.key = "dedicated", .op = "Equal", .value = "gpu", .effect = "NoSchedule"}, true},
      {"another value", {.key = "dedicated", .value = "cpu"}, false},
      {"no value", {.key = "dedicated"}, false},
      {"the key exists", {.key = "dedicated", .op = "Exists"}, true},
      {"another key", {.key = "zone", .op = "Exists"}, false},
      {"another effect", {.key = "dedicated", .op = "Exists", .effect = "NoExecute"}, false},
      {"everything", {.op = "Exists"}, true},
      {"every NoSchedule taint", {.op = "Exists", .effect = "NoSchedule"}, true},
      {"an operator Kubernetes does not know", {.key = "dedicated", .op = "In", .value = "gpu"}, false},
  };
  for (const auto& c : cases) EXPECT_EQ(tolerates(c.toleration, gpu), c.tolerates) << c.name;
}

// kube-scheduler's TaintToleration filter: every NoSchedule and NoExecute
// taint tolerated; a PreferNoSchedule taint keeps nobody off.
TEST(Placement, ATaintedAgentTakesOnlyAPodThatToleratesEachOfItsTaints) {
  const std::vector<Taint> taints = {{.key = "dedicated", .value = "gpu", .effect = "NoSchedule"},
                                     {.key = "maintenance", .effect = "NoExecute"},
                                     {.key = "busy", .effect = "PreferNoSchedule"}};
  PodNeeds plain;
  EXPECT_FALSE(taint_misfit(plain, {}));
  EXPECT_FALSE(taint_misfit(plain, {{.key = "busy", .effect = "PreferNoSchedule"}}));
  auto m = taint_misfit(plain, taints);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, MisfitKind::kTaint);
  EXPECT_EQ(m->why, "the agent has taint {dedicated: gpu}, which the pod does not tolerate");
  PodNeeds gpu_only;
  gpu_only.tolerations = {{.key = "dedicated", .value = "gpu", .effect = "NoSchedule"}};
  m = taint_misfit(gpu_only, taints);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->why, "the agent has taint {maintenance: }, which the pod does not tolerate");
  PodNeeds both = gpu_only;
  both.tolerations.push_back({.key = "maintenance", .op = "Exists", .effect = "NoExecute", .seconds = 60});
  EXPECT_FALSE(taint_misfit(both, taints));
  PodNeeds everything;
  everything.tolerations = {{.op = "Exists"}};
  EXPECT_FALSE(taint_misfit(everything, taints));
}

TEST(Taints, APreferNoScheduleTaintNotToleratedSendsThePodElsewhere) {
  const std::vector<Taint> taints = {{.key = "busy", .effect = "PreferNoSchedule"},
                                     {.key = "dedicated", .value = "gpu", .effect = "NoSchedule"}};
  EXPECT_FALSE(prefers_elsewhere({}, {}));
  EXPECT_FALSE(prefers_elsewhere({}, {{.key = "dedicated", .effect = "NoSchedule"}}));
  EXPECT_TRUE(prefers_elsewhere({}, taints));
  EXPECT_FALSE(prefers_elsewhere({{.key = "busy", .op = "Exists"}}, taints));
  EXPECT_TRUE(prefers_elsewhere({{.key = "busy", .op = "Exists", .effect = "NoSchedule"}}, taints));
}

// The taint manager's getMinTolerationTime: how long a running pod stays on
// an agent with these taints (nullopt: for good; 0: it goes now).
TEST(Taints, ANoExecuteTaintIsToleratedForGoodForAWhileOrNot) {
  const Taint maintenance{.key = "maintenance", .effect = "NoExecute"};
  const Taint gpu{.key = "dedicated", .value = "gpu", .effect = "NoSchedule"};
  const Taint unreachable{.key = "node.kubernetes.io/unreachable", .effect = "NoExecute"};
  const Toleration for_good{.key = "maintenance", .op = "Exists", .effect = "NoExecute"};
  const Toleration a_minute{.key = "maintenance", .op = "Exists", .effect = "NoExecute", .seconds = 60};
  const Toleration all_five_minutes{.op = "Exists", .seconds = 300};
  struct Case {
    const char* name;
    std::vector<Toleration> tolerations;
    std::vector<Taint> taints;
    std::optional<uint64_t> stay_ms;
  } cases[] = {
      {"no taints", {}, {}, std::nullopt},
      {"only NoSchedule ones", {}, {gpu}, std::nullopt},
      {"not tolerated", {}, {maintenance}, 0},
      {"tolerated for good", {for_good}, {maintenance, gpu}, std::nullopt},
      {"tolerated a minute", {a_minute}, {maintenance}, 60'000},
      {"the first toleration that matches counts", {for_good, a_minute}, {maintenance}, std::nullopt},
      {"the least of the taints'", {a_minute, all_five_minutes}, {maintenance, unreachable}, 60'000},
      {"one of two not tolerated", {a_minute}, {maintenance, unreachable}, 0},
      {"zero or fewer seconds: now",
       {{.key = "maintenance", .op = "Exists", .effect = "NoExecute", .seconds = -5}},
       {maintenance},
       0},
  };
  for (const auto& c : cases) EXPECT_EQ(noexecute_stay_ms(c.tolerations, c.taints), c.stay_ms) << c.name;
}

}  // namespace
}  // namespace uvsched
