#include "storage/leader_election.h"

#include <algorithm>

#include "reactor/log.h"
#include "storage/unwaited.h"

namespace uvsched {

LeaderElection::LeaderElection(Store& store, Clock& clock, std::string identity, int64_t ttl_seconds)
    : store_(store),
      clock_(clock),
      identity_(std::move(identity)),
      ttl_seconds_(ttl_seconds),
      timer_(clock.new_timer()),
      expiry_(clock.new_timer()) {}

uint64_t LeaderElection::retry_ms() const {
  return std::min<uint64_t>(1000, static_cast<uint64_t>(ttl_seconds_) * 1000 / 6);
}

// Room for etcd's clock and ours to disagree and for a pause right after a check.
uint64_t LeaderElection::margin_ms() const {
  return std::max<uint64_t>(200, static_cast<uint64_t>(ttl_seconds_) * 100);
}

void LeaderElection::start() { campaign(); }

void LeaderElection::stop(std::function<void()> revoked) {
  stopped_ = true;
  timer_->stop();
  expiry_->stop();
  if (lease_ != 0) {
    store_.lease_revoke(lease_, [revoked](LeaseResult&&) {
      if (revoked) revoked();
    });
  } else if (revoked) {
    revoked();
  }
  lease_ = 0;
  set_leader(false);
}

void LeaderElection::set_leader(bool leader) {
  if (leader == leader_) return;
  leader_ = leader;
  // Every write from now on holds only while the key is the one we made; a
  // deposed leader keeps its old fence, which fails, until it wins again.
  if (leader) store_.set_write_fence({kKey, Compare::Target::kCreateRevision, Compare::Op::kEqual, key_revision_, {}});
  log_info(leader ? "leader_elected" : "leader_lost").kv("identity", identity_);
  if (on_change_) on_change_(leader);
}

void LeaderElection::hold_until(uint64_t valid_until_ms) {
  uint64_t now = clock_.now_ms();
  if (valid_until_ms <= now) return step_down("the lease may have lapsed");
  expiry_->start(valid_until_ms - now, [this] { step_down("no keep-alive answered within the lease"); });
}

void LeaderElection::step_down(const char* why) {
  ++generation_;
  expiry_->stop();
  if (leader_) log_warn("leader_stepping_down").kv("identity", identity_).kv("why", why);
  set_leader(false);
  retry();
}

// A standby reads the key each try (no lease of its own to keep alive while
// it waits); once the key is free it takes a fresh lease and makes the key
// with it, so the lease it leads on is as young as it can be.
void LeaderElection::campaign() {
  if (stopped_) return;
  store_.get(kKey, {}, [this](RangeResult&& r) {
    if (stopped_) return;
    if (!r.status.ok()) return retry();
    if (!r.kvs.empty()) {
      const KeyValue& kv = r.kvs[0];
      if (kv.value == identity_) {  // ours from before an outage: so is its lease, if it still lives
        lease_ = kv.lease;
        key_revision_ = kv.create_revision;
        return keep_alive(true);
      }
      seen_leader_ = kv.value;
      return retry();
    }
    seen_leader_.clear();
    const uint64_t granted_at = clock_.now_ms();
    store_.lease_grant(ttl_seconds_, [this, granted_at](LeaseResult&& l) {
      if (stopped_) return;
      if (!l.status.ok()) return retry();
      lease_ = l.id;
      take_key(granted_at);
    });
  });
}

void LeaderElection::take_key(uint64_t granted_at) {
  TxnRequest t;
  t.compares.push_back({kKey, Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});
  t.success.push_back({TxnOp::Type::kPut, kKey, identity_, lease_, false});
  t.failure.push_back({TxnOp::Type::kRange, kKey, {}, 0, false});
  t.unfenced = true;  // the fence is what this txn makes
  store_.txn(std::move(t), [this, granted_at](TxnResult&& r) {
    if (stopped_) return;
    if (r.status.ok() && r.succeeded) {
      key_revision_ = r.revision;  // the key was made by this txn
      // A lease granted since granted_at lives at least the TTL from then.
      hold_until(granted_at + static_cast<uint64_t>(ttl_seconds_) * 1000 - margin_ms());
      set_leader(true);
      timer_->start(static_cast<uint64_t>(ttl_seconds_) * 1000 / 3, [this] { keep_alive(false); });
      return;
    }
    // Another daemon made it first (or the store failed): our lease is not needed.
    if (r.status.ok() && !r.ranges.empty() && r.ranges[0].kvs.size() == 1) seen_leader_ = r.ranges[0].kvs[0].value;
    if (lease_ != 0) store_.lease_revoke(lease_, unwaited<LeaseResult>("leader_lease_revoke", std::to_string(lease_)));
    lease_ = 0;
    retry();
  });
}

void LeaderElection::retry() {
  timer_->start(retry_ms(), [this] { campaign(); });
}

void LeaderElection::keep_alive(bool claiming) {
  const uint64_t sent = clock_.now_ms();
  const uint64_t generation = generation_;
  store_.lease_keepalive(lease_, [this, sent, generation, claiming](LeaseResult&& r) {
    if (stopped_ || generation != generation_) return;
    if (r.status.ok()) {
      hold_until(sent + static_cast<uint64_t>(std::max<int64_t>(r.ttl_seconds, 0)) * 1000 -
                 std::min(margin_ms(), sent));
      if (claiming) set_leader(true);
      timer_->start(static_cast<uint64_t>(ttl_seconds_) * 1000 / 3, [this] { keep_alive(false); });
      return;
    }
    log_warn("leader_keepalive_failed").kv("error", r.status.message).kv("leader", leader_);
    if (r.status.code == StoreCode::kNotFound) {
      lease_ = 0;
      return step_down("the lease is gone");
    }
    if (claiming || !leader_) return step_down("the store did not renew the lease");
    // Still leading: the lease holds until the expiry timer says otherwise.
    timer_->start(retry_ms(), [this] { keep_alive(false); });
  });
}

}  // namespace uvsched
