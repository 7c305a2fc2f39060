// The embedded store's in-memory state: the watch history is bounded by count
// and by bytes, and a watch from before what is kept is told so.
#include "storage/kv_state.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(KvStateHistory, KeepsTheNewestEventsWithinItsByteBudget) {
  KvState state(/*history_limit=*/100, /*history_byte_limit=*/4'000);
  const std::string big(1'000, 'v');
  int64_t first = 0;
  for (int i = 0; i < 10; ++i) {
    auto a = state.put("/k/" + std::to_string(i), big, 0);
    ASSERT_TRUE(a.status.ok());
    if (i == 0) first = a.revision;
  }
  EXPECT_FALSE(state.history("/k/", first).has_value()) << "10 KB of events cannot fit in 4 KB";
  auto recent = state.history("/k/", state.revision() - 2);
  ASSERT_TRUE(recent.has_value());
  EXPECT_EQ(recent->size(), 3u);
  EXPECT_EQ(recent->back().kv.key, "/k/9");
}

TEST(KvStateHistory, SmallEventsAreBoundByCount) {
  KvState state(/*history_limit=*/5, /*history_byte_limit=*/1 << 20);
  int64_t first = state.put("/s/0", "x", 0).revision;
  for (int i = 1; i < 8; ++i) state.put("/s/" + std::to_string(i), "x", 0);
  EXPECT_FALSE(state.history("/s/", first).has_value());
  auto kept = state.history("/s/", state.revision() - 4);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->size(), 5u);
}

TEST(KvStateHistory, AnUpdateCountsItsPreviousValueToo) {
  KvState state(100, 4'500);
  int64_t first = state.put("/u", std::string(900, 'a'), 0).revision;
  state.put("/u", std::string(900, 'b'), 0);  // event carries 900 B value + 900 B prev
  auto both = state.history("/u", first);
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->size(), 2u);
  state.put("/u", std::string(900, 'c'), 0);  // now over 4.5 KB: the oldest goes
  EXPECT_FALSE(state.history("/u", first).has_value());
}

}  // namespace
}  // namespace uvsched
