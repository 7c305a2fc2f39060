#include "reactor/manual_clock.h"

#include <functional>

namespace uvsched {

class ManualClock::ManualTimer final : public Timer {
 public:
  explicit ManualTimer(ManualClock* clock) : clock_(clock) {}
  ~ManualTimer() override { stop(); }

  void start(uint64_t delay_ms, std::function<void()> cb) override {
    stop();
    cb_ = std::move(cb);
    key_ = {clock_->now_ + delay_ms, clock_->seq_++};
    clock_->due_.emplace(key_, this);
    armed_ = true;
  }
  void stop() override {
    if (armed_) clock_->due_.erase(key_);
    armed_ = false;
    cb_ = nullptr;
  }
  bool active() const override { return armed_; }

  void fire() {
    armed_ = false;
    auto cb = std::move(cb_);
    cb_ = nullptr;
    if (cb) cb();
  }

 private:
  ManualClock* clock_;
  std::function<void()> cb_;
  Key key_{};
  bool armed_ = false;
};

std::unique_ptr<Timer> ManualClock::new_timer() { return std::make_unique<ManualTimer>(this); }

void ManualClock::advance(uint64_t delta_ms) {
  const uint64_t target = now_ + delta_ms;
  while (!due_.empty() && due_.begin()->first.first <= target) {
    auto it = due_.begin();
    ManualTimer* t = it->second;
    now_ = it->first.first;
    due_.erase(it);
    t->fire();
  }
  now_ = target;
}

}  // namespace uvsched
