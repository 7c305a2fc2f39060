#include "policy/topology_spread.h"

#include <gtest/gtest.h>

#include <map>

namespace uvsched {
namespace {

// Four nodes: two in zone a, one in b, one with no zone label.
const std::map<std::string, Labels, std::less<>> kZones = {
    {"n1", {{"kubernetes.io/hostname", "n1"}, {"zone", "a"}}},
    {"n2", {{"kubernetes.io/hostname", "n2"}, {"zone", "a"}}},
    {"n3", {{"kubernetes.io/hostname", "n3"}, {"zone", "b"}}},
    {"n4", {{"kubernetes.io/hostname", "n4"}}},
};

SpreadConstraint by_zone(int32_t max_skew = 1) {
  SpreadConstraint c;
  c.selector = LabelSelector::equals_all({{"app", "web"}});
  c.namespaces = {"default"};
  c.topology_key = "zone";
  c.max_skew = max_skew;
  return c;
}

struct Placed {
  std::string ns, node;
  Labels labels;
  bool terminating = false;
};

// n1..n4: '.' fits, 'S' skewed, 'L' lacks the key.
std::string verdicts(const SpreadConstraint& c, const std::vector<Placed>& placed, Labels own = {{"app", "web"}},
                     std::string_view off_affinity = "", std::string_view tainted = "") {
  std::vector<PlacedPod> views;
  for (const auto& p : placed) views.push_back({p.ns, &p.labels, p.node, p.terminating, nullptr});
  std::vector<SpreadNode> nodes;
  for (const auto& [name, labels] : kZones) nodes.push_back({name, &labels, name != off_affinity, name != tainted});
  std::vector<SpreadConstraint> constraints{c};
  TopologySpread f("default", own, constraints, views, nodes);
  std::string out;
  for (const auto& [name, labels] : kZones) {
    auto m = f.misfit(labels);
    out += !m                                            ? '.'
           : m->kind == MisfitKind::kTopologySpread      ? 'S'
           : m->kind == MisfitKind::kTopologySpreadLabel ? 'L'
                                                         : '?';
  }
  return out;
}

TEST(TopologySpread, DoNotScheduleAsKubeSchedulerFiltersIt) {
  const Labels web{{"app", "web"}};
  const Placed a1{"default", "n1", web}, a2{"default", "n2", web}, b1{"default", "n3", web};
  SpreadConstraint min3 = by_zone();
  min3.min_domains = 3;
  SpreadConstraint ignore_affinity = by_zone();
  ignore_affinity.honor_node_affinity = false;
  SpreadConstraint honor_taints = by_zone();
  honor_taints.honor_taints = true;
  EXPECT_EQ(verdicts(by_zone(), {}), "...L") << "nothing placed: every zone is the smallest";
  EXPECT_EQ(verdicts(by_zone(), {a1}), "SS.L") << "a has 1, b 0: a second in a skews it by 2";
  EXPECT_EQ(verdicts(by_zone(2), {a1}), "...L") << "maxSkew 2 allows it";
  EXPECT_EQ(verdicts(by_zone(), {a1, b1}), "...L") << "even";
  EXPECT_EQ(verdicts(by_zone(), {a1, a2, b1}), "SS.L");
  EXPECT_EQ(verdicts(by_zone(), {{"default", "n1", web, true}}), "...L") << "a pod being deleted is not counted";
  EXPECT_EQ(verdicts(by_zone(), {{"other", "n1", web}}), "...L") << "nor one of another namespace";
  EXPECT_EQ(verdicts(by_zone(), {{"default", "n1", {{"app", "db"}}}}), "...L") << "nor one it does not select";
  EXPECT_EQ(verdicts(by_zone(), {a1, a2}, {{"app", "db"}}), "SS.L") << "not selecting itself: a has 2, b 0";
  EXPECT_EQ(verdicts(by_zone(), {a1}, {{"app", "db"}}), "...L") << "a has 1, b 0, and it adds none";
  EXPECT_EQ(verdicts(min3, {a1, b1}), "SSSL") << "fewer zones than minDomains: the smallest counts as 0";
  EXPECT_EQ(verdicts(by_zone(), {a1}, {{"app", "web"}}, "n3"), "...L")
      << "b fails the pod's node affinity: its domain is not counted";
  EXPECT_EQ(verdicts(ignore_affinity, {a1}, {{"app", "web"}}, "n3"), "SS.L") << "nodeAffinityPolicy Ignore";
  EXPECT_EQ(verdicts(by_zone(), {a1}, {{"app", "web"}}, "", "n3"), "SS.L") << "taints ignored by default";
  EXPECT_EQ(verdicts(honor_taints, {a1}, {{"app", "web"}}, "", "n3"), "...L") << "nodeTaintsPolicy Honor";
}

}  // namespace
}  // namespace uvsched
