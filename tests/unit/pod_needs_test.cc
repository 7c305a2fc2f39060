// What placement reads of a pod: here, whether its tolerations let it onto a
// cordoned agent (Toleration.ToleratesTaint for node.kubernetes.io/unschedulable:NoSchedule).
#include "handlers/pods/pod_needs.h"

#include <gtest/gtest.h>

#include "tests/support/json_literal.h"

namespace uvsched {
namespace {

using test::json;

TEST(PodNeeds, AToleranceOfTheCordonsTaintAsKubernetesMatchesIt) {
  struct Case {
    const char* tolerations;
    bool tolerates;
  } cases[] = {
      {"[]", false},
      {R"([{"key":"node.kubernetes.io/unschedulable","operator":"Exists","effect":"NoSchedule"}])", true},
      {R"([{"key":"node.kubernetes.io/unschedulable","operator":"Exists"}])", true},  // any effect
      {R"([{"key":"node.kubernetes.io/unschedulable"}])", true},                      // Equal to no value
      {R"([{"key":"node.kubernetes.io/unschedulable","value":"x"}])", false},
      {R"([{"operator":"Exists"}])", true},  // tolerates everything
      {R"([{"key":"node.kubernetes.io/unschedulable","operator":"Exists","effect":"NoExecute"}])", false},
      {R"([{"key":"node.kubernetes.io/not-ready","operator":"Exists"}])", false},
      {R"([{"operator":"Equal"}])", false},
  };
  for (const auto& c : cases) {
    JsonValue pod = json(R"({"spec":{"containers":[{"name":"c","image":"i"}]}})");
    pod.ensure({"spec"}).set("tolerations", json(c.tolerations));
    EXPECT_EQ(pod_needs(pod).tolerates_unschedulable, c.tolerates) << c.tolerations;
  }
}

}  // namespace
}  // namespace uvsched
