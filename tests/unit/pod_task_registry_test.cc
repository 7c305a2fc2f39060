#include "policy/pod_task_registry.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(PodTaskRegistry, IdsNameTheirPod) {
  struct Case {
    std::string pod;
    uint64_t random;
    std::string id;
  } cases[] = {
      {"default/web", 0xabc, "pod.default.web.000000000abc"},
      {"kube-system/a.b.c", 0xffffffffffffffffULL, "pod.kube-system.a.b.c.ffffffffffff"},  // 48 bits kept
  };
  for (const auto& c : cases) {
    EXPECT_EQ(PodTaskRegistry::make_id(c.pod, c.random), c.id);
    EXPECT_EQ(PodTaskRegistry::pod_of(c.id), c.pod) << c.id;
  }
  for (const char* bad : {"", "pod.", "pod.default.000000000abc", "task.default.web.000000000abc",
                          "pod.default.web-000000000abc", "pod..web.000000000abc", "pod.default..000000000abc"}) {
    EXPECT_FALSE(PodTaskRegistry::pod_of(bad).has_value()) << bad;
  }
}

TEST(PodTaskRegistry, SerialsAreTheIdsRandomPart) {
  EXPECT_EQ(PodTaskRegistry::serial_of("pod.default.web.000000000abc"), 0xabcu);
  EXPECT_EQ(PodTaskRegistry::serial_of("pod.ns.a.b.ffffffffffff"), 0xffffffffffffu);
  for (const char* bad : {"pod.default.web.000000000ABC", "pod.default.web.00000000xabc", "not-ours", ""}) {
    EXPECT_FALSE(PodTaskRegistry::serial_of(bad).has_value()) << bad;
  }
}

TEST(PodTaskRegistry, FindsByPodAndById) {
  PodTaskRegistry reg;
  PodTask t;
  t.serial = 1;
  t.agent = reg.intern_agent("edge-1");
  std::string id = PodTaskRegistry::id_of("default/web", t);
  EXPECT_EQ(id, "pod.default.web.000000000001");
  reg.add("default/web", t);
  ASSERT_NE(reg.by_id(id), nullptr);
  EXPECT_EQ(reg.agent_of(*reg.by_id(id)), "edge-1");
  EXPECT_EQ(PodTaskRegistry::id_of("default/web", *reg.by_pod("default/web")), id);
  EXPECT_TRUE(reg.has_pod("default/web"));
  // A stale id of the same pod (an earlier task) is not this task.
  EXPECT_EQ(reg.by_id(PodTaskRegistry::make_id("default/web", 2)), nullptr);
  EXPECT_EQ(reg.by_id("not-ours"), nullptr);
  t.serial = 3;  // relaunched: replaces
  reg.add("default/web", t);
  EXPECT_EQ(reg.size(), 1u);
  EXPECT_NE(reg.by_id(PodTaskRegistry::make_id("default/web", 3)), nullptr);
  t.serial = 0xfedc000000000005ULL;  // wider than an id: only its 48 bits are kept
  reg.add("default/web", t);
  EXPECT_NE(reg.by_id("pod.default.web.000000000005"), nullptr);
  EXPECT_EQ(PodTaskRegistry::id_of("default/web", *reg.by_pod("default/web")), "pod.default.web.000000000005");
  reg.erase_pod("default/web");
  EXPECT_EQ(reg.size(), 0u);
  EXPECT_EQ(reg.by_id(PodTaskRegistry::make_id("default/web", 3)), nullptr);
}

TEST(PodTaskRegistry, AgentNamesAreInternedOnce) {
  PodTaskRegistry reg;
  uint32_t a = reg.intern_agent("ip-10-0-1-23.eu-west-1.compute.internal");
  uint32_t b = reg.intern_agent("edge-2");
  EXPECT_NE(a, b);
  EXPECT_EQ(reg.intern_agent("ip-10-0-1-23.eu-west-1.compute.internal"), a);
  EXPECT_EQ(reg.agent_name(a), "ip-10-0-1-23.eu-west-1.compute.internal");
  EXPECT_EQ(reg.agent_name(b), "edge-2");
}

// What preemption asks of the registry: the tasks on one agent, and the
// lowest priority of any task, kept through adds, replaces and erasures.
TEST(PodTaskRegistry, KnowsEachAgentsTasksAndTheLowestPriority) {
  PodTaskRegistry reg;
  EXPECT_EQ(reg.lowest_priority(), std::nullopt);
  uint32_t a = reg.intern_agent("a"), b = reg.intern_agent("b");
  PodTask t;
  t.agent = a;
  t.priority = 5;
  reg.add("default/x", t);
  t.priority = 1;
  reg.add("default/y", t);
  t.agent = b;
  t.priority = 9;
  reg.add("default/z", t);
  EXPECT_EQ(reg.lowest_priority(), 1);
  EXPECT_EQ(reg.on_agent(a).size(), 2u);
  ASSERT_EQ(reg.on_agent(b).size(), 1u);
  EXPECT_EQ(reg.on_agent(b)[0].first, "default/z");
  EXPECT_EQ(reg.agent_index("b"), b);
  EXPECT_EQ(reg.agent_index("c"), std::nullopt);
  reg.erase_pod("default/y");
  EXPECT_EQ(reg.lowest_priority(), 5);
  t.agent = a;  // z relaunched on a, at another priority
  t.priority = 7;
  reg.add("default/z", t);
  EXPECT_TRUE(reg.on_agent(b).empty());
  EXPECT_EQ(reg.on_agent(a).size(), 2u);
  reg.erase_pod("default/x");
  EXPECT_EQ(reg.lowest_priority(), 7);
  reg.erase_pod("default/z");
  EXPECT_EQ(reg.lowest_priority(), std::nullopt);
  EXPECT_TRUE(reg.on_agent(a).empty());
}

}  // namespace
}  // namespace uvsched
