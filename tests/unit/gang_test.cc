// All-or-nothing pod groups: the order members are tried in, when a group
// goes, its phase, and what its waiting members say.
#include "policy/gang.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(GangTest, TriesTheLargestMembersFirst) {
  EXPECT_EQ(gang_try_order({{1, 64}, {4, 64}, {1, 512}, {4, 64}}), (std::vector<size_t>{1, 3, 2, 0}));
  EXPECT_TRUE(gang_try_order({}).empty());
}

TEST(GangTest, GoesOnlyWhenMinMemberFitAtOnce) {
  struct Case {
    const char* name;
    int64_t min;
    size_t placed, fit;
    bool place;
    size_t needed;
  } cases[] = {
      {"3 of 4 fit: none goes", 4, 0, 3, false, 4},
      {"4 of 4 fit: all go", 4, 0, 4, true, 4},
      {"more than the minimum fit: all go", 2, 0, 5, true, 2},
      {"2 placed, 2 more fit", 4, 2, 2, true, 2},
      {"2 placed, 1 more fits", 4, 2, 1, false, 2},
      {"quorum placed: a straggler goes alone", 4, 4, 1, true, 0},
      {"quorum placed, nothing fits", 4, 4, 0, false, 0},
      {"nothing fits", 1, 0, 0, false, 1},
      {"minMember 0 is taken as 1", 0, 0, 1, true, 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    GangVerdict v = judge_gang(c.min, c.placed, c.fit);
    EXPECT_EQ(v.place, c.place);
    EXPECT_EQ(v.needed, c.needed);
  }
}

TEST(GangTest, PhaseFollowsTheCoschedulingPlugin) {
  struct Case {
    const char* name;
    GangCounts c;
    const char* phase;
  } cases[] = {
      {"nothing placed", {4, 4, 0, 0, 0, 0, false}, "Pending"},
      {"some placed", {4, 4, 3, 0, 0, 0, false}, "Pending"},
      {"all bound", {4, 4, 4, 0, 0, 0, false}, "Scheduled"},
      {"all running", {4, 4, 4, 4, 0, 0, false}, "Running"},
      {"done", {4, 0, 0, 0, 4, 0, false}, "Finished"},
      {"timed out", {4, 4, 0, 0, 0, 0, true}, "Failed"},
      {"timed out, then placed", {4, 4, 4, 4, 0, 0, true}, "Running"},
      {"one failed, too few left", {4, 3, 3, 3, 0, 1, false}, "Failed"},
      {"one failed, still enough running", {2, 3, 3, 3, 0, 1, false}, "Running"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(gang_phase(c.c), c.phase);
  }
}

TEST(GangTest, WaitingMessageCountsWhatFits) {
  EXPECT_EQ(gang_waiting_message("default/g", 4, 0, 3, "0/3 nodes are available: 3 node(s) had no free offer.", 0),
            "pod group default/g: 3 of its 4 members needed (minMember 4) fit now; 0/3 nodes are available: 3 node(s) "
            "had no free offer.");
  EXPECT_EQ(gang_waiting_message("ml/g", 4, 2, 1, "", 90),
            "pod group ml/g: timed out after 90s; 3 of its 4 members needed (minMember 4) fit now (2 already placed)");
}

}  // namespace
}  // namespace uvsched
