// Runs a callback once on the next loop turn, however many times schedule()
// is called before then: the way to drain a queue "by the loop" without
// sleep-polling. An idle handle is used because it also keeps the loop from
// blocking in poll while work is waiting.
#pragma once

#include <uv.h>

#include <functional>

namespace uvsched {

class NextTurn {
 public:
  NextTurn(uv_loop_t* loop, std::function<void()> cb);
  ~NextTurn();  // closes the handle; its memory is freed by the close callback
  NextTurn(const NextTurn&) = delete;
  NextTurn& operator=(const NextTurn&) = delete;

  void schedule();
  bool scheduled() const { return scheduled_; }

 private:
  static void on_idle(uv_idle_t* h);

  uv_idle_t* handle_;
  std::function<void()> cb_;
  bool scheduled_ = false;
};

}  // namespace uvsched
