#include "policy/reconciler.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(Reconciler, ExplicitReAsksWithBackoffUntilEveryTaskReported) {
  Reconciler r({});
  r.request_explicit("edge-1", {"a", "b"}, 0);
  EXPECT_EQ(r.due(0).tasks, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r.due(999).empty());
  r.reported("a");
  EXPECT_EQ(r.due(1'000).tasks, (std::vector<std::string>{"b"}));
  EXPECT_TRUE(r.due(2'999).empty());  // the next ask is 2 s later
  EXPECT_EQ(r.due(3'000).tasks, (std::vector<std::string>{"b"}));
  uint64_t now = 3'000, last_gap = 0;
  for (int i = 0; i < 12; ++i) {
    uint64_t next = *r.next_deadline();
    last_gap = next - now;
    now = next;
    r.due(now);
  }
  EXPECT_EQ(last_gap, 120'000u);  // capped
  r.reported("b");
  EXPECT_FALSE(r.next_deadline());
}

TEST(Reconciler, ANewRequestCancelsTheOneInProgressOfItsScope) {
  Reconciler r({});
  r.request_explicit("edge-1", {"old"}, 0);
  r.request_explicit("edge-2", {"other"}, 0);
  r.due(0);
  r.request_explicit("edge-1", {"new"}, 500);
  EXPECT_EQ(r.due(500).tasks, (std::vector<std::string>{"new", "other"}));  // edge-2's request stands
  EXPECT_EQ(r.outstanding(), 2u);
  r.request_explicit("edge-2", {}, 600);  // an agent with no tasks left: nothing to ask it
  EXPECT_EQ(r.outstanding(), 1u);
  r.reported("new");
  EXPECT_EQ(r.outstanding(), 0u);
  EXPECT_FALSE(r.next_deadline());
}

TEST(Reconciler, ATaskAskedAboutAgainMovesToTheNewScope) {
  Reconciler r({});
  r.request_explicit("edge-1", {"t"}, 0);
  r.request_explicit("edge-2", {"t"}, 10);  // the task's agent changed
  r.request_explicit("edge-1", {}, 20);     // cancelling edge-1's request keeps it asked about
  EXPECT_EQ(r.due(20).tasks, (std::vector<std::string>{"t"}));
}

TEST(Reconciler, ImplicitFifteenSecondsAfterStartThenEveryInterval) {
  Reconciler r({.implicit_interval_ms = 300'000});
  r.start(1'000);
  EXPECT_FALSE(r.due(15'999).implicit);
  EXPECT_TRUE(r.due(16'000).implicit);
  EXPECT_FALSE(r.due(300'000).implicit);
  EXPECT_TRUE(r.due(316'000).implicit);
  // A shorter interval than 15 s: the first pass comes after one interval.
  Reconciler quick({.implicit_interval_ms = 1'000});
  quick.start(0);
  EXPECT_FALSE(quick.due(999).implicit);
  EXPECT_TRUE(quick.due(1'000).implicit);
  EXPECT_TRUE(quick.due(2'000).implicit);
  // --reconcile-interval 0 means none at all, not one pass 15 s after start.
  Reconciler none({.implicit_interval_ms = 0});
  none.start(0);
  EXPECT_FALSE(none.next_deadline());
  EXPECT_FALSE(none.due(15'000).implicit);
  EXPECT_FALSE(none.due(10'000'000).implicit);
  // Explicit requests still go out.
  none.request_explicit("edge-1", {"t1"}, 20'000);
  EXPECT_EQ(none.next_deadline(), std::optional<uint64_t>(20'000));
  EXPECT_EQ(none.due(20'000).tasks, std::vector<std::string>{"t1"});
}

}  // namespace
}  // namespace uvsched
