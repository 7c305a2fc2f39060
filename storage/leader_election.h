// One active uvsched among several on one etcd: the leader holds the key
// /uvsched/leader, created only if absent and tied to its lease; it keeps the
// lease alive every ttl/3. A standby tries to take the key every
// min(1 s, ttl/3), so it takes over within the TTL once the leader's lease
// lapses. A leader whose keep-alive fails stops leading at once: better no
// leader for a moment than two.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

class LeaderElection {
 public:
  static constexpr const char* kKey = "/uvsched/leader";

  LeaderElection(Store& store, Clock& clock, std::string identity, int64_t ttl_seconds);
  void start();
  // Gives up leadership (revoking the lease, so a standby need not wait);
  // `revoked` runs once the store has answered the revoke (the store must
  // stay open until then, or the revoke is lost and standbys wait the TTL).
  void stop(std::function<void()> revoked = nullptr);
  bool is_leader() const { return leader_; }
  void on_change(std::function<void(bool leader)> cb) { on_change_ = std::move(cb); }

 private:
  void campaign();
  void keep_alive();
  void set_leader(bool leader);
  uint64_t retry_ms() const;

  Store& store_;
  std::string identity_;
  int64_t ttl_seconds_;
  std::unique_ptr<Timer> timer_;
  int64_t lease_ = 0;
  bool leader_ = false;
  bool stopped_ = false;
  std::function<void(bool)> on_change_;
};

}  // namespace uvsched
