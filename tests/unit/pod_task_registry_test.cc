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
TEST(PodTaskRegistry, KnowsEachAgentsTasksAndTheLowestVictimPriority) {
  PodTaskRegistry reg;
  EXPECT_EQ(reg.lowest_victim_priority(), std::nullopt);
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
  EXPECT_EQ(reg.lowest_victim_priority(), 1);
  EXPECT_EQ(reg.on_agent(a).size(), 2u);
  ASSERT_EQ(reg.on_agent(b).size(), 1u);
  EXPECT_EQ(reg.on_agent(b)[0].first, "default/z");
  EXPECT_EQ(reg.agent_index("b"), b);
  EXPECT_EQ(reg.agent_index("c"), std::nullopt);
  reg.erase_pod("default/y");
  EXPECT_EQ(reg.lowest_victim_priority(), 5);
  t.agent = a;  // z relaunched on a, at another priority
  t.priority = 7;
  reg.add("default/z", t);
  EXPECT_TRUE(reg.on_agent(b).empty());
  EXPECT_EQ(reg.on_agent(a).size(), 2u);
  reg.erase_pod("default/x");
  EXPECT_EQ(reg.lowest_victim_priority(), 7);
  reg.erase_pod("default/z");
  EXPECT_EQ(reg.lowest_victim_priority(), std::nullopt);
  EXPECT_TRUE(reg.on_agent(a).empty());
}

TEST(PodTaskRegistry, KeepsWhatAllItsTasksHold) {
  PodTaskRegistry reg;
  PodTask t;
  t.agent = reg.intern_agent("a");
  t.cpus = 0.25f;
  t.mem_mib = 64;
  reg.add("default/x", t);
  t.cpus = 1.5f;
  t.mem_mib = 512;
  reg.add("default/y", t);
  EXPECT_DOUBLE_EQ(reg.cpus_held(), 1.75);
  EXPECT_DOUBLE_EQ(reg.mem_mib_held(), 576);
  t.cpus = 0.5f;  // y relaunched smaller
  t.mem_mib = 128;
  reg.add("default/y", t);
  EXPECT_DOUBLE_EQ(reg.cpus_held(), 0.75);
  EXPECT_DOUBLE_EQ(reg.mem_mib_held(), 192);
  reg.erase_pod("default/x");
  EXPECT_DOUBLE_EQ(reg.cpus_held(), 0.5);
  reg.erase_pod("default/nope");
  reg.erase_pod("default/y");
  EXPECT_EQ(reg.cpus_held(), 0);
  EXPECT_EQ(reg.mem_mib_held(), 0);
}

// The agents preemption weighs for a pod of some priority: those with a task
// below it that may still be taken, lowest first, each once.
std::vector<std::string> agents_below(const PodTaskRegistry& reg, int32_t priority, size_t stop_after = 100) {
  std::vector<std::string> out;
  reg.for_each_agent_with_victims_below(priority, [&](uint32_t agent) {
    out.push_back(reg.agent_name(agent));
    return out.size() < stop_after;
  });
  return out;
}

TEST(PodTaskRegistry, IndexesTheAgentsWithPossibleVictimsByPriority) {
  PodTaskRegistry reg;
  uint32_t a = reg.intern_agent("a"), b = reg.intern_agent("b"), c = reg.intern_agent("c");
  auto task = [](uint32_t agent, int32_t priority, bool grouped = false) {
    PodTask t;
    t.agent = agent;
    t.priority = priority;
    t.grouped = grouped;
    return t;
  };
  reg.add("default/a1", task(a, 10));
  reg.add("default/a2", task(a, 0));
  reg.add("default/b1", task(b, 5));
  reg.add("default/c1", task(c, 0, /*grouped=*/true));  // a gang's: never a victim alone
  EXPECT_EQ(agents_below(reg, 0), std::vector<std::string>{});
  EXPECT_EQ(agents_below(reg, 6), (std::vector<std::string>{"a", "b"}));    // a's 0 first, then b's 5
  EXPECT_EQ(agents_below(reg, 100), (std::vector<std::string>{"a", "b"}));  // a once, though it has two
  EXPECT_EQ(agents_below(reg, 100, 1), std::vector<std::string>{"a"});      // stops when told
  EXPECT_EQ(reg.lowest_victim_priority(), 0);
  // Evicted or being deleted: no one's victim again.
  reg.mark_evicted(*reg.by_pod("default/a2"));
  EXPECT_EQ(agents_below(reg, 6), std::vector<std::string>{"b"});
  EXPECT_EQ(reg.lowest_victim_priority(), 5);
  reg.mark_deleted("default/b1", *reg.by_pod("default/b1"));
  EXPECT_EQ(agents_below(reg, 6), std::vector<std::string>{});
  EXPECT_EQ(agents_below(reg, 11), std::vector<std::string>{"a"});
  // Erasing a flagged task takes nothing more away; relaunching moves it.
  reg.erase_pod("default/a2");
  reg.erase_pod("default/b1");
  EXPECT_EQ(agents_below(reg, 11), std::vector<std::string>{"a"});
  reg.add("default/a1", task(b, 3));
  EXPECT_EQ(agents_below(reg, 11), std::vector<std::string>{"b"});
  EXPECT_EQ(reg.lowest_victim_priority(), 3);
  reg.erase_pod("default/a1");
  EXPECT_EQ(reg.lowest_victim_priority(), std::nullopt);
  EXPECT_EQ(agents_below(reg, 100), std::vector<std::string>{});
}

}  // namespace
}  // namespace uvsched
