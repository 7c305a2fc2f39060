// A TCP forwarder on a free loopback port in front of a backend, on its own
// thread, that can lose an answer on its way back: the request reaches the
// backend (which carries it out) and the client never hears, as when the
// member it talks to dies between applying a write and answering it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace uvsched::test {

class LossyProxy {
 public:
  explicit LossyProxy(uint16_t backend_port);
  ~LossyProxy();
  LossyProxy(const LossyProxy&) = delete;

  uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Once: the next request whose bytes contain `marker` is passed on, and its
  // connection (both sides) is closed when the backend's answer comes back.
  void lose_answer_to(std::string marker);
  int answers_lost() const { return answers_lost_; }

 private:
  void run();

  uint16_t backend_port_;
  uint16_t port_ = 0;
  int listener_ = -1;
  std::mutex mu_;
  std::string marker_;  // guarded by mu_
  std::atomic<int> answers_lost_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace uvsched::test
