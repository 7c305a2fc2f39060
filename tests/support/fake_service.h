// A real HTTP server on its own loop thread standing in for KubeML's
// parameter server or function router: it records every call, answers with
// what the test programs, and lets the test wait for calls with a deadline.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "reactor/http_server.h"
#include "reactor/loop_clock.h"
#include "tests/support/loop_thread.h"

namespace uvsched::test {

using namespace std::chrono_literals;

struct RecordedCall {
  std::string method;
  std::string target;
  std::string body;
  std::string content_type;
};

class FakeService : public RequestHandler {
 public:
  // tls: serve https with it (it must outlive the service).
  explicit FakeService(const TlsContext* tls = nullptr);
  ~FakeService() override;

  uint16_t port() const { return port_; }
  std::string url() const { return (tls_ ? "https" : "http") + std::string("://127.0.0.1:") + std::to_string(port_); }

  // The next n calls whose target starts with `prefix` get `status`.
  void fail_next(const std::string& prefix, int n, int status = 500);
  // The answer to calls whose target starts with `prefix` (default: 200, empty).
  void answer(const std::string& prefix, int status, std::string content_type, std::string body);
  // Calls to `prefix` are recorded and never answered (a hung peer).
  void hang(const std::string& prefix);

  std::vector<RecordedCall> calls() const;
  std::vector<RecordedCall> calls_to(const std::string& prefix) const;
  // Waits until at least n calls went to targets starting with prefix.
  bool wait_for(const std::string& prefix, size_t n, std::chrono::milliseconds deadline = 10s) const;

  void handle(HttpRequest& request, Responder responder) override;

 private:
  struct Rule {
    std::string prefix;
    int status;
    std::string content_type;
    std::string body;
    int remaining;  // -1: always
    bool hang = false;
  };
  size_t count_locked(const std::string& prefix) const;

  LoopThread loop_;
  std::unique_ptr<LoopClock> clock_;
  const TlsContext* tls_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<RecordedCall> calls_;
  std::vector<Rule> rules_;
  std::vector<Responder> hung_;  // loop thread only
};

}  // namespace uvsched::test
