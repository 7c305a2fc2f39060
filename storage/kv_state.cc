#include "storage/kv_state.h"

#include <algorithm>

#include "storage/wal_codec.h"

namespace uvsched {

bool has_prefix(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::vector<std::string> KvState::keys_in(const std::string& key, bool prefix) const {
  std::vector<std::string> out;
  if (!prefix) {
    if (kvs_.find(key)) out.push_back(key);
    return out;
  }
  for (auto it = kvs_.lower_bound(key); it != kvs_.end() && has_prefix(it->key(), key); ++it)
    out.emplace_back(it->key());
  return out;
}

KeyValue KvState::materialize(const KvTable::Entry& e, bool with_value) const {
  KeyValue kv;
  kv.key = e.key();
  // A value that does not unpack would be memory corruption: it was packed here.
  if (with_value) codec_->unpack(e.packed(), &kv.value);
  kv.create_revision = e.meta.create_revision;
  kv.mod_revision = e.meta.mod_revision;
  kv.version = e.meta.version;
  kv.lease = lease_of(e.key());
  return kv;
}

void KvState::pack_settled(size_t keep_raw) {
  while (to_pack_.size() > keep_raw) {
    auto [key, rev] = std::move(to_pack_.front());
    to_pack_.pop_front();
    const KvTable::Entry* e = kvs_.find(key);
    if (!e || e->meta.mod_revision != rev || !ValueCodec::is_raw(e->packed())) continue;  // changed since
    KvTable::Meta meta = e->meta;
    kvs_.put(key, codec_->pack(e->packed().substr(1)), meta);
  }
}

void KvState::settle() { pack_settled(0); }

std::vector<KvState::PackJob> KvState::take_settled(size_t keep_raw) {
  std::vector<PackJob> jobs;
  while (to_pack_.size() > keep_raw) {
    auto [key, rev] = std::move(to_pack_.front());
    to_pack_.pop_front();
    const KvTable::Entry* e = kvs_.find(key);
    if (!e || e->meta.mod_revision != rev || !ValueCodec::is_raw(e->packed())) continue;  // changed since
    jobs.push_back(PackJob{std::move(key), rev, std::string(e->packed().substr(1)), {}});
  }
  return jobs;
}

void KvState::install_packed(std::vector<PackJob>& jobs) {
  for (PackJob& j : jobs) {
    if (j.packed.empty() || ValueCodec::is_raw(j.packed)) continue;  // zstd could not shrink it
    const KvTable::Entry* e = kvs_.find(j.key);
    if (!e || e->meta.mod_revision != j.revision || !ValueCodec::is_raw(e->packed())) continue;  // changed meanwhile
    KvTable::Meta meta = e->meta;
    kvs_.put(j.key, j.packed, meta);
  }
}

int64_t KvState::lease_of(std::string_view key) const {
  for (const auto& [id, l] : leases_) {
    if (l.keys.count(key)) return id;
  }
  return 0;
}

size_t KvState::packed_value_bytes() const {
  size_t n = 0;
  for (const auto& e : kvs_) n += e.packed().size();
  return n;
}

RangeResult KvState::range(const std::string& key, const RangeOptions& options) const {
  RangeResult r;
  r.revision = revision_;
  auto emit = [&](const KvTable::Entry& e) {
    ++r.count;
    if (options.limit > 0 && static_cast<int64_t>(r.kvs.size()) >= options.limit) {
      r.more = true;
      return;
    }
    r.kvs.push_back(materialize(e, !options.keys_only));
  };
  if (!options.prefix) {
    if (const KvTable::Entry* e = kvs_.find(key)) emit(*e);
    return r;
  }
  for (auto it = kvs_.lower_bound(key); it != kvs_.end() && has_prefix(it->key(), key); ++it) emit(*it);
  return r;
}

void KvState::apply_put(const std::string& key, const std::string& value, int64_t lease, int64_t rev, Applied* out,
                        bool want_prev) {
  const KvTable::Entry* prev = kvs_.find(key);
  WatchEvent ev;
  ev.type = WatchEvent::Type::kPut;
  KvTable::Meta m;
  if (prev) {
    if (out && want_prev) out->prev_kvs.push_back(materialize(*prev));
    if (int64_t old = lease_of(key); old != 0 && old != lease) leases_[old].keys.erase(key);
    m = prev->meta;
  } else {
    m.create_revision = rev;
  }
  m.mod_revision = rev;
  m.version += 1;
  const KvTable::Meta& s = kvs_.put(key, {ValueCodec::kRawTag, value}, m).meta;
  if (value.size() >= ValueCodec::kMinPackedSize) {
    to_pack_.emplace_back(key, rev);
    if (!defer_packing_) pack_settled(kRawBacklog);
  }
  if (lease != 0) {
    // put() checked the lease exists; a log naming one that does not is damaged: the key stays, unleased.
    if (auto l = leases_.find(lease); l != leases_.end()) l->second.keys.insert(key);
  }
  if (!out) return;
  ev.kv.key = key;
  ev.kv.value = value;
  ev.kv.create_revision = s.create_revision;
  ev.kv.mod_revision = rev;
  ev.kv.version = s.version;
  ev.kv.lease = lease;
  out->events.push_back(std::move(ev));
}

void KvState::apply_delete(const std::string& key, int64_t rev, Applied* out) {
  const KvTable::Entry* e = kvs_.find(key);
  if (!e) return;
  if (int64_t lease = lease_of(key); lease != 0) leases_[lease].keys.erase(key);
  if (out) {
    WatchEvent ev;
    ev.type = WatchEvent::Type::kDelete;
    ev.kv.key = key;
    ev.kv.mod_revision = rev;
    ev.prev_kv = materialize(*e);
    out->prev_kvs.push_back(*ev.prev_kv);
    out->deleted += 1;
    out->events.push_back(std::move(ev));
  }
  kvs_.erase(key);
}

namespace {
size_t event_bytes(const WatchEvent& e) {
  return sizeof(WatchEvent) + e.kv.key.size() + e.kv.value.size() +
         (e.prev_kv ? e.prev_kv->key.size() + e.prev_kv->value.size() : 0);
}
}  // namespace

// Bounded by count and by bytes: with large values (pods) the count alone
// would let the history outgrow the data it describes.
void KvState::remember(const std::vector<WatchEvent>& events) {
  for (const auto& e : events) {
    history_bytes_ += event_bytes(e);
    history_.push_back(e);
  }
  while (!history_.empty() && (history_.size() > history_limit_ || history_bytes_ > history_byte_limit_)) {
    history_floor_ = history_.front().kv.mod_revision + 1;
    history_bytes_ -= event_bytes(history_.front());
    history_.pop_front();
  }
}

Applied KvState::put(const std::string& key, const std::string& value, int64_t lease) {
  Applied a;
  if (key.empty()) {
    a.status = {StoreCode::kInvalid, "empty key"};
    return a;
  }
  if (lease != 0 && !leases_.count(lease)) {
    a.status = {StoreCode::kNotFound, "lease not found"};
    return a;
  }
  int64_t rev = revision_ + 1;
  apply_put(key, value, lease, rev, &a, /*want_prev=*/true);
  revision_ = rev;
  a.revision = rev;
  a.record.revision = rev;
  a.record.mutations.push_back({Mutation::Kind::kPut, key, value, lease, 0});
  remember(a.events);
  return a;
}

Applied KvState::del(const std::string& key, bool prefix) {
  Applied a;
  auto keys = keys_in(key, prefix);
  if (keys.empty()) {
    a.revision = revision_;  // etcd does not bump the revision for a delete of nothing
    return a;
  }
  int64_t rev = revision_ + 1;
  for (const auto& k : keys) {
    apply_delete(k, rev, &a);
    a.record.mutations.push_back({Mutation::Kind::kDelete, k, {}, 0, 0});
  }
  revision_ = rev;
  a.revision = rev;
  a.record.revision = rev;
  remember(a.events);
  return a;
}

bool KvState::compare(const Compare& c) const {
  const KvTable::Entry* e = kvs_.find(c.key);
  const KvTable::Meta* kv = e ? &e->meta : nullptr;
  if (c.target == Compare::Target::kValue) {
    if (kv == nullptr) return false;  // etcd: a value compare on a missing key fails
    int cmp = materialize(*e).value.compare(c.value);
    switch (c.op) {
      case Compare::Op::kEqual:
        return cmp == 0;
      case Compare::Op::kNotEqual:
        return cmp != 0;
      case Compare::Op::kGreater:
        return cmp > 0;
      case Compare::Op::kLess:
        return cmp < 0;
    }
    return false;
  }
  int64_t have = 0;
  if (kv) {
    have = c.target == Compare::Target::kCreateRevision ? kv->create_revision
           : c.target == Compare::Target::kModRevision  ? kv->mod_revision
                                                        : kv->version;
  }
  switch (c.op) {
    case Compare::Op::kEqual:
      return have == c.number;
    case Compare::Op::kNotEqual:
      return have != c.number;
    case Compare::Op::kGreater:
      return have > c.number;
    case Compare::Op::kLess:
      return have < c.number;
  }
  return false;
}

Applied KvState::txn(TxnRequest request, bool* succeeded, std::vector<RangeResult>* ranges) {
  Applied a;
  bool ok = true;
  for (const auto& c : request.compares) ok = ok && compare(c);
  *succeeded = ok;
  auto& ops = ok ? request.success : request.failure;
  for (const auto& op : ops) {
    if (op.type == TxnOp::Type::kPut && op.key.empty()) {
      a.status = {StoreCode::kInvalid, "empty key"};
      return a;
    }
    if (op.type == TxnOp::Type::kPut && op.lease != 0 && !leases_.count(op.lease)) {
      a.status = {StoreCode::kNotFound, "lease not found"};
      return a;
    }
  }
  // Like etcd: every write of one txn shares one new revision; reads see the
  // txn's own earlier writes.
  int64_t rev = revision_ + 1;
  bool wrote = false;
  for (auto& op : ops) {
    switch (op.type) {
      case TxnOp::Type::kRange: {
        RangeOptions o;
        o.prefix = op.prefix;
        RangeResult r = range(op.key, o);
        r.revision = wrote ? rev : revision_;
        ranges->push_back(std::move(r));
        break;
      }
      case TxnOp::Type::kPut:
        apply_put(op.key, op.value, op.lease, rev, &a, /*want_prev=*/false);
        // The request is ours: its value goes to the log record as it is, not copied.
        a.record.mutations.push_back({Mutation::Kind::kPut, std::move(op.key), std::move(op.value), op.lease, 0});
        wrote = true;
        break;
      case TxnOp::Type::kDelete:
        for (const auto& k : keys_in(op.key, op.prefix)) {
          apply_delete(k, rev, &a);
          a.record.mutations.push_back({Mutation::Kind::kDelete, k, {}, 0, 0});
          wrote = true;
        }
        break;
    }
  }
  if (wrote) {
    revision_ = rev;
    a.record.revision = rev;
    remember(a.events);
  }
  a.revision = revision_;
  return a;
}

Applied KvState::lease_grant(int64_t ttl_seconds) {
  Applied a;
  int64_t id = next_lease_id_++;
  leases_[id].ttl = ttl_seconds;
  a.revision = revision_;
  a.record.revision = revision_;
  a.record.mutations.push_back({Mutation::Kind::kLeaseGrant, {}, {}, id, ttl_seconds});
  a.lease_id = id;
  return a;
}

Applied KvState::lease_revoke(int64_t id) {
  Applied a;
  auto it = leases_.find(id);
  if (it == leases_.end()) {
    a.status = {StoreCode::kNotFound, "lease not found"};
    return a;
  }
  std::set<std::string, std::less<>> keys = std::move(it->second.keys);
  leases_.erase(it);
  int64_t rev = keys.empty() ? revision_ : revision_ + 1;
  for (const auto& k : keys) {
    apply_delete(k, rev, &a);
    a.record.mutations.push_back({Mutation::Kind::kDelete, k, {}, 0, 0});
  }
  a.record.mutations.push_back({Mutation::Kind::kLeaseRevoke, {}, {}, id, 0});
  revision_ = rev;
  a.revision = rev;
  a.record.revision = rev;
  remember(a.events);
  return a;
}

int64_t KvState::lease_ttl(int64_t id) const {
  auto it = leases_.find(id);
  return it == leases_.end() ? 0 : it->second.ttl;
}

std::vector<std::pair<int64_t, int64_t>> KvState::leases() const {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& [id, l] : leases_) out.emplace_back(id, l.ttl);
  return out;
}

std::optional<std::vector<WatchEvent>> KvState::history(const std::string& prefix, int64_t from) const {
  if (from < history_floor_) return std::nullopt;
  std::vector<WatchEvent> out;
  for (const auto& e : history_) {
    if (e.kv.mod_revision >= from && has_prefix(e.kv.key, prefix)) out.push_back(e);
  }
  return out;
}

void KvState::replay(const LogRecord& record) {
  for (const auto& m : record.mutations) {
    switch (m.kind) {
      case Mutation::Kind::kPut:
        apply_put(m.key, m.value, m.lease, record.revision, nullptr, false);
        break;
      case Mutation::Kind::kDelete:
        apply_delete(m.key, record.revision, nullptr);
        break;
      case Mutation::Kind::kLeaseGrant:
        leases_[m.lease].ttl = m.ttl;
        next_lease_id_ = std::max(next_lease_id_, m.lease + 1);
        break;
      case Mutation::Kind::kLeaseRevoke:
        leases_.erase(m.lease);
        break;
    }
  }
  revision_ = std::max(revision_, record.revision);
  history_.clear();  // replayed history is not kept: watches resume from here
  history_floor_ = revision_ + 1;
}

namespace {
// Snapshots of packed values start with this in place of the revision (which
// is never negative), then the dictionary; older snapshots hold plain values.
constexpr int64_t kPackedSnapshot = -2;
}  // namespace

std::unique_ptr<SnapshotView> KvState::freeze_snapshot(std::string prefix) {
  auto v = std::make_unique<SnapshotView>();
  WalWriter w(std::move(prefix), 64 + codec_->dictionary().size() + leases_.size() * 16);
  w.i64(kPackedSnapshot);
  w.str(codec_->dictionary());
  w.i64(revision_);
  w.i64(next_lease_id_);
  w.u32(static_cast<uint32_t>(leases_.size()));
  for (const auto& [id, l] : leases_) {
    w.i64(id);
    w.i64(l.ttl);
  }
  w.u32(static_cast<uint32_t>(kvs_.size()));
  v->head_ = w.take();
  v->size_ = v->head_.size();
  v->entries_.reserve(kvs_.size());
  for (const auto& e : kvs_) {
    v->size_ += 4 + e.key().size() + 4 + e.packed().size() + 4 * 8;
    v->entries_.push_back(&e);
  }
  for (const auto& [id, l] : leases_) {
    for (const auto& key : l.keys) {
      auto at = std::lower_bound(v->entries_.begin(), v->entries_.end(), std::string_view(key),
                                 [](const KvTable::Entry* e, std::string_view k) { return e->key() < k; });
      if (at != v->entries_.end() && (*at)->key() == key) v->leases_.emplace_back(at - v->entries_.begin(), id);
    }
  }
  // A key is in one lease; were it in two, the lower id counts (as lease_of has it).
  std::sort(v->leases_.begin(), v->leases_.end());
  v->leases_.erase(std::unique(v->leases_.begin(), v->leases_.end(),
                               [](const auto& a, const auto& b) { return a.first == b.first; }),
                   v->leases_.end());
  kvs_.pin();
  return v;
}

void SnapshotView::encode(size_t piece, const std::function<bool(std::string_view)>& emit) const {
  if (!emit(head_)) return;
  std::string out;
  out.reserve(piece + 1024);
  auto lease = leases_.begin();
  for (size_t i = 0; i < entries_.size(); ++i) {
    const KvTable::Entry& e = *entries_[i];
    WalWriter w(std::move(out), 0);
    w.str(e.key());
    w.str(e.packed());
    w.i64(e.meta.create_revision);
    w.i64(e.meta.mod_revision);
    w.i64(e.meta.version);
    bool leased = lease != leases_.end() && lease->first == i;
    w.i64(leased ? lease->second : 0);
    if (leased) ++lease;
    out = w.take();
    if (out.size() >= piece) {
      if (!emit(out)) return;
      out.clear();
    }
  }
  if (!out.empty()) emit(out);
}

std::string KvState::encode_snapshot(std::string prefix) {
  auto view = freeze_snapshot(std::move(prefix));
  std::string out;
  out.reserve(view->size());
  view->encode(1 << 16, [&](std::string_view piece) {
    out.append(piece);
    return true;
  });
  release_snapshot();
  return out;
}

bool KvState::load_snapshot(std::string_view payload) {
  WalReader r(payload);
  int64_t rev = 0, next = 0;
  uint32_t nleases = 0, nkeys = 0;
  if (!r.i64(&rev)) return false;
  // Values packed with another dictionary (an older build's) are repacked with ours.
  bool packed = rev == kPackedSnapshot;
  std::string dictionary;
  std::unique_ptr<ValueCodec> theirs;
  if (packed) {
    if (!r.str(&dictionary) || !r.i64(&rev)) return false;
    if (dictionary != codec_->dictionary()) theirs = std::make_unique<ValueCodec>(dictionary);
  }
  if (rev < 0 || !r.i64(&next) || !r.u32(&nleases)) return false;
  std::map<int64_t, Lease> leases;
  for (uint32_t i = 0; i < nleases; ++i) {
    int64_t id, ttl;
    if (!r.i64(&id) || !r.i64(&ttl)) return false;
    leases[id].ttl = ttl;
  }
  if (!r.u32(&nkeys)) return false;
  KvTable kvs;
  std::string key, value, plain;
  for (uint32_t i = 0; i < nkeys; ++i) {
    KvTable::Meta m;
    int64_t lease = 0;
    if (!r.str(&key) || !r.str(&value) || !r.i64(&m.create_revision) || !r.i64(&m.mod_revision) || !r.i64(&m.version) ||
        !r.i64(&lease))
      return false;
    if (!packed) {
      kvs.put(key, codec_->pack(value), m);
    } else {
      // Every value is checked here (~0.3 us each): one that does not unpack
      // would otherwise turn up later as an empty read.
      if (!(theirs ? theirs : codec_)->unpack(value, &plain)) return false;
      kvs.put(key, theirs ? codec_->pack(plain) : value, m);
    }
    if (lease != 0) leases[lease].keys.insert(key);
  }
  kvs_ = std::move(kvs);
  to_pack_.clear();
  leases_ = std::move(leases);
  revision_ = rev;
  next_lease_id_ = next;
  history_.clear();
  history_floor_ = revision_ + 1;
  return true;
}

}  // namespace uvsched
