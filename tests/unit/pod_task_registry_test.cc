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

TEST(PodTaskRegistry, FindsByPodAndById) {
  PodTaskRegistry reg;
  PodTask t;
  t.pod_key = "default/web";
  t.id = PodTaskRegistry::make_id(t.pod_key, 1);
  t.agent = "edge-1";
  reg.add(t);
  ASSERT_NE(reg.by_id(t.id), nullptr);
  EXPECT_EQ(reg.by_id(t.id)->agent, "edge-1");
  EXPECT_EQ(reg.by_pod("default/web")->id, t.id);
  EXPECT_TRUE(reg.has_pod("default/web"));
  // A stale id of the same pod (an earlier task) is not this task.
  EXPECT_EQ(reg.by_id(PodTaskRegistry::make_id("default/web", 2)), nullptr);
  EXPECT_EQ(reg.by_id("not-ours"), nullptr);
  t.id = PodTaskRegistry::make_id(t.pod_key, 3);  // relaunched: replaces
  reg.add(t);
  EXPECT_EQ(reg.size(), 1u);
  EXPECT_NE(reg.by_id(t.id), nullptr);
  reg.erase_pod("default/web");
  EXPECT_EQ(reg.size(), 0u);
  EXPECT_EQ(reg.by_id(t.id), nullptr);
}

}  // namespace
}  // namespace uvsched
