#include "tests/support/loop_thread.h"

namespace uvsched::test {

LoopThread::LoopThread() {
  uv_loop_init(&loop_);
  uv_async_init(&loop_, &async_, &LoopThread::on_async);
  async_.data = this;
  thread_ = std::thread([this] { uv_run(&loop_, UV_RUN_DEFAULT); });
}

LoopThread::~LoopThread() {
  run([this] {
    uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr);
    // Anything a test left open is closed so the loop can end.
    uv_walk(
        &loop_,
        [](uv_handle_t* h, void*) {
          if (!uv_is_closing(h)) uv_close(h, nullptr);
        },
        nullptr);
  });
  thread_.join();
  uv_loop_close(&loop_);
}

void LoopThread::run(std::function<void()> fn) {
  std::promise<void> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.emplace_back(std::move(fn), &done);
  }
  uv_async_send(&async_);
  done.get_future().wait();
}

void LoopThread::on_async(uv_async_t* a) {
  auto* self = static_cast<LoopThread*>(a->data);
  std::vector<std::pair<std::function<void()>, std::promise<void>*>> tasks;
  {
    std::lock_guard<std::mutex> lock(self->mu_);
    tasks.swap(self->tasks_);
  }
  for (auto& [fn, done] : tasks) {
    fn();
    done->set_value();
  }
}

}  // namespace uvsched::test
