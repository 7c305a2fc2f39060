// Which pods the scheduler places, table by table.
#include "policy/unscheduled.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(UnscheduledTest, OnlyAPendingPodWithNoTaskThatIsNotBeingDeleted) {
  struct Case {
    const char* name;
    PodFacts pod;
    bool want;
  } cases[] = {
      {"a new pod", {"Pending", false, false}, true},
      {"bound to a task (by us, or a predecessor)", {"Pending", true, false}, false},
      {"being deleted", {"Pending", false, true}, false},
      {"running", {"Running", true, false}, false},
      {"running without a task annotation (another writer's)", {"Running", false, false}, false},
      {"succeeded", {"Succeeded", false, false}, false},
      {"failed", {"Failed", false, false}, false},
      {"no phase yet (not defaulted)", {"", false, false}, false},
      {"held by a scheduling gate", {"Pending", false, false, true}, false},
  };
  for (const auto& c : cases) EXPECT_EQ(is_unscheduled(c.pod), c.want) << c.name;
}

}  // namespace
}  // namespace uvsched
