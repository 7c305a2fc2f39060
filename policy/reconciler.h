// Task reconciliation, as the seed's Reconciler: explicit (ask the agents
// about specific tasks, re-asking with backoff 1 s doubling to 120 s until
// each has reported since the request; a new request cancels the one in
// progress) and implicit (ask for everything, 15 s after start, or one
// interval when that is shorter, and then every interval; 0 turns it off).
// Pure: times are passed in.
//
// Explicit requests have a scope (the scheduler's: one agent and its tasks).
// The seed asked about every task at once, so its new request replaced the
// old one; here a new request replaces only the one of its scope, or 5k
// agents re-subscribing after a restart would each ask about all 100k tasks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace uvsched {

class Reconciler {
 public:
  struct Settings {
    uint64_t initial_ms = 1'000;
    uint64_t max_ms = 120'000;
    uint64_t implicit_first_ms = 15'000;
    uint64_t implicit_interval_ms = 300'000;  // 0: no implicit reconciliation at all (--reconcile-interval 0)
  };
  explicit Reconciler(Settings s) : s_(s) {}

  // The first implicit pass comes implicit_first_ms after start, or after one
  // interval when that is shorter.
  void start(uint64_t now) {
    next_implicit_ = s_.implicit_interval_ms > 0 ? now + std::min(s_.implicit_first_ms, s_.implicit_interval_ms) : 0;
  }
  // Asks about `tasks`, cancelling the request in progress for `scope`.
  void request_explicit(const std::string& scope, std::vector<std::string> tasks, uint64_t now);
  void reported(const std::string& task);

  struct Ask {
    std::vector<std::string> tasks;  // explicit: these
    bool implicit = false;           // implicit: everything
    bool empty() const { return tasks.empty() && !implicit; }
  };
  Ask due(uint64_t now);
  std::optional<uint64_t> next_deadline() const;
  size_t outstanding() const { return outstanding_.size(); }

 private:
  Settings s_;
  std::unordered_map<std::string, std::string> outstanding_;  // task -> the scope asking
  std::map<std::string, std::set<std::string>> scopes_;       // scope -> its outstanding tasks
  uint64_t next_explicit_ = 0;
  uint64_t backoff_ = 0;
  uint64_t next_implicit_ = 0;  // 0: none scheduled
};

}  // namespace uvsched
