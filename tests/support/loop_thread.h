// A libuv loop on its own thread for in-process tests: the test thread hands
// work to the loop with run() and waits for it, so loop state is still only
// touched on the loop thread.
#pragma once

#include <uv.h>

#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace uvsched::test {

class LoopThread {
 public:
  LoopThread();
  ~LoopThread();  // closes what is left on the loop and joins

  // Runs fn on the loop thread and waits for it to return.
  void run(std::function<void()> fn);
  uv_loop_t* loop() { return &loop_; }

 private:
  static void on_async(uv_async_t* a);

  uv_loop_t loop_;
  uv_async_t async_;
  std::mutex mu_;
  std::vector<std::pair<std::function<void()>, std::promise<void>*>> tasks_;
  std::thread thread_;
};

}  // namespace uvsched::test
