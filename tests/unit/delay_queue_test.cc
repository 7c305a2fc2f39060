#include "policy/delay_queue.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(PodBackoff, OneSecondDoublingToSixtyThenForgotten) {
  PodBackoff b;
  std::vector<uint64_t> delays;
  uint64_t now = 0;
  for (int i = 0; i < 9; ++i) {
    delays.push_back(b.next_delay("p", now));
    now += delays.back();
  }
  EXPECT_EQ(delays, (std::vector<uint64_t>{1'000, 2'000, 4'000, 8'000, 16'000, 32'000, 60'000, 60'000, 60'000}));
  EXPECT_EQ(b.next_delay("other", now), 1'000u);        // per pod
  EXPECT_EQ(b.next_delay("p", now + 200'000), 1'000u);  // idle long enough: starts over
  b.gc(now + 1'000'000);
  EXPECT_EQ(b.size(), 0u);
}

TEST(DelayQueue, PopsInDueOrderKeepingOrReplacingPlaces) {
  DelayQueue q;
  q.add("b", 200);
  q.add("a", 100);
  q.add("c", 200);
  q.add("a", 500);  // KeepExisting: an updated pod keeps its place
  EXPECT_EQ(q.next_due(), 100u);
  EXPECT_TRUE(q.pop_due(99).empty());
  EXPECT_EQ(q.pop_due(100), std::vector<std::string>{"a"});
  q.add("b", 1'000, DelayQueue::Mode::kReplaceExisting);
  EXPECT_EQ(q.pop_due(300), std::vector<std::string>{"c"});
  EXPECT_TRUE(q.breakout("b", 400));  // an offer arrived that may fit
  EXPECT_FALSE(q.breakout("nobody", 400));
  EXPECT_EQ(q.pop_due(400), std::vector<std::string>{"b"});
  q.add("d", 10);
  EXPECT_TRUE(q.remove("d"));
  EXPECT_EQ(q.size(), 0u);
  EXPECT_FALSE(q.next_due());
}

}  // namespace
}  // namespace uvsched

namespace uvsched {
namespace {

TEST(DelayQueue, ListsPodsInTheOrderTheyWillBeTried) {
  DelayQueue q;
  q.add("b", 200);
  q.add("a", 300);
  q.add("c", 200);  // due with b: after it (FIFO among equals)
  using Entry = std::pair<std::string, uint64_t>;
  EXPECT_EQ(q.in_order(10), (std::vector<Entry>{{"b", 200}, {"c", 200}, {"a", 300}}));
  EXPECT_EQ(q.in_order(2), (std::vector<Entry>{{"b", 200}, {"c", 200}}));
  q.breakout("a", 100);
  EXPECT_EQ(q.in_order(1), (std::vector<Entry>{{"a", 100}}));
}

TEST(DelayQueue, SaysAPodsPlaceInThatOrderUpToALimit) {
  DelayQueue q;
  q.add("b", 200);
  q.add("a", 300);
  q.add("c", 200);
  EXPECT_EQ(q.position("b", 10), 1u);
  EXPECT_EQ(q.position("c", 10), 2u);
  EXPECT_EQ(q.position("a", 10), 3u);
  EXPECT_EQ(q.position("a", 2), std::nullopt);  // more than 2 before it: the walk stops
  EXPECT_EQ(q.position("a", 3), 3u);
  EXPECT_EQ(q.position("z", 10), std::nullopt);  // not queued
  q.breakout("a", 100);
  EXPECT_EQ(q.position("a", 10), 1u);
  EXPECT_EQ(q.position("b", 10), 2u);
  q.remove("b");
  EXPECT_EQ(q.position("c", 10), 2u);
  EXPECT_EQ(q.position("b", 10), std::nullopt);
}

}  // namespace
}  // namespace uvsched
