#include "storage/leader_election.h"

#include <algorithm>

#include "reactor/log.h"

namespace uvsched {

LeaderElection::LeaderElection(Store& store, Clock& clock, std::string identity, int64_t ttl_seconds)
    : store_(store), identity_(std::move(identity)), ttl_seconds_(ttl_seconds), timer_(clock.new_timer()) {}

uint64_t LeaderElection::retry_ms() const {
  return std::min<uint64_t>(1000, static_cast<uint64_t>(ttl_seconds_) * 1000 / 3);
}

void LeaderElection::start() { campaign(); }

void LeaderElection::stop(std::function<void()> revoked) {
  stopped_ = true;
  timer_->stop();
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
  log_info(leader ? "leader_elected" : "leader_lost").kv("identity", identity_);
  if (on_change_) on_change_(leader);
}

void LeaderElection::campaign() {
  if (stopped_) return;
  auto try_key = [this] {
    TxnRequest t;
    t.compares.push_back({kKey, Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});
    t.success.push_back({TxnOp::Type::kPut, kKey, identity_, lease_, false});
    t.failure.push_back({TxnOp::Type::kRange, kKey, {}, 0, false});
    store_.txn(std::move(t), [this](TxnResult&& r) {
      if (stopped_) return;
      // Still our key from before an outage: its lease is ours too.
      bool ours = r.status.ok() && !r.succeeded && !r.ranges.empty() && r.ranges[0].kvs.size() == 1 &&
                  r.ranges[0].kvs[0].value == identity_;
      if (ours) lease_ = r.ranges[0].kvs[0].lease;
      if (r.status.ok() && (r.succeeded || ours)) {
        set_leader(true);
        timer_->start(static_cast<uint64_t>(ttl_seconds_) * 1000 / 3, [this] { keep_alive(); });
        return;
      }
      if (r.status.code == StoreCode::kNotFound) lease_ = 0;  // our lease lapsed meanwhile
      timer_->start(retry_ms(), [this] { campaign(); });
    });
  };
  if (lease_ != 0) {
    try_key();
    return;
  }
  store_.lease_grant(ttl_seconds_, [this, try_key](LeaseResult&& r) {
    if (stopped_) return;
    if (!r.status.ok()) {
      timer_->start(retry_ms(), [this] { campaign(); });
      return;
    }
    lease_ = r.id;
    try_key();
  });
}

void LeaderElection::keep_alive() {
  store_.lease_keepalive(lease_, [this](LeaseResult&& r) {
    if (stopped_) return;
    if (r.status.ok()) {
      timer_->start(static_cast<uint64_t>(ttl_seconds_) * 1000 / 3, [this] { keep_alive(); });
      return;
    }
    log_warn("leader_keepalive_failed").kv("error", r.status.message);
    if (r.status.code == StoreCode::kNotFound) lease_ = 0;
    set_leader(false);
    timer_->start(retry_ms(), [this] { campaign(); });
  });
}

}  // namespace uvsched
