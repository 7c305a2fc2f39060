#include "reactor/manual_clock.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace uvsched {
namespace {

TEST(ManualClock, FiresDueTimersInDueOrderAtTheirDueTime) {
  ManualClock clock(0);
  std::vector<std::string> fired;
  auto a = clock.new_timer();
  auto b = clock.new_timer();
  auto c = clock.new_timer();
  a->start(300, [&] { fired.push_back("a@" + std::to_string(clock.now_ms())); });
  b->start(100, [&] { fired.push_back("b@" + std::to_string(clock.now_ms())); });
  c->start(100, [&] { fired.push_back("c@" + std::to_string(clock.now_ms())); });
  clock.advance(99);
  EXPECT_TRUE(fired.empty());
  clock.advance(1);
  EXPECT_EQ(fired, (std::vector<std::string>{"b@100", "c@100"}));
  clock.advance(1000);
  EXPECT_EQ(fired.back(), "a@300");
  EXPECT_EQ(clock.now_ms(), 1100u);
}

TEST(ManualClock, StopRestartAndDestroyCancel) {
  ManualClock clock(0);
  int fired = 0;
  auto t = clock.new_timer();
  t->start(10, [&] { ++fired; });
  t->stop();
  clock.advance(20);
  EXPECT_EQ(fired, 0);
  t->start(10, [&] { ++fired; });
  t->start(50, [&] { fired += 10; });  // restart replaces
  clock.advance(20);
  EXPECT_EQ(fired, 0);
  clock.advance(40);
  EXPECT_EQ(fired, 10);
  t->start(5, [&] { ++fired; });
  t.reset();
  clock.advance(10);
  EXPECT_EQ(fired, 10);
  EXPECT_EQ(clock.pending_timers(), 0u);
}

TEST(ManualClock, ACallbackMayRearmItsOwnTimer) {
  ManualClock clock(0);
  auto t = clock.new_timer();
  int ticks = 0;
  std::function<void()> tick = [&] {
    ++ticks;
    t->start(10, tick);
  };
  t->start(10, tick);
  clock.advance(55);
  EXPECT_EQ(ticks, 5);
  EXPECT_TRUE(t->active());
}

}  // namespace
}  // namespace uvsched
