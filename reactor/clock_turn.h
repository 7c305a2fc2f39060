// Runs a callback once on a coming turn, however many times schedule() is
// called before then: NextTurn's promise for code that is given a Clock, not
// a loop (a zero-delay timer: on the loop, the next iteration's timers; under
// a ManualClock, the next advance(0)). So a component that drains its work
// "by the loop" can be driven by a test without sockets or a loop. (One
// scheduled from a timer's callback runs in the same pass over the timers on
// libuv before 1.48, and Debian 12 has 1.44: after the callback that
// scheduled it, but before any I/O.)
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "reactor/clock.h"

namespace uvsched {

class ClockTurn {
 public:
  ClockTurn(Clock& clock, std::function<void()> cb) : timer_(clock.new_timer()), cb_(std::move(cb)) {}
  void schedule() {
    if (!timer_->active()) timer_->start(0, cb_);
  }
  bool scheduled() const { return timer_->active(); }

 private:
  std::unique_ptr<Timer> timer_;
  std::function<void()> cb_;
};

}  // namespace uvsched
