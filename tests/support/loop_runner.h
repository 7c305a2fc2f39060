// Runs a loop the test owns until a condition holds, bounded by a deadline
// on the loop's own timer: a test waits for the event, never sleeps for it.
#pragma once

#include <uv.h>

#include <functional>

namespace uvsched::test {

// True when `done` became true before `timeout_ms` passed.
inline bool run_until(uv_loop_t* loop, const std::function<bool()>& done, uint64_t timeout_ms = 10'000) {
  uv_timer_t watchdog;
  bool expired = false;
  uv_timer_init(loop, &watchdog);
  watchdog.data = &expired;
  uv_timer_start(
      &watchdog, [](uv_timer_t* t) { *static_cast<bool*>(t->data) = true; }, timeout_ms, 0);
  while (!done() && !expired) uv_run(loop, UV_RUN_ONCE);
  uv_close(reinterpret_cast<uv_handle_t*>(&watchdog), nullptr);
  uv_run(loop, UV_RUN_NOWAIT);
  return done();
}

}  // namespace uvsched::test
