#include "reactor/next_turn.h"

namespace uvsched {

NextTurn::NextTurn(uv_loop_t* loop, std::function<void()> cb) : handle_(new uv_idle_t), cb_(std::move(cb)) {
  uv_idle_init(loop, handle_);
  handle_->data = this;
}

NextTurn::~NextTurn() {
  uv_idle_stop(handle_);
  handle_->data = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(handle_), [](uv_handle_t* h) { delete reinterpret_cast<uv_idle_t*>(h); });
}

void NextTurn::schedule() {
  if (scheduled_) return;
  scheduled_ = true;
  uv_idle_start(handle_, &NextTurn::on_idle);
}

void NextTurn::on_idle(uv_idle_t* h) {
  auto* self = static_cast<NextTurn*>(h->data);
  uv_idle_stop(h);
  if (self == nullptr) return;
  self->scheduled_ = false;
  self->cb_();  // may schedule() again: that runs on the following turn
}

}  // namespace uvsched
