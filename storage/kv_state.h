// The embedded store's state machine: keys, revisions, leases and a window of
// recent events for watches. No I/O and no clock: every write returns the
// mutations to log and the events to publish; replaying logged mutations
// rebuilds exactly the same state.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "storage/kv_table.h"
#include "storage/store.h"
#include "storage/value_codec.h"

namespace uvsched {

// One logged change. Writes of one revision are logged together.
struct Mutation {
  enum class Kind : uint8_t { kPut = 1, kDelete = 2, kLeaseGrant = 3, kLeaseRevoke = 4 };
  Kind kind = Kind::kPut;
  std::string key;
  std::string value;
  int64_t lease = 0;  // kPut: attached lease; kLease*: the lease id
  int64_t ttl = 0;    // kLeaseGrant
};

struct LogRecord {
  int64_t revision = 0;  // the revision after these mutations
  std::vector<Mutation> mutations;
};

struct Applied {
  StoreStatus status;
  int64_t revision = 0;
  LogRecord record;  // empty mutations: nothing to log
  std::vector<WatchEvent> events;
  std::vector<KeyValue> prev_kvs;
  int64_t deleted = 0;
  int64_t lease_id = 0;  // lease_grant: the new lease
};

// The state as it was when a snapshot was taken, for encoding elsewhere:
// the table's blocks are pinned (KvTable::pin), so the threadpool can encode
// them while the loop goes on changing the state. Holds pointers, not a copy:
// at 100k pods the copy was ~21 MB on top of the state.
class SnapshotView {
 public:
  size_t size() const { return size_; }  // the payload's bytes
  // The payload, in pieces of about `piece` bytes, handed to `emit` in order;
  // stops early when emit returns false. Safe on any one thread while the
  // view is held (it reads only pinned blocks and its own members).
  void encode(size_t piece, const std::function<bool(std::string_view)>& emit) const;

 private:
  friend class KvState;
  std::string head_;  // everything before the first key
  std::vector<const KvTable::Entry*> entries_;
  std::vector<std::pair<size_t, int64_t>> leases_;  // (entry index, lease), for the few keys with one
  size_t size_ = 0;
};

class KvState {
 public:
  // Values are kept packed against `value_dictionary` (see ValueCodec).
  explicit KvState(size_t history_limit = 10'000, size_t history_byte_limit = 2 << 20,
                   std::string value_dictionary = {})
      : history_limit_(history_limit),
        history_byte_limit_(history_byte_limit),
        codec_(std::make_unique<ValueCodec>(std::move(value_dictionary))) {}

  int64_t revision() const { return revision_; }
  size_t key_count() const { return kvs_.size(); }

  RangeResult range(const std::string& key, const RangeOptions& options) const;
  Applied put(const std::string& key, const std::string& value, int64_t lease);
  Applied del(const std::string& key, bool prefix);
  // The ranges of the branch taken go to `ranges`.
  Applied txn(TxnRequest request, bool* succeeded, std::vector<RangeResult>* ranges);

  Applied lease_grant(int64_t ttl_seconds);
  Applied lease_revoke(int64_t id);
  bool lease_exists(int64_t id) const { return leases_.count(id) != 0; }
  int64_t lease_ttl(int64_t id) const;
  std::vector<std::pair<int64_t, int64_t>> leases() const;  // (id, ttl)

  // Events under `prefix` with revision >= from; nullopt when they are no longer kept.
  std::optional<std::vector<WatchEvent>> history(const std::string& prefix, int64_t from) const;

  void replay(const LogRecord& record);
  // The whole state, appended to `prefix`: values stay packed, and the
  // dictionary they were packed with goes first.
  std::string encode_snapshot(std::string prefix = {});
  // The same, as a view to encode elsewhere; the state's blocks stay pinned
  // until release_snapshot(). One at a time.
  std::unique_ptr<SnapshotView> freeze_snapshot(std::string prefix);
  void release_snapshot() { kvs_.unpin(); }
  // Reads both this format and the older one of plain values.
  bool load_snapshot(std::string_view payload);
  // Bytes the values take in memory, packed (for tests and metrics).
  size_t packed_value_bytes() const;
  // Packs every value still kept raw (see kRawBacklog).
  void settle();

  // Packing, handed to another thread: with defer_packing(true) a put no
  // longer packs the values settled past kRawBacklog; take_settled() hands
  // them out as jobs (their bytes copied), any thread packs them with a codec
  // of the same dictionary, and install_packed() puts back those whose key
  // still holds that revision, raw.
  struct PackJob {
    std::string key;
    int64_t revision = 0;
    std::string value;   // raw, in
    std::string packed;  // out
  };
  void defer_packing(bool on) { defer_packing_ = on; }
  bool has_settled(size_t keep_raw = kRawBacklog) const { return to_pack_.size() > keep_raw; }
  std::vector<PackJob> take_settled(size_t keep_raw = kRawBacklog);
  void install_packed(std::vector<PackJob>& jobs);
  const std::string& value_dictionary() const { return codec_->dictionary(); }

  // Values are first kept raw and packed once this many later writes have
  // gone by without changing them: a pod is written three times within
  // milliseconds (created, bound, running), and packing every version would
  // triple the CPU spent for the one that stays.
  static constexpr size_t kRawBacklog = 512;

 private:
  struct Lease {
    int64_t ttl = 0;
    std::set<std::string, std::less<>> keys;
  };

  KeyValue materialize(const KvTable::Entry& e, bool with_value = true) const;
  // The lease a key is attached to, 0 for none (leases are few: a scan).
  int64_t lease_of(std::string_view key) const;
  bool compare(const Compare& c) const;
  // want_prev: the old value goes to out->prev_kvs (a txn's puts do not report it).
  void apply_put(const std::string& key, const std::string& value, int64_t lease, int64_t rev, Applied* out,
                 bool want_prev);
  void apply_delete(const std::string& key, int64_t rev, Applied* out);
  std::vector<std::string> keys_in(const std::string& key, bool prefix) const;
  void remember(const std::vector<WatchEvent>& events);
  void pack_settled(size_t keep_raw);

  KvTable kvs_;
  std::map<int64_t, Lease> leases_;
  int64_t revision_ = 1;  // etcd starts at 1 too
  int64_t next_lease_id_ = 1;
  std::deque<WatchEvent> history_;
  size_t history_limit_;
  size_t history_byte_limit_;
  size_t history_bytes_ = 0;
  int64_t history_floor_ = 1;                            // events at or after this revision are all in history_
  std::unique_ptr<ValueCodec> codec_;                    // behind a pointer: reads unpack through it and stay const
  std::deque<std::pair<std::string, int64_t>> to_pack_;  // (key, revision) written raw, oldest first
  bool defer_packing_ = false;
};

bool has_prefix(std::string_view s, std::string_view prefix);

}  // namespace uvsched
