#include "tests/support/fake_store.h"

#include <utility>

namespace uvsched::test {

void FakeStore::get(std::string key, RangeOptions options, RangeCallback cb) {
  RangeResult r = down_ ? RangeResult{StoreStatus::unavailable(*down_), 0, {}, false, 0} : state_.range(key, options);
  later([cb = std::move(cb), r = std::move(r)]() mutable { cb(std::move(r)); });
}

void FakeStore::put(std::string key, std::string value, int64_t lease, WriteCallback cb) {
  WriteResult w;
  if (down_) {
    w.status = StoreStatus::unavailable(*down_);
  } else {
    ++writes_;
    Applied a = state_.put(key, value, lease);
    w.status = a.status;
    w.revision = a.revision;
    w.prev_kvs = std::move(a.prev_kvs);
    deliver(a.events);
  }
  later([cb = std::move(cb), w = std::move(w)]() mutable { cb(std::move(w)); });
}

void FakeStore::del(std::string key, bool prefix, WriteCallback cb) {
  WriteResult w;
  if (down_) {
    w.status = StoreStatus::unavailable(*down_);
  } else {
    ++writes_;
    Applied a = state_.del(key, prefix);
    w.status = a.status;
    w.revision = a.revision;
    w.deleted = a.deleted;
    w.prev_kvs = std::move(a.prev_kvs);
    deliver(a.events);
  }
  later([cb = std::move(cb), w = std::move(w)]() mutable { cb(std::move(w)); });
}

void FakeStore::txn(TxnRequest request, TxnCallback cb) {
  TxnResult t;
  if (down_) {
    t.status = StoreStatus::unavailable(*down_);
  } else {
    ++writes_;
    Applied a = state_.txn(std::move(request), &t.succeeded, &t.ranges);
    t.status = a.status;
    t.revision = a.revision != 0 ? a.revision : state_.revision();
    deliver(a.events);
  }
  later([cb = std::move(cb), t = std::move(t)]() mutable { cb(std::move(t)); });
}

Store::WatchId FakeStore::watch(std::string prefix, int64_t start_revision, WatchCallback cb, bool deleted_values) {
  WatchId id = next_watch_++;
  if (start_revision > 0) {
    auto past = state_.history(prefix, start_revision);
    if (!past) {
      later([cb] { cb(StoreStatus{StoreCode::kCompacted, "required revision has been compacted"}, {}); });
      return id;
    }
    if (!past->empty()) later([cb, past = std::move(*past)] { cb(StoreStatus{}, past); });
  }
  watches_[id] = {std::move(prefix), std::move(cb), deleted_values};
  return id;
}

void FakeStore::cancel_watch(WatchId id) { watches_.erase(id); }

void FakeStore::end_watches(StoreStatus why) {
  auto ended = std::move(watches_);
  watches_.clear();
  for (auto& [id, w] : ended) later([cb = std::move(w.cb), why] { cb(why, {}); });
}

void FakeStore::deliver(const std::vector<WatchEvent>& events) {
  for (const auto& [id, w] : watches_) {
    std::vector<WatchEvent> mine;
    for (const auto& e : events) {
      if (e.kv.key.compare(0, w.prefix.size(), w.prefix) == 0) mine.push_back(e);
    }
    if (mine.empty()) continue;
    // A delivery for a watch cancelled meanwhile is dropped, as a backend's would be.
    later([this, id = id, mine = std::move(mine)] {
      if (auto it = watches_.find(id); it != watches_.end()) it->second.cb(StoreStatus{}, mine);
    });
  }
}

void FakeStore::lease_grant(int64_t ttl_seconds, LeaseCallback cb) {
  LeaseResult l;
  if (down_) {
    l.status = StoreStatus::unavailable(*down_);
  } else {
    Applied a = state_.lease_grant(ttl_seconds);
    l.status = a.status;
    l.id = a.lease_id;
    l.ttl_seconds = ttl_seconds;
  }
  later([cb = std::move(cb), l]() mutable { cb(std::move(l)); });
}

void FakeStore::lease_keepalive(int64_t id, LeaseCallback cb) {
  LeaseResult l;
  l.id = id;
  if (down_) {
    l.status = StoreStatus::unavailable(*down_);
  } else if (!state_.lease_exists(id)) {
    l.status = StoreStatus{StoreCode::kNotFound, "lease not found"};
  } else {
    l.ttl_seconds = state_.lease_ttl(id);
  }
  later([cb = std::move(cb), l]() mutable { cb(std::move(l)); });
}

void FakeStore::lease_revoke(int64_t id, LeaseCallback cb) {
  LeaseResult l;
  l.id = id;
  if (down_) {
    l.status = StoreStatus::unavailable(*down_);
  } else {
    Applied a = state_.lease_revoke(id);
    l.status = a.status;
    deliver(a.events);
  }
  later([cb = std::move(cb), l]() mutable { cb(std::move(l)); });
}

void FakeStore::close(std::function<void()> done) {
  watches_.clear();
  later(std::move(done));
}

size_t FakeStore::run() {
  size_t ran = 0;
  while (!queue_.empty()) {
    auto fn = std::move(queue_.front());
    queue_.pop_front();
    fn();
    ++ran;
  }
  return ran;
}

std::optional<std::string> FakeStore::value(const std::string& key) const {
  RangeResult r = state_.range(key, {});
  if (r.kvs.empty()) return std::nullopt;
  return r.kvs[0].value;
}

}  // namespace uvsched::test
