#include "reactor/loop_clock.h"

#include <utility>

namespace uvsched {
namespace {

// The uv_timer_t lives on the heap because its close completes on a later loop
// turn, after the owning UvTimer may be gone; handle->data is cleared first.
class UvTimer final : public Timer {
 public:
  explicit UvTimer(uv_loop_t* loop) : handle_(new uv_timer_t) {
    uv_timer_init(loop, handle_);
    handle_->data = this;
  }
  ~UvTimer() override {
    uv_timer_stop(handle_);
    handle_->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(handle_), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
  }
  void start(uint64_t delay_ms, std::function<void()> cb) override {
    cb_ = std::move(cb);
    uv_timer_start(handle_, &UvTimer::on_fire, delay_ms, 0);
  }
  void stop() override {
    uv_timer_stop(handle_);
    cb_ = nullptr;
  }
  bool active() const override { return uv_is_active(reinterpret_cast<uv_handle_t*>(handle_)); }

 private:
  static void on_fire(uv_timer_t* h) {
    auto* self = static_cast<UvTimer*>(h->data);
    if (self == nullptr || !self->cb_) return;
    auto cb = std::move(self->cb_);  // one-shot; the callback may re-arm or delete us
    self->cb_ = nullptr;
    cb();
  }

  uv_timer_t* handle_;
  std::function<void()> cb_;
};

}  // namespace

uint64_t LoopClock::now_ms() const { return uv_now(loop_); }

int64_t LoopClock::unix_ms() const {
  uv_timeval64_t tv;
  uv_gettimeofday(&tv);
  return tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

std::unique_ptr<Timer> LoopClock::new_timer() { return std::make_unique<UvTimer>(loop_); }

}  // namespace uvsched
