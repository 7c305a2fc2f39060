// Why a pod waits, in kube-scheduler's words: agents counted once each, by
// reason, sorted as kube-scheduler sorts them, with what the pod asks and the
// largest free offer.
#include "policy/pending_reason.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

Offer offer(std::string agent, double cpus, double mem) { return Offer{agent + "-o", agent, Resources{cpus, mem, {}}}; }

TEST(PendingReasonTest, CountsAgentsByReasonInKubeSchedulersWords) {
  struct Seen {
    Offer offer;
    std::optional<MisfitKind> kind;
  };
  struct Case {
    const char* name;
    std::vector<Seen> seen;
    size_t agents;
    PodNeeds pod;
    std::string want;
  } cases[] = {
      {"nobody has subscribed",
       {},
       0,
       {6, 1024, {}, "", {}},
       "0/0 nodes are available: no agent has subscribed. pod requests cpu 6, memory 1024Mi; there are no free "
       "offers."},
      {"agents without offers",
       {},
       3,
       {0.5, 64, {}, "", {}},
       "0/3 nodes are available: 3 node(s) had no free offer. pod requests cpu 0.5, memory 64Mi; there are no free "
       "offers."},
      {"cpu and selector, counted per agent, sorted by reason",
       {{offer("sim-1", 4, 7168), MisfitKind::kCpu},
        {offer("sim-1", 1, 512), MisfitKind::kCpu},  // a second offer of sim-1: counted once
        {offer("sim-2", 2, 2048), MisfitKind::kCpu},
        {offer("sim-3", 8, 4096), MisfitKind::kSelector},
        {offer("sim-4", 8, 9000), std::nullopt}},
       5,
       {6, 1024, {}, "", {{"gpu", "yes"}}},
       "0/5 nodes are available: 2 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) "
       "had no free offer, 1 node(s) were not connected. pod requests cpu 6, memory 1024Mi; the largest free offer is "
       "cpu 8, memory 9000Mi on sim-4."},
      {"memory and ports",
       {{offer("a", 2, 100), MisfitKind::kMemory}, {offer("b", 2, 4096), MisfitKind::kPorts}},
       2,
       {1.25, 256, {80}, "", {}},
       "0/2 nodes are available: 1 Insufficient memory, 1 node(s) didn't have free ports for the requested pod ports. "
       "pod requests cpu 1.25, memory 256Mi; the largest free offer is cpu 2, memory 4096Mi on b."},
  };
  for (const auto& c : cases) {
    PendingReason r;
    for (const auto& s : c.seen) r.saw(s.offer, s.kind);
    EXPECT_EQ(r.offers(), c.seen.size()) << c.name;
    EXPECT_EQ(r.message(c.pod, c.agents), c.want) << c.name;
  }
}

}  // namespace
}  // namespace uvsched
