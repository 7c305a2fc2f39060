#include "tests/support/fake_service.h"

#include <algorithm>

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>

namespace uvsched::test {

FakeService::FakeService(const TlsContext* tls) : tls_(tls) {
  signal(SIGPIPE, SIG_IGN);
  loop_.run([this] {
    clock_ = std::make_unique<LoopClock>(loop_.loop());
    server_ = std::make_unique<HttpServer>(loop_.loop(), *clock_, ServerLimits{}, *this);
    server_->use_tls(tls_);
    if (server_->listen("127.0.0.1", 0) == 0) port_ = server_->port();
  });
}

FakeService::~FakeService() {
  // Hung requests are answered (their Responders dropped: 500) so connections
  // drain; then the server shuts down, and is destroyed only once it has.
  std::atomic<bool> done{false};
  loop_.run([&] {
    hung_.clear();
    server_->shutdown([&] { done = true; });
  });
  auto until = std::chrono::steady_clock::now() + 30s;
  while (!done && std::chrono::steady_clock::now() < until) loop_.run([] {});
  if (!done) {
    ADD_FAILURE() << "fake service did not shut down";
    (void)server_.release();  // leaked rather than destroyed under live connections
    return;
  }
  loop_.run([this] {
    server_.reset();
    clock_.reset();
  });
}

void FakeService::fail_next(const std::string& prefix, int n, int status) {
  std::lock_guard<std::mutex> lock(mu_);
  rules_.insert(rules_.begin(), Rule{prefix, status, "application/json", R"({"error":"injected failure"})", n});
}

void FakeService::answer(const std::string& prefix, int status, std::string content_type, std::string body,
                         std::string method) {
  std::lock_guard<std::mutex> lock(mu_);
  // After the one-shot failures and hangs, before earlier answers.
  auto at = std::find_if(rules_.begin(), rules_.end(), [](const Rule& r) { return r.remaining < 0 && !r.hang; });
  rules_.insert(at, Rule{prefix, status, std::move(content_type), std::move(body), -1, false, std::move(method)});
}

std::string FakeService::unexpected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unexpected_;
}

void FakeService::hang(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(mu_);
  rules_.insert(rules_.begin(), Rule{prefix, 0, "", "", -1, true});
}

void FakeService::handle(HttpRequest& request, Responder responder) {
  HttpResponse r;
  bool hang = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string* ct = request.header("Content-Type");
    calls_.push_back({std::string(request.method), request.target, request.body, ct ? *ct : ""});
    bool matched = false;
    for (auto it = rules_.begin(); it != rules_.end(); ++it) {
      if (request.target.rfind(it->prefix, 0) != 0 || it->remaining == 0) continue;
      if (!it->method.empty() && it->method != request.method) continue;
      matched = true;
      hang = it->hang;
      r.status = it->status;
      r.content_type = it->content_type;
      r.body = it->body;
      if (it->remaining > 0) --it->remaining;
      break;
    }
    if (!matched && strict_) {
      unexpected_ += std::string(request.method) + " " + request.target + "\n";
      r.status = 404;
      r.body = "no such route on the real peer";
    }
  }
  cv_.notify_all();
  if (hang) {
    hung_.push_back(std::move(responder));  // answered never; dropped at shutdown
    return;
  }
  responder.send(std::move(r));
}

std::vector<RecordedCall> FakeService::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

std::vector<RecordedCall> FakeService::calls_to(const std::string& prefix) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RecordedCall> out;
  for (const auto& c : calls_) {
    if (c.target.rfind(prefix, 0) == 0) out.push_back(c);
  }
  return out;
}

size_t FakeService::count_locked(const std::string& prefix) const {
  size_t n = 0;
  for (const auto& c : calls_) n += c.target.rfind(prefix, 0) == 0;
  return n;
}

bool FakeService::wait_for(const std::string& prefix, size_t n, std::chrono::milliseconds deadline) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, deadline, [&] { return count_locked(prefix) >= n; });
}

}  // namespace uvsched::test
