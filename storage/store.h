// The one store interface (SPEC §5), with etcd's data model: keys with
// create/mod revisions and versions, one global revision that every write
// bumps, prefix ranges, compare-and-swap transactions, watches from a
// revision, and leases. Every call is asynchronous: its callback runs on the
// loop, never from inside the call, and only once the result is durable.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace uvsched {

enum class StoreCode {
  kOk,
  kUnavailable,  // the backend cannot be reached now: answer 503 and retry
  kCompacted,    // a watch asked for history that is gone
  kInvalid,      // a request the backend refused as malformed
  kNotFound,     // a lease that does not exist
  kFenced,       // a write refused because this daemon no longer leads (its fence compare failed)
};

struct StoreStatus {
  StoreCode code = StoreCode::kOk;
  std::string message;
  bool ok() const { return code == StoreCode::kOk; }
  static StoreStatus unavailable(std::string m) { return {StoreCode::kUnavailable, std::move(m)}; }
};

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
};

struct RangeResult {
  StoreStatus status;
  int64_t revision = 0;  // the store's revision when the read was served
  std::vector<KeyValue> kvs;
  bool more = false;  // a limit cut the list
  int64_t count = 0;  // keys in the whole range
};

struct WriteResult {
  StoreStatus status;
  int64_t revision = 0;  // the revision this write created (or the current one if it changed nothing)
  std::vector<KeyValue> prev_kvs;
  int64_t deleted = 0;
};

struct Compare {
  enum class Target { kCreateRevision, kModRevision, kVersion, kValue };
  enum class Op { kEqual, kNotEqual, kGreater, kLess };
  std::string key;
  Target target = Target::kModRevision;
  Op op = Op::kEqual;
  int64_t number = 0;  // for revisions and version
  std::string value;   // for kValue
};

struct TxnOp {
  enum class Type { kPut, kDelete, kRange };
  Type type = Type::kPut;
  std::string key;
  std::string value;    // kPut
  int64_t lease = 0;    // kPut
  bool prefix = false;  // kDelete, kRange: every key starting with `key`
};

struct TxnRequest {
  std::vector<Compare> compares;
  std::vector<TxnOp> success;
  std::vector<TxnOp> failure;
  bool unfenced = false;  // the election's own txns: sent without the write fence
};

struct TxnResult {
  StoreStatus status;
  bool succeeded = false;
  int64_t revision = 0;
  std::vector<RangeResult> ranges;  // one per kRange op of the branch taken, in order
};

struct WatchEvent {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  KeyValue kv;  // for deletes: key and mod_revision (the delete's revision)
  // For deletes: what was deleted. Puts may carry their old value or not (the
  // embedded store does not: nobody reads it, and it doubled every event).
  std::optional<KeyValue> prev_kv;
};

struct LeaseResult {
  StoreStatus status;
  int64_t id = 0;
  int64_t ttl_seconds = 0;  // the granted TTL, or what is left after a keep-alive
};

using RangeCallback = std::function<void(RangeResult&&)>;
using WriteCallback = std::function<void(WriteResult&&)>;
using TxnCallback = std::function<void(TxnResult&&)>;
using LeaseCallback = std::function<void(LeaseResult&&)>;
// Events in revision order; a status other than ok ends the watch.
using WatchCallback = std::function<void(const StoreStatus&, const std::vector<WatchEvent>&)>;

struct RangeOptions {
  bool prefix = false;
  int64_t limit = 0;  // 0: no limit
  bool keys_only = false;
};

class Store {
 public:
  using WatchId = uint64_t;
  virtual ~Store() = default;

  virtual void get(std::string key, RangeOptions options, RangeCallback cb) = 0;
  // prev_kvs of the result holds the old value when there was one.
  virtual void put(std::string key, std::string value, int64_t lease, WriteCallback cb) = 0;
  virtual void del(std::string key, bool prefix, WriteCallback cb) = 0;
  virtual void txn(TxnRequest request, TxnCallback cb) = 0;

  // Events for keys under `prefix` with mod_revision >= start_revision
  // (0: from now on — a write issued after this call is seen once the store
  // has served any earlier call; pass a revision to name the point exactly).
  // Events of one revision arrive together. deleted_values: delete events
  // carry what was deleted in prev_kv (etcd then reads every event's old
  // value; a watcher that only needs deleted keys saves it that work).
  virtual WatchId watch(std::string prefix, int64_t start_revision, WatchCallback cb, bool deleted_values) = 0;
  WatchId watch(std::string prefix, int64_t start_revision, WatchCallback cb) {
    return watch(std::move(prefix), start_revision, std::move(cb), true);
  }
  virtual void cancel_watch(WatchId id) = 0;

  virtual void lease_grant(int64_t ttl_seconds, LeaseCallback cb) = 0;
  virtual void lease_keepalive(int64_t id, LeaseCallback cb) = 0;
  virtual void lease_revoke(int64_t id, LeaseCallback cb) = 0;

  // The newest revision this process has seen.
  virtual int64_t revision() const = 0;
  // nullopt when the backend is reachable; otherwise why not.
  virtual std::optional<std::string> unavailable_reason() const = 0;
  // Finishes what was acknowledged, fails the rest, releases every handle.
  virtual void close(std::function<void()> done) = 0;
  // From now on every write (put, delete, and each txn but the unfenced) is
  // made only if `fence` holds, in the same transaction: a leader fences its
  // writes with a compare on its own leader key, so a deposed one's writes
  // fail with kFenced instead of landing. A store with one process per
  // directory (the embedded one) needs none and ignores it.
  virtual void set_write_fence(Compare fence) { (void)fence; }
};

}  // namespace uvsched
