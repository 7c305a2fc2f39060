// A Store that hands every call to another: a test derives from it to change
// one thing about a fake store (hold its answers back, report a revision
// that lags) and keep the rest as the fake does.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "storage/store.h"

namespace uvsched::test {

class ForwardingStore : public Store {
 public:
  explicit ForwardingStore(Store& inner) : inner_(inner) {}
  void get(std::string key, RangeOptions options, RangeCallback cb) override {
    inner_.get(std::move(key), options, std::move(cb));
  }
  void put(std::string key, std::string value, int64_t lease, WriteCallback cb) override {
    inner_.put(std::move(key), std::move(value), lease, std::move(cb));
  }
  void del(std::string key, bool prefix, WriteCallback cb) override {
    inner_.del(std::move(key), prefix, std::move(cb));
  }
  void txn(TxnRequest request, TxnCallback cb) override { inner_.txn(std::move(request), std::move(cb)); }
  WatchId watch(std::string prefix, int64_t start, WatchCallback cb, bool deleted_values) override {
    return inner_.watch(std::move(prefix), start, std::move(cb), deleted_values);
  }
  using Store::watch;
  void cancel_watch(WatchId id) override { inner_.cancel_watch(id); }
  void lease_grant(int64_t ttl, LeaseCallback cb) override { inner_.lease_grant(ttl, std::move(cb)); }
  void lease_keepalive(int64_t id, LeaseCallback cb) override { inner_.lease_keepalive(id, std::move(cb)); }
  void lease_revoke(int64_t id, LeaseCallback cb) override { inner_.lease_revoke(id, std::move(cb)); }
  int64_t revision() const override { return inner_.revision(); }
  std::optional<std::string> unavailable_reason() const override { return inner_.unavailable_reason(); }
  void close(std::function<void()> done) override { inner_.close(std::move(done)); }

 protected:
  Store& inner_;
};

}  // namespace uvsched::test
