// A clock that moves only when told to: advance() fires every timer that falls
// due, in due order, with now_ms() set to each timer's due time as it fires.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "reactor/clock.h"

namespace uvsched {

class ManualClock final : public Clock {
 public:
  explicit ManualClock(uint64_t start_ms = 1'000'000, int64_t unix_start_ms = 1'767'225'600'000)
      : now_(start_ms), unix_offset_(unix_start_ms - static_cast<int64_t>(start_ms)) {}

  uint64_t now_ms() const override { return now_; }
  int64_t unix_ms() const override { return static_cast<int64_t>(now_) + unix_offset_; }
  std::unique_ptr<Timer> new_timer() override;

  // Moves time forward by delta_ms, firing due timers on the way.
  void advance(uint64_t delta_ms);
  size_t pending_timers() const { return due_.size(); }

 private:
  class ManualTimer;
  using Key = std::pair<uint64_t, uint64_t>;  // (due, sequence): FIFO among equals

  uint64_t now_;
  int64_t unix_offset_;
  uint64_t seq_ = 0;
  std::map<Key, ManualTimer*> due_;
};

}  // namespace uvsched
