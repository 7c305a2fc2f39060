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

// The pod's labels, and its required inter-pod terms and DoNotSchedule
// spread: namespaces resolved (its own when a term names none),
// matchLabelKeys and mismatchLabelKeys merged from its labels, preferences
// left out. A pod with none of them carries no inter-pod needs at all.
TEST(PodNeeds, TheInterPodTermsAreRead) {
  JsonValue pod = json(
      R"({"metadata":{"namespace":"shop","labels":{"app":"web","rev":"7"}},"spec":{"containers":[{"name":"c","image":"i"}],)"
      R"("affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[)"
      R"({"labelSelector":{"matchLabels":{"app":"web"}},"matchLabelKeys":["rev"],"topologyKey":"kubernetes.io/hostname"},)"
      R"({"namespaces":["a","b"],"topologyKey":"zone"}],)"
      R"("preferredDuringSchedulingIgnoredDuringExecution":[{"weight":5,"podAffinityTerm":{"topologyKey":"zone"}}]},)"
      R"("podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[)"
      R"({"labelSelector":{"matchExpressions":[{"key":"app","operator":"In","values":["db"]}]},)"
      R"("mismatchLabelKeys":["rev"],"topologyKey":"zone"}]}},)"
      R"("topologySpreadConstraints":[{"maxSkew":2,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",)"
      R"("minDomains":3,"nodeAffinityPolicy":"Ignore","nodeTaintsPolicy":"Honor","labelSelector":{}},)"
      R"({"maxSkew":1,"topologyKey":"rack","whenUnsatisfiable":"ScheduleAnyway","labelSelector":{}}]}})");
  PodNeeds needs = pod_needs(pod);
  EXPECT_EQ(needs.labels, (Labels{{"app", "web"}, {"rev", "7"}}));
  ASSERT_TRUE(needs.inter_pod);
  const auto& anti = needs.inter_pod->terms.anti_affinity;
  ASSERT_EQ(anti.size(), 2u);
  EXPECT_EQ(anti[0].namespaces, (std::vector<std::string>{"shop"}));
  EXPECT_EQ(anti[0].topology_key, "kubernetes.io/hostname");
  EXPECT_TRUE(anti[0].selects("shop", {{"app", "web"}, {"rev", "7"}}));
  EXPECT_FALSE(anti[0].selects("shop", {{"app", "web"}, {"rev", "6"}})) << "matchLabelKeys: rev in (7)";
  EXPECT_FALSE(anti[0].selects("other", {{"app", "web"}, {"rev", "7"}}));
  EXPECT_EQ(anti[1].namespaces, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(anti[1].selects("a", {})) << "no labelSelector selects nothing";
  const auto& affinity = needs.inter_pod->terms.affinity;
  ASSERT_EQ(affinity.size(), 1u);
  EXPECT_TRUE(affinity[0].selects("shop", {{"app", "db"}, {"rev", "6"}}));
  EXPECT_FALSE(affinity[0].selects("shop", {{"app", "db"}, {"rev", "7"}})) << "mismatchLabelKeys: rev notin (7)";
  const auto& spread = needs.inter_pod->spread;
  ASSERT_EQ(spread.size(), 1u) << "ScheduleAnyway is a preference";
  EXPECT_EQ(spread[0].max_skew, 2);
  EXPECT_EQ(spread[0].min_domains, 3);
  EXPECT_FALSE(spread[0].honor_node_affinity);
  EXPECT_TRUE(spread[0].honor_taints);
  EXPECT_TRUE(spread[0].selects("shop", {})) << "an empty selector selects every pod of its namespace";
  EXPECT_FALSE(spread[0].selects("other", {}));
  EXPECT_FALSE(pod_needs(json(R"({"metadata":{"labels":{"a":"b"}},"spec":{"affinity":{"podAffinity":{)"
                              R"("preferredDuringSchedulingIgnoredDuringExecution":[]}}}})"))
                   .inter_pod);
}

}  // namespace
}  // namespace uvsched
