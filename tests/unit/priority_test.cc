// A new pod's priority as Kubernetes' Priority admission plugin resolves it.
#include "policy/priority.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(PriorityTest, ResolvesClassesAsTheAdmissionPluginDoes) {
  const PriorityClasses none;
  const PriorityClasses classes = {
      {"high", {1000, false, false}},
      {"batch", {10, true, false}},
      {"polite", {500, false, true}},
      {"system-node-critical", {kSystemNodeCritical, false, false}},
  };
  const PriorityClasses two_defaults = {{"a", {7, true, false}}, {"b", {3, true, false}}};
  struct Case {
    const char* name;
    std::string cls;
    std::optional<int64_t> given;
    std::optional<std::string> policy;
    const PriorityClasses* classes;
    std::string error;  // empty: admitted with the rest
    std::string applied;
    int32_t priority;
    bool never;
  } cases[] = {
      {"no class and no default: 0", "", {}, {}, &none, "", "", 0, false},
      {"no class: the global default, named on the pod", "", {}, {}, &classes, "", "batch", 10, false},
      {"a named class", "high", {}, {}, &classes, "", "high", 1000, false},
      {"a system class",
       "system-node-critical",
       {},
       {},
       &classes,
       "",
       "system-node-critical",
       kSystemNodeCritical,
       false},
      {"preemptionPolicy from the class", "polite", {}, {}, &classes, "", "polite", 500, true},
      {"an unknown class is refused",
       "nope",
       {},
       {},
       &classes,
       "no PriorityClass with name nope was found",
       "",
       0,
       false},
      {"a priority that agrees is fine", "high", 1000, {}, &classes, "", "high", 1000, false},
      {"a priority that disagrees is refused",
       "high",
       5,
       {},
       &classes,
       "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed "
       "1000 from the given PriorityClass name",
       "",
       0,
       false},
      {"a priority without a class and no default",
       "",
       5,
       {},
       &none,
       "the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 "
       "from the given PriorityClass name",
       "",
       0,
       false},
      {"a policy that disagrees is refused",
       "polite",
       {},
       std::string("PreemptLowerPriority"),
       &classes,
       "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority "
       "admission controller computed Never from the given PriorityClass name",
       "",
       0,
       false},
      {"two defaults: the lowest", "", {}, {}, &two_defaults, "", "b", 3, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    PriorityAdmission a = admit_priority(c.cls, c.given, c.policy, *c.classes);
    EXPECT_EQ(a.error, c.error);
    if (!c.error.empty()) continue;
    EXPECT_EQ(a.class_name, c.applied);
    EXPECT_EQ(a.priority, c.priority);
    EXPECT_EQ(a.preempt_never, c.never);
  }
}

}  // namespace
}  // namespace uvsched
