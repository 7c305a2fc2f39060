// Time for everything above the reactor comes from a Clock, so timers can be
// driven by hand in tests (ManualClock) and by the libuv loop in the daemon.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace uvsched {

// A one-shot timer. start() re-arms it; destroying it cancels it. The callback
// may destroy or re-arm the timer that is firing.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start(uint64_t delay_ms, std::function<void()> cb) = 0;
  virtual void stop() = 0;
  virtual bool active() const = 0;
};

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic milliseconds: for deadlines and durations.
  virtual uint64_t now_ms() const = 0;
  // Wall-clock milliseconds since the Unix epoch: for timestamps shown to users.
  virtual int64_t unix_ms() const = 0;
  virtual std::unique_ptr<Timer> new_timer() = 0;
};

}  // namespace uvsched
