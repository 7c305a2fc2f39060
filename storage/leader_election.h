// One active uvsched among several on one etcd: the leader holds the key
// /uvsched/leader, created only if absent and tied to its lease; it keeps the
// lease alive every ttl/3. A standby reads the key every min(1 s, ttl/6)
// and, once it is free, takes a fresh lease and makes the key: it takes over
// within the TTL and a try once the leader's lease lapses.
// A leader leads while its lease surely holds: until the TTL etcd last
// granted, counted from when that keep-alive was sent, less a margin.
// So a store that stalls for less than the TTL costs no leadership (a train
// job waiting on an answer would wait for nothing else), and a leader whose
// keep-alives go unanswered stops leading before a standby can take over.
// A keep-alive answered "no such lease" ends leadership at once.
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
  // The leader's identity as stored in the key (ours while we lead); empty
  // when no leader was seen on the last try.
  const std::string& leader_identity() const { return leader_ ? identity_ : seen_leader_; }
  void on_change(std::function<void(bool leader)> cb) { on_change_ = std::move(cb); }
  // The create revision of the leader key while we lead: the fence of our writes.
  int64_t key_revision() const { return key_revision_; }

 private:
  void campaign();
  void take_key(uint64_t granted_at);
  void retry();
  // claiming: the key is ours from before (an outage); lead once the lease is renewed.
  void keep_alive(bool claiming);
  void hold_until(uint64_t valid_until_ms);
  void step_down(const char* why);
  void set_leader(bool leader);
  uint64_t retry_ms() const;
  uint64_t margin_ms() const;

  Store& store_;
  Clock& clock_;
  std::string identity_;
  std::string seen_leader_;
  int64_t ttl_seconds_;
  std::unique_ptr<Timer> timer_;
  std::unique_ptr<Timer> expiry_;  // when the lease may lapse: leadership ends
  uint64_t generation_ = 0;        // bumped by step_down: older callbacks are ignored
  int64_t lease_ = 0;
  int64_t key_revision_ = 0;
  bool leader_ = false;
  bool stopped_ = false;
  std::function<void(bool)> on_change_;
};

}  // namespace uvsched
