// The Store contract over the in-memory state the embedded store keeps
// (KvState), with no disk, no thread and no loop: every call is applied at
// once, in call order, and its answer (and each watch delivery it causes)
// waits in a queue until the test runs it. So an orchestration test decides
// when the store answers, sees what was written, and can make calls fail.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "storage/kv_state.h"
#include "storage/store.h"

namespace uvsched::test {

class FakeStore final : public Store {
 public:
  void get(std::string key, RangeOptions options, RangeCallback cb) override;
  void put(std::string key, std::string value, int64_t lease, WriteCallback cb) override;
  void del(std::string key, bool prefix, WriteCallback cb) override;
  void txn(TxnRequest request, TxnCallback cb) override;
  WatchId watch(std::string prefix, int64_t start_revision, WatchCallback cb, bool deleted_values) override;
  using Store::watch;
  void cancel_watch(WatchId id) override;
  void lease_grant(int64_t ttl_seconds, LeaseCallback cb) override;
  void lease_keepalive(int64_t id, LeaseCallback cb) override;
  void lease_revoke(int64_t id, LeaseCallback cb) override;
  int64_t revision() const override { return state_.revision(); }
  std::optional<std::string> unavailable_reason() const override { return down_; }
  void close(std::function<void()> done) override;

  // Runs the queued answers and deliveries, and those they queue, until none
  // is left; how many ran.
  size_t run();
  size_t queued() const { return queue_.size(); }
  // While down, every call fails kUnavailable and is not applied.
  void set_down(std::optional<std::string> why) { down_ = std::move(why); }
  // Ends every watch with `why`, as a backend whose stream broke does.
  void end_watches(StoreStatus why);
  // The stored value of `key`, read directly (for the test's assertions).
  std::optional<std::string> value(const std::string& key) const;
  // How many calls were made (reads included), for "nothing was written" checks.
  size_t writes() const { return writes_; }

 private:
  struct Watch {
    std::string prefix;
    WatchCallback cb;
    bool deleted_values = true;
  };
  void deliver(const std::vector<WatchEvent>& events);
  void later(std::function<void()> fn) { queue_.push_back(std::move(fn)); }

  KvState state_;
  std::deque<std::function<void()>> queue_;
  std::map<WatchId, Watch> watches_;
  WatchId next_watch_ = 1;
  std::optional<std::string> down_;
  size_t writes_ = 0;
};

}  // namespace uvsched::test
