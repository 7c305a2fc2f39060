#include "policy/kept_out_pods.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "policy/label_sets.h"
#include "policy/pending_reason.h"
#include "policy/pod_task_registry.h"

namespace uvsched {
namespace {

PodAffinityTerm term(const Labels& match) {
  PodAffinityTerm t;
  t.selector = LabelSelector::equals_all(match);
  t.namespaces = {"default"};
  t.topology_key = "kubernetes.io/hostname";
  return t;
}

std::shared_ptr<const InterPodNeeds> anti(const Labels& match) {
  auto n = std::make_shared<InterPodNeeds>();
  n->terms.anti_affinity.push_back(term(match));
  return n;
}

std::shared_ptr<const InterPodNeeds> affinity(const Labels& match) {
  auto n = std::make_shared<InterPodNeeds>();
  n->terms.affinity.push_back(term(match));
  return n;
}

std::shared_ptr<const InterPodNeeds> spread(const Labels& match) {
  auto n = std::make_shared<InterPodNeeds>();
  SpreadConstraint c;
  c.selector = LabelSelector::equals_all(match);
  c.namespaces = {"default"};
  c.topology_key = "zone";
  n->spread.push_back(c);
  return n;
}

TEST(KeptOutPods, WhichChangesMayLetAPodIn) {
  const Labels web{{"app", "web"}}, db{{"app", "db"}};
  auto none = std::make_shared<InterPodNeeds>();
  auto null_selector = std::make_shared<InterPodNeeds>();
  {
    PodAffinityTerm t = term(web);
    t.selects_none = true;  // labelSelector null: selects nothing
    null_selector->terms.anti_affinity.push_back(t);
  }
  struct Case {
    const char* name;
    std::shared_ptr<const InterPodNeeds> waiting;
    Labels changed;
    bool counted;
    bool may;
  } cases[] = {
      {"anti-affinity: a pod it selects gone", anti(web), web, false, true},
      {"anti-affinity: a pod it selects placed", anti(web), web, true, false},
      {"anti-affinity: a pod it does not select gone", anti(web), db, false, false},
      {"affinity: a pod it selects placed", affinity(db), db, true, true},
      {"affinity: a pod it selects gone", affinity(db), db, false, false},
      {"affinity: another pod placed", affinity(db), web, true, false},
      {"spread: a pod it counts placed", spread(web), web, true, true},
      {"spread: a pod it counts gone", spread(web), web, false, true},
      {"spread: a pod it does not count", spread(web), db, false, false},
      {"no constraints of its own", none, web, false, false},
      {"none at all (kept out by a selector or taint)", nullptr, web, false, false},
      {"a null labelSelector selects nothing", null_selector, web, false, false},
  };
  for (const auto& c : cases) EXPECT_EQ(may_let_in(c.waiting.get(), c.changed, c.counted), c.may) << c.name;
}

TEST(KeptOutPods, TheStampMovesOnlyForAChangeThatMayLetOneIn) {
  LabelSets sets;
  const Labels web{{"app", "web"}}, db{{"app", "db"}};
  uint32_t w = sets.acquire(web), d = sets.acquire(db);
  KeptOutPods kept;
  kept.placed_changed(w, sets.born(w), web, false);
  EXPECT_EQ(kept.stamp(), 0u) << "with no pod kept out, nothing is weighed";

  uint64_t at = kept.add("default/web-4", anti(web), web);
  EXPECT_EQ(at, 0u);
  kept.placed_changed(w, sets.born(w), web, true);  // another web pod placed: no help
  kept.placed_changed(d, sets.born(d), db, false);  // a db pod gone: no help
  EXPECT_EQ(kept.stamp(), at);
  kept.placed_changed(w, sets.born(w), web, false);  // a web pod gone: it may fit now
  EXPECT_GT(kept.stamp(), at);

  at = kept.stamp();
  auto keeps_db_out = anti(db), keeps_web_out = anti(web);
  kept.placed_changed(d, sets.born(d), db, false, &keeps_db_out->terms);  // a pod whose anti-affinity selects db gone
  EXPECT_EQ(kept.stamp(), at) << "it kept no web pod out";
  kept.placed_changed(d, sets.born(d), db, false, &keeps_web_out->terms);  // one whose anti-affinity selects web
  EXPECT_GT(kept.stamp(), at) << "the web pods its anti-affinity kept out may fit now";

  at = kept.stamp();
  kept.nodes_changed();
  EXPECT_GT(kept.stamp(), at);

  // The verdict on a label set is kept by number, and not taken for the set
  // that reuses its number.
  kept.add("default/cache", affinity(Labels{{"app", "redis"}}), {});
  at = kept.stamp();
  kept.placed_changed(d, sets.born(d), db, true);
  EXPECT_EQ(kept.stamp(), at);
  sets.release(d);
  uint32_t redis = sets.acquire(Labels{{"app", "redis"}});
  ASSERT_EQ(redis, d);
  kept.placed_changed(redis, sets.born(redis), sets.get(redis), true);
  EXPECT_GT(kept.stamp(), at) << "the redis pod the cache waits to be near was placed";

  // A pod added later is weighed for a set judged before it came.
  kept.remove("default/cache");
  kept.remove("default/web-4");
  EXPECT_TRUE(kept.empty());
  kept.add("default/web-5", anti(web), web);
  kept.add("default/db-2", anti(db), db);
  at = kept.stamp();
  kept.placed_changed(w, sets.born(w), web, false);
  EXPECT_GT(kept.stamp(), at);
  at = kept.stamp();
  uint32_t d2 = sets.acquire(db);
  kept.placed_changed(d2, sets.born(d2), db, false);
  EXPECT_GT(kept.stamp(), at);
}

TEST(KeptOutPods, TheTaskRegistryTellsWhatItCounts) {
  PodTaskRegistry tasks;
  struct Told {
    std::string pod;
    Labels labels;
    bool counted;
  };
  std::vector<Told> told;
  tasks.observe_placed([&](std::string_view pod, uint32_t set, PodTaskRegistry::PlacedChange change) {
    told.push_back({std::string(pod), tasks.label_set(set), change == PodTaskRegistry::PlacedChange::kCounted});
  });
  const Labels web{{"app", "web"}}, db{{"app", "db"}};
  PodTask t;
  t.agent = tasks.intern_agent("a");
  tasks.add("default/one", t, &web);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_TRUE(told[0].counted);
  EXPECT_EQ(told[0].labels, web);

  tasks.add("default/one", *tasks.by_pod("default/one"));  // replaced where it was, as it was: nothing to tell
  EXPECT_EQ(told.size(), 1u);

  PodTask moved = t;
  moved.agent = tasks.intern_agent("b");
  tasks.add("default/one", moved);  // moved: gone from a, counted on b
  ASSERT_EQ(told.size(), 3u);
  EXPECT_FALSE(told[1].counted);
  EXPECT_TRUE(told[2].counted);

  tasks.add("default/one", moved, &db);  // relabelled
  ASSERT_EQ(told.size(), 5u);
  EXPECT_EQ(told[3].labels, web) << "told while its old set is still there";
  EXPECT_FALSE(told[3].counted);
  EXPECT_EQ(told[4].labels, db);

  tasks.mark_deleted("default/one", *tasks.by_pod("default/one"));  // a spread counts it no more
  ASSERT_EQ(told.size(), 6u);
  EXPECT_FALSE(told[5].counted);
  tasks.mark_deleted("default/one", *tasks.by_pod("default/one"));  // marked already: nothing
  EXPECT_EQ(told.size(), 6u);

  tasks.erase_pod("default/one");
  ASSERT_EQ(told.size(), 7u);
  EXPECT_EQ(told[6].pod, "default/one");
  EXPECT_EQ(told[6].labels, db);
  EXPECT_FALSE(told[6].counted);
  tasks.erase_pod("default/one");  // not there: nothing
  EXPECT_EQ(told.size(), 7u);
}

Offer offer(const std::string& agent, double cpus) {
  Offer o;
  o.id = agent + "-o";
  o.agent = agent;
  o.resources.cpus = cpus;
  o.resources.mem_mib = 1024;
  return o;
}

TEST(KeptOutPods, ThePendingReasonTellsWhichAgentsRefusedUntilSomethingChanges) {
  struct Case {
    const char* name;
    std::vector<std::pair<std::string, std::optional<MisfitKind>>> seen;
    std::vector<std::string> refused;
  } cases[] = {
      {"refused by inter-pod terms",
       {{"a", MisfitKind::kPodAntiAffinity}, {"b", MisfitKind::kTopologySpread}},
       {"a", "b"}},
      {"refused by a selector, a taint, a cordon and a placed pod's anti-affinity",
       {{"a", MisfitKind::kSelector},
        {"b", MisfitKind::kTaint},
        {"c", MisfitKind::kUnschedulable},
        {"d", MisfitKind::kExistingAntiAffinity}},
       {"a", "b", "c", "d"}},
      {"short of cpu, memory or ports, or not connected: an offer could help",
       {{"a", MisfitKind::kCpu},
        {"b", MisfitKind::kMemory},
        {"c", MisfitKind::kPorts},
        {"d", std::nullopt},
        {"e", MisfitKind::kPodAffinity}},
       {"e"}},
      // An agent is counted by its first offer. Its verdict on inter-pod
      // terms is the same for each of its offers, so this errs only towards
      // waking the pod for nothing.
      {"two offers of one agent", {{"a", MisfitKind::kCpu}, {"a", MisfitKind::kPodAntiAffinity}}, {}},
  };
  for (const auto& c : cases) {
    PendingReason r;
    std::vector<Offer> offers;  // the reason keeps views of the agents' names
    offers.reserve(c.seen.size());
    for (const auto& [agent, misfit] : c.seen) {
      offers.push_back(offer(agent, 1));
      r.saw(offers.back(), misfit);
    }
    std::vector<std::string> got(r.refused_until_change().begin(), r.refused_until_change().end());
    EXPECT_EQ(got, c.refused) << c.name;
  }
}

TEST(KeptOutPods, AgentBitsCountEachAgentOnce) {
  AgentBits bits;
  EXPECT_TRUE(bits.empty());
  EXPECT_FALSE(bits.has(0));
  EXPECT_FALSE(bits.has(1000)) << "beyond its words";
  bits.add(3);
  bits.add(3);
  bits.add(64);
  bits.add(4999);
  EXPECT_EQ(bits.count(), 3u);
  EXPECT_TRUE(bits.has(3));
  EXPECT_TRUE(bits.has(64));
  EXPECT_TRUE(bits.has(4999));
  EXPECT_FALSE(bits.has(4));
  EXPECT_FALSE(bits.has(63));
  bits.clear();
  EXPECT_FALSE(bits.has(3));
  EXPECT_EQ(bits.count(), 0u);
}

}  // namespace
}  // namespace uvsched
