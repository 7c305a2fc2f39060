// What placement reads of a pod: here, whether its tolerations let it onto a
// cordoned agent (Toleration.ToleratesTaint for node.kubernetes.io/unschedulable:NoSchedule).
// (A toleration with no key and operator Equal, which ToleratesTaint would
// match with an empty value, is refused by validation: not a case here.)
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
      {R"([{"key":"node.kubernetes.io/unschedulable","operator":"Bogus"}])", false},
      {R"([5, {"key":"node.kubernetes.io/unschedulable","operator":"Exists","tolerationSeconds":60}])", true},
  };
  for (const auto& c : cases) {
    JsonValue pod = json(R"({"spec":{"containers":[{"name":"c","image":"i"}]}})");
    pod.ensure({"spec"}).set("tolerations", json(c.tolerations));
    EXPECT_EQ(!cordon_misfit(pod_needs(pod), true), c.tolerates) << c.tolerations;
  }
}

// The required node affinity's terms, each requirement as written; the
// preferred ones are not placement's (first come, first served).
TEST(PodNeeds, TheRequiredNodeAffinityIsRead) {
  JsonValue pod = json(R"({"spec":{"containers":[{"name":"c","image":"i"}],"affinity":{"nodeAffinity":{)"
                       R"("requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[)"
                       R"({"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]},)"
                       R"({"key":"cores","operator":"Gt","values":["8"]}]},)"
                       R"({"matchFields":[{"key":"metadata.name","operator":"NotIn","values":["n1"]}]}]},)"
                       R"("preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{)"
                       R"("matchExpressions":[{"key":"disk","operator":"Exists"}]}}]}}}})");
  PodNeeds needs = pod_needs(pod);
  ASSERT_EQ(needs.node_affinity.size(), 2u);
  using Op = NodeSelectorRequirement::Op;
  const auto& first = needs.node_affinity[0].match_expressions;
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].key, "zone");
  EXPECT_EQ(first[0].op, Op::kIn);
  EXPECT_EQ(first[0].values, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(first[1].op, Op::kGt);
  const auto& fields = needs.node_affinity[1].match_fields;
  ASSERT_EQ(fields.size(), 1u);
  EXPECT_EQ(fields[0].key, "metadata.name");
  EXPECT_EQ(fields[0].op, Op::kNotIn);
  EXPECT_TRUE(pod_needs(json(R"({"spec":{"containers":[{"name":"c","image":"i"}]}})")).node_affinity.empty());
}

}  // namespace
}  // namespace uvsched
