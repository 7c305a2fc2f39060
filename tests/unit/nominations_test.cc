// Who holds the room a preemption made (policy/nominations.h).
#include "policy/nominations.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(NominationsTest, TheRoomIsReservedForTheNominatedPodAgainstPodsOfNoHigherPriority) {
  Nominations n;
  n.nominate("ns/high", "edge-1", 100, 5'000);
  n.nominate("ns/mid", "edge-1", 50, 6'000);
  struct Case {
    const char* name;
    std::string agent, pod;
    int32_t priority;
    bool reserved;
  } cases[] = {
      {"a pod of lower priority passes the agent over", "edge-1", "ns/low", 10, true},
      {"one of equal priority too (the nominated pod came first)", "edge-1", "ns/other", 100, true},
      {"one of higher priority does not", "edge-1", "ns/top", 101, false},
      {"the nominated pod itself: the other nominee is below it", "edge-1", "ns/high", 100, false},
      {"the lower nominee: the higher one holds the room", "edge-1", "ns/mid", 50, true},
      {"another agent is not reserved", "edge-2", "ns/low", 10, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(n.reserved_for_other(c.agent, c.pod, c.priority), c.reserved) << c.name;
  }
  EXPECT_EQ(n.pods_on("edge-1"), (std::vector<std::string>{"ns/high", "ns/mid"}));
  EXPECT_TRUE(n.pods_on("edge-2").empty());
}

TEST(NominationsTest, ANewNominationMovesThePodAndForgettingFreesTheAgent) {
  Nominations n;
  n.nominate("ns/high", "edge-1", 100, 5'000);
  n.nominate("ns/high", "edge-2", 100, 7'000);  // its preemption moved on
  ASSERT_NE(n.of("ns/high"), nullptr);
  EXPECT_EQ(n.of("ns/high")->agent, "edge-2");
  EXPECT_EQ(n.of("ns/high")->since_ms, 7'000u);
  EXPECT_FALSE(n.reserved_for_other("edge-1", "ns/low", 0));
  EXPECT_TRUE(n.reserved_for_other("edge-2", "ns/low", 0));
  n.hold_from("ns/high", 9'000);  // its victims just went
  EXPECT_EQ(n.of("ns/high")->since_ms, 9'000u);
  n.hold_from("ns/none", 9'000);  // not nominated: nothing
  EXPECT_EQ(n.of("ns/none"), nullptr);
  n.forget("ns/high");
  n.forget("ns/high");  // twice: nothing more
  EXPECT_TRUE(n.empty());
  EXPECT_FALSE(n.reserved_for_other("edge-2", "ns/low", 0));
  EXPECT_TRUE(n.pods_on("edge-2").empty());
}

}  // namespace
}  // namespace uvsched
