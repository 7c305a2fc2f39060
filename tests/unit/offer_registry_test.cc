#include "policy/offer_registry.h"

#include <gtest/gtest.h>

#include "tests/support/offers.h"

namespace uvsched {
namespace {

std::vector<std::string> ids(const std::vector<OfferRegistry::Declined>& declined) {
  std::vector<std::string> out;
  for (const auto& d : declined) out.push_back(d.id);
  return out;
}

using test::offer;

const auto kAny = [](const Offer&) { return true; };

class OfferRegistryTest : public ::testing::Test {
 protected:
  OfferRegistry reg{{.ttl_ms = 5'000, .linger_ms = 120'000}};
};

TEST_F(OfferRegistryTest, WalksInArrivalOrderAndOneClaimantAtATime) {
  ASSERT_TRUE(reg.add(offer("o1", "a", 1, 512), 0));
  ASSERT_TRUE(reg.add(offer("o2", "b", 4, 4096), 0));
  EXPECT_FALSE(reg.add(offer("o1", "a", 1, 512), 0));  // ids are unique
  const Offer* first = reg.acquire_first(kAny, "pod-1", 10);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->id, "o1");
  const Offer* second = reg.acquire_first(kAny, "pod-2", 10);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->id, "o2");
  EXPECT_EQ(reg.acquire_first(kAny, "pod-3", 10), nullptr);
  EXPECT_EQ(reg.held_by("pod-1")->id, "o1");
  reg.release("o1", 20);
  EXPECT_EQ(reg.acquire_first(kAny, "pod-3", 30)->id, "o1");
}

// find_first answers what acquire_first would claim, and claims nothing.
TEST_F(OfferRegistryTest, FindFirstLooksWithoutClaiming) {
  const auto big = [](const Offer& o) { return o.resources.cpus >= 4; };
  reg.add(offer("o1", "a", 1, 512), 0);
  reg.add(offer("o2", "b", 4, 4096), 0);
  reg.add(offer("o3", "c", 8, 4096), 0);
  ASSERT_NE(reg.find_first(big, 10), nullptr);
  EXPECT_EQ(reg.find_first(big, 10)->id, "o2");
  EXPECT_EQ(reg.held_by("anyone"), nullptr);
  EXPECT_EQ(reg.state("o2"), OfferRegistry::State::kLive);
  EXPECT_EQ(reg.acquire_first(big, "p", 10)->id, "o2");  // still there to claim
  EXPECT_EQ(reg.find_first(big, 10)->id, "o3");          // a claimed one is passed over
  EXPECT_EQ(reg.find_first(big, 5'000), nullptr);        // as is an expired one, before tick()
  EXPECT_EQ(reg.find_first([](const Offer&) { return false; }, 10), nullptr);
}

TEST_F(OfferRegistryTest, UnclaimedOffersAreDeclinedAtExpiryThenPurged) {
  reg.add(offer("o1", "a", 1, 512), 0);
  EXPECT_TRUE(reg.tick(4'999).empty());
  auto declined = reg.tick(5'000);
  EXPECT_EQ(ids(declined), std::vector<std::string>{"o1"});
  EXPECT_EQ(declined[0].agent, "a");  // the agent to tell
  EXPECT_EQ(reg.state("o1"), OfferRegistry::State::kExpired);
  EXPECT_EQ(reg.acquire_first(kAny, "p", 5'001), nullptr);
  EXPECT_TRUE(reg.tick(124'999).empty());
  EXPECT_EQ(reg.size(), 1u);  // lingering
  reg.tick(125'000);
  EXPECT_EQ(reg.size(), 0u);  // purged
}

// Agents re-offer every few seconds, so lingering ids far outnumber live
// offers: they keep their ids taken, are not listed, and leave on time.
TEST_F(OfferRegistryTest, LingeringOffersKeepOnlyTheirIdUntilPurged) {
  reg.add(offer("gone", "a", 1, 512), 0);
  reg.add(offer("held", "a", 1, 512), 0);
  reg.rescind("gone", 10);  // declined at once, then lingers
  EXPECT_EQ(ids(reg.tick(10)), std::vector<std::string>{"gone"});
  EXPECT_EQ(reg.state("gone"), OfferRegistry::State::kExpired);
  EXPECT_FALSE(reg.add(offer("gone", "a", 1, 512), 20));  // its id is still taken
  auto listed = reg.all();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].first->id, "held");
  EXPECT_EQ(reg.size(), 2u);
  EXPECT_EQ(reg.next_deadline(), 5'000u);  // "held" expires before "gone" is purged
  reg.tick(5'000);
  EXPECT_EQ(reg.next_deadline(), 120'010u);
  reg.tick(120'010);
  EXPECT_FALSE(reg.state("gone").has_value());
  EXPECT_TRUE(reg.add(offer("gone", "a", 1, 512), 120'011));  // purged: the id is free again
}

// An offer consumed by a launch takes its deadline with it: the index holds
// one item per offer still there, not the expiry of every offer used in the
// last TTL (100k pods placed in seconds left tens of thousands, megabytes).
TEST_F(OfferRegistryTest, AConsumedOfferLeavesNoDeadlineBehind) {
  for (int i = 0; i < 100; ++i) {
    std::string id = "o" + std::to_string(i);
    ASSERT_TRUE(reg.add(offer(id, "a", 1, 512), i));
    ASSERT_NE(reg.acquire_first(kAny, "p" + std::to_string(i), i), nullptr);
    reg.consume(id);
  }
  EXPECT_EQ(reg.size(), 0u);
  EXPECT_FALSE(reg.next_deadline().has_value());
  reg.add(offer("live", "a", 1, 512), 200);
  EXPECT_EQ(reg.next_deadline(), 5'200u);
  // A claim moves its deadline without indexing it: the item popped is filed again, not lost.
  reg.acquire_first(kAny, "q", 300);
  reg.tick(5'200);
  reg.release("live", 5'300);  // out of time while held: declined two TTLs on, then lingers
  EXPECT_EQ(reg.next_deadline(), 15'300u);
}

TEST_F(OfferRegistryTest, AReleasedOfferIsDeclinedTwoTtlsAfterRelease) {
  reg.add(offer("o1", "a", 1, 512), 0);
  reg.acquire_first(kAny, "p", 100);
  EXPECT_TRUE(reg.tick(6'000).empty());  // held past its ttl: not declined while claimed
  reg.release("o1", 7'000);
  EXPECT_TRUE(reg.tick(16'999).empty());
  EXPECT_EQ(ids(reg.tick(17'000)), std::vector<std::string>{"o1"});
}

TEST_F(OfferRegistryTest, AReleasedLiveOfferKeepsItsDeferredDecline) {
  reg.add(offer("o1", "a", 1, 512), 0);
  reg.acquire_first(kAny, "p", 100);
  reg.release("o1", 1'000);              // back to live, decline due at 11'000
  EXPECT_TRUE(reg.tick(5'000).empty());  // its ttl passes: still waiting for the deferred decline
  EXPECT_EQ(ids(reg.tick(11'000)), std::vector<std::string>{"o1"});
}

TEST_F(OfferRegistryTest, ConsumedOffersAreNeverDeclined) {
  reg.add(offer("o1", "a", 1, 512), 0);
  reg.acquire_first(kAny, "p", 0);
  reg.consume("o1");
  EXPECT_TRUE(reg.tick(1'000'000).empty());
  EXPECT_EQ(reg.size(), 0u);
  EXPECT_EQ(reg.held_by("p"), nullptr);
}

TEST_F(OfferRegistryTest, RescindDeclinesUnclaimedAndExpiresHeld) {
  reg.add(offer("o1", "a", 1, 512), 0);
  reg.add(offer("o2", "a", 1, 512), 0);
  reg.rescind("o1", 10);
  EXPECT_EQ(ids(reg.tick(10)), std::vector<std::string>{"o1"});
  reg.acquire_first(kAny, "p", 20);
  reg.rescind("o2", 30);
  reg.release("o2", 40);
  EXPECT_EQ(reg.state("o2"), OfferRegistry::State::kExpired);
  EXPECT_EQ(reg.acquire_first(kAny, "q", 50), nullptr);
  EXPECT_EQ(ids(reg.tick(10'040)), std::vector<std::string>{"o2"});
}

TEST_F(OfferRegistryTest, InvalidateExpiresWithoutDeclining) {
  reg.add(offer("o1", "a", 1, 512), 0);
  reg.add(offer("o2", "b", 1, 512), 0);
  reg.add(offer("o3", "b", 1, 512), 0);
  reg.acquire_first([](const Offer& o) { return o.id == "o3"; }, "p", 0);
  reg.invalidate_agent("b", 10);
  EXPECT_EQ(reg.live_count(), 1u);
  EXPECT_EQ(reg.held_by("p"), nullptr);
  reg.invalidate("o1", 10);
  EXPECT_EQ(reg.live_count(), 0u);
  EXPECT_TRUE(reg.tick(1'000'000).empty());
  reg.add(offer("o4", "c", 1, 512), 2'000'000);
  reg.invalidate_all(2'000'001);
  EXPECT_TRUE(reg.tick(2'000'002).empty());
}

TEST_F(OfferRegistryTest, ListenersWakeWhenAFittingOfferArrives) {
  reg.listen("big-pod", [](const Offer& o) { return o.resources.cpus >= 8; });
  reg.listen("small-pod", [](const Offer& o) { return o.resources.cpus >= 1; });
  reg.listen("small-pod-2", [](const Offer& o) { return o.resources.cpus >= 1; });
  reg.add(offer("o1", "a", 2, 512), 0);
  // One offer, one pod: the longest-waiting one it fits, not the whole herd.
  EXPECT_EQ(reg.wake("o1"), std::vector<std::string>{"small-pod"});
  reg.add(offer("o1b", "a", 2, 512), 0);
  EXPECT_EQ(reg.wake("o1b"), std::vector<std::string>{"small-pod-2"});
  EXPECT_TRUE(reg.wake("o1").empty());  // nobody left that it fits
  reg.add(offer("o2", "b", 16, 512), 0);
  EXPECT_EQ(reg.wake("o2"), std::vector<std::string>{"big-pod"});
  reg.listen("gone", kAny);
  reg.unlisten("gone");
  reg.add(offer("o3", "c", 1, 1), 0);
  EXPECT_TRUE(reg.wake("o3").empty());
}

TEST_F(OfferRegistryTest, FreeTotalCountsLiveUnclaimedOffers) {
  reg.add(offer("o1", "a", 2, 1024), 0);
  reg.add(offer("o2", "b", 3, 2048), 0);
  reg.acquire_first([](const Offer& o) { return o.id == "o2"; }, "p", 0);
  EXPECT_EQ(reg.free_total().cpus, 2);
  EXPECT_EQ(reg.free_total().mem_mib, 1024);
  EXPECT_EQ(*reg.next_deadline(), 5'000u);
  reg.add(offer("o3", "c", 4, 512), 0);
  EXPECT_EQ(reg.free_total().cpus, 6);
  EXPECT_EQ(reg.free_total([](const Offer& o) { return o.agent != "c"; }).cpus, 2);  // c is cordoned
}

// Asked again before a launch: the claim still holds only while the offer is
// neither rescinded, nor invalidated with its agent, nor past its ttl.
TEST_F(OfferRegistryTest, AClaimStillHoldsOnlyWhileTheOfferPromisesItsResources) {
  reg.add(offer("o1", "a", 1, 512), 0);
  reg.add(offer("o2", "a", 1, 512), 0);
  reg.add(offer("o3", "b", 1, 512), 0);
  ASSERT_EQ(reg.acquire_first([](const Offer& o) { return o.id == "o1"; }, "p1", 10)->id, "o1");
  ASSERT_EQ(reg.acquire_first([](const Offer& o) { return o.id == "o2"; }, "p2", 10)->id, "o2");
  ASSERT_EQ(reg.acquire_first([](const Offer& o) { return o.id == "o3"; }, "p3", 10)->id, "o3");
  EXPECT_TRUE(reg.still_held("o1", "p1", 20));
  EXPECT_FALSE(reg.still_held("o1", "p2", 20));     // another's claim
  EXPECT_FALSE(reg.still_held("o1", "p1", 5'000));  // past its ttl
  reg.rescind("o2", 30);
  EXPECT_FALSE(reg.still_held("o2", "p2", 40));
  EXPECT_TRUE(reg.rescinded("o2"));
  EXPECT_FALSE(reg.rescinded("o1"));
  reg.invalidate_agent("b", 30);
  EXPECT_FALSE(reg.still_held("o3", "p3", 40));
  EXPECT_FALSE(reg.still_held("nope", "p1", 40));
}

}  // namespace
}  // namespace uvsched
