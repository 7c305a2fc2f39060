// Preemption as kube-scheduler's DefaultPreemption decides it: only lower
// priorities, the fewest victims, then the lowest, then the lowest sum;
// victims reprieved while the pod still fits.
#include "policy/preemption.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

PreemptionCandidate pod(size_t id, int32_t prio, double cpus, bool guarded = false) {
  return {id, prio, cpus, 64, guarded};
}

TEST(PreemptionTest, ChoosesTheFewestAndLowestVictims) {
  struct Case {
    const char* name;
    double cpus;
    int32_t priority;
    std::vector<PreemptionNode> nodes;
    std::optional<size_t> node;
    std::vector<size_t> victims;
  } cases[] = {
      {"nothing lower: nothing to do", 2, 10, {{0, 0, 0, {pod(1, 10, 4), pod(2, 20, 4)}}}, {}, {}},
      {"one victim is enough: the lowest of equals goes", 2, 100, {{0, 0, 0, {pod(1, 5, 2), pod(2, 1, 2)}}}, 0, {2}},
      {"fewest victims wins over lower ones",
       4,
       100,
       {{0, 0, 0, {pod(1, 1, 2), pod(2, 1, 2)}}, {1, 0, 0, {pod(3, 50, 4)}}},
       1,
       {3}},
      {"equal counts: the lower highest victim",
       2,
       100,
       {{0, 0, 0, {pod(1, 50, 2)}}, {1, 0, 0, {pod(2, 10, 2)}}},
       1,
       {2}},
      {"free room counts: one victim, not two", 3, 100, {{0, 1, 64, {pod(1, 1, 2), pod(2, 2, 2)}}}, 0, {1}},
      {"higher and equal priorities are never victims", 4, 100, {{0, 0, 0, {pod(1, 100, 2), pod(2, 1, 2)}}}, {}, {}},
      {"a gang member is never a victim alone", 2, 100, {{0, 0, 0, {pod(1, 1, 2, true)}}}, {}, {}},
      {"it fits already: no preemption", 1, 100, {{0, 2, 128, {pod(1, 1, 2)}}}, {}, {}},
      {"reprieve the most important first", 2, 100, {{0, 0, 0, {pod(1, 1, 1), pod(2, 2, 1), pod(3, 3, 2)}}}, 0, {1, 2}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto choice = choose_preemption(c.cpus, 64, c.priority, c.nodes);
    ASSERT_EQ(choice.has_value(), c.node.has_value());
    if (!choice) continue;
    EXPECT_EQ(choice->node, *c.node);
    EXPECT_EQ(choice->victims, c.victims);
  }
}

}  // namespace
}  // namespace uvsched
