// The daemon's clock: uv_now() of the loop and uv_timer_t timers.
#pragma once

#include <uv.h>

#include "reactor/clock.h"

namespace uvsched {

class LoopClock final : public Clock {
 public:
  explicit LoopClock(uv_loop_t* loop) : loop_(loop) {}
  uint64_t now_ms() const override;
  int64_t unix_ms() const override;
  std::unique_ptr<Timer> new_timer() override;

 private:
  uv_loop_t* loop_;
};

}  // namespace uvsched
