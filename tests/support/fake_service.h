// A real HTTP server on its own loop thread standing in for KubeML's
// parameter server or function router: it records every call, answers with
// what the test programs, and lets the test wait for calls with a deadline.
// Strict (strict()), a call no rule answers is a 404 and is kept in
// unexpected(), so a test sees calls the real peer would not take. (The
// behaviour of KubeML's real PS and jobs is tools/kubeml_emulator's; this is
// for injecting faults and reading exact calls.)
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
  // The answer to calls whose target starts with `prefix` (and whose method
  // is `method`, when given); a later answer for the same calls wins. Not
  // strict, calls nothing answers get 200 and an empty body.
  void answer(const std::string& prefix, int status, std::string content_type, std::string body,
              std::string method = "");
  void strict() { strict_ = true; }
  // The calls no rule answered (strict): "METHOD target" lines.
  std::string unexpected() const;
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
    std::string method;  // empty: any
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
  bool strict_ = false;
  std::string unexpected_;
};

}  // namespace uvsched::test
