#include "policy/inter_pod_affinity.h"

#include <gtest/gtest.h>

#include <map>

namespace uvsched {
namespace {

// Four nodes: two in zone a, one in b, one with no zone label.
const std::map<std::string, Labels, std::less<>> kNodes = {
    {"n1", {{"kubernetes.io/hostname", "n1"}, {"zone", "a"}}},
    {"n2", {{"kubernetes.io/hostname", "n2"}, {"zone", "a"}}},
    {"n3", {{"kubernetes.io/hostname", "n3"}, {"zone", "b"}}},
    {"n4", {{"kubernetes.io/hostname", "n4"}}},
};
const NodeLabels kNodeLabels = [](std::string_view n) -> const Labels* {
  auto it = kNodes.find(n);
  return it == kNodes.end() ? nullptr : &it->second;
};

PodAffinityTerm term(const Labels& match, std::string key, std::vector<std::string> ns = {"default"}) {
  PodAffinityTerm t;
  t.selector = LabelSelector::equals_all(match);
  t.namespaces = std::move(ns);
  t.topology_key = std::move(key);
  return t;
}

const Labels kWeb{{"app", "web"}}, kDb{{"app", "db"}};

struct Placed {
  std::string ns, node;
  Labels labels;
  PodAffinityTerms terms;
  bool terminating = false;
};

// Which of n1..n4 take the pod (a letter per node: '.' fits, else the misfit's initial).
std::string verdicts(const Labels& labels, const PodAffinityTerms& terms, const std::vector<Placed>& placed,
                     std::string_view ns = "default") {
  std::vector<PlacedPod> views;
  for (const auto& p : placed) {
    views.push_back({p.ns, &p.labels, p.node, p.terminating, p.terms.empty() ? nullptr : &p.terms});
  }
  InterPodAffinity f(ns, labels, &terms, views, kNodeLabels);
  std::string out;
  for (const auto& [name, node] : kNodes) {
    auto m = f.misfit(node);
    out += !m                                             ? '.'
           : m->kind == MisfitKind::kPodAffinity          ? 'A'
           : m->kind == MisfitKind::kPodAntiAffinity      ? 'N'
           : m->kind == MisfitKind::kExistingAntiAffinity ? 'E'
                                                          : '?';
  }
  return out;
}

TEST(InterPodAffinity, RequiredTermsAsKubeSchedulerFiltersThem) {
  const Placed web_n1{"default", "n1", kWeb, {}};
  const Placed db_n3{"default", "n3", kDb, {}};
  PodAffinityTerms anti_host{{}, {term(kWeb, "kubernetes.io/hostname")}};
  PodAffinityTerms anti_zone{{}, {term(kWeb, "zone")}};
  PodAffinityTerms with_db{{term(kDb, "zone")}, {}};
  PodAffinityTerms anti_elsewhere{{}, {term(kWeb, "kubernetes.io/hostname", {"other"})}};
  PodAffinityTerms null_selector{{}, {term(kWeb, "kubernetes.io/hostname")}};
  null_selector.anti_affinity[0].selects_none = true;
  PodAffinityTerms both{{term(kDb, "zone"), term({{"tier", "back"}}, "zone")}, {}};
  struct Case {
    const char* name;
    Labels labels;
    PodAffinityTerms terms;
    std::vector<Placed> placed;
    const char* expect;          // n1 n2 n3 n4
    const char* ns = "default";  // the pod's
  };
  const Case cases[] = {
      {"no terms, nothing placed", kWeb, {}, {}, "...."},
      {"anti-affinity by host", kWeb, anti_host, {web_n1}, "N..."},
      {"anti-affinity by zone; a node without the key has no domain", kWeb, anti_zone, {web_n1}, "NN.."},
      {"anti-affinity counts its namespaces only", kWeb, anti_host, {{"other", "n1", kWeb, {}}}, "...."},
      {"a term naming another namespace counts it", kWeb, anti_elsewhere, {{"other", "n1", kWeb, {}}}, "N..."},
      {"a pod being deleted still counts", kWeb, anti_host, {{"default", "n1", kWeb, {}, true}}, "N..."},
      {"a term without a selector selects nothing", kWeb, null_selector, {web_n1}, "...."},
      {"affinity: the zone of a pod it selects", kWeb, with_db, {db_n3}, "AA.A"},
      {"affinity, first of its kind: it selects itself", kDb, with_db, {web_n1}, "...A"},
      {"affinity, none placed and it does not select itself", kWeb, with_db, {web_n1}, "AAAA"},
      {"affinity counts a pod matching every term",
       kWeb,
       both,
       {db_n3, {"default", "n1", {{"tier", "back"}}, {}}},
       "AAAA"},
      {"... and one that does", kWeb, both, {{"default", "n1", {{"app", "db"}, {"tier", "back"}}, {}}}, "..AA"},
      {"a placed pod's anti-affinity keeps it from that pod's host",
       kWeb,
       {},
       {{"default", "n2", kDb, anti_host}},
       ".E.."},
      {"... from its zone", kWeb, {}, {{"default", "n2", kDb, anti_zone}}, "EE.."},
      {"... only if it selects it", kDb, {}, {{"default", "n2", kDb, anti_zone}}, "...."},
      {"... in the placed pod's terms' namespaces", kWeb, {}, {{"default", "n2", kDb, anti_zone}}, "....", "other"},
  };
  for (const Case& c : cases) EXPECT_EQ(verdicts(c.labels, c.terms, c.placed, c.ns), c.expect) << c.name;
}

TEST(InterPodAffinity, NothingToWeighIsTrivial) {
  std::vector<PlacedPod> none;
  InterPodAffinity f("default", kWeb, nullptr, none, kNodeLabels);
  EXPECT_TRUE(f.trivial());
  PodAffinityTerms anti{{}, {term(kDb, "zone")}};
  Labels db = kDb;
  std::vector<PlacedPod> holder{{"default", &db, "n1", false, &anti}};
  EXPECT_TRUE(InterPodAffinity("default", kWeb, nullptr, holder, kNodeLabels).trivial());  // selects not it
  EXPECT_FALSE(InterPodAffinity("default", kDb, nullptr, holder, kNodeLabels).trivial());
}

}  // namespace
}  // namespace uvsched
