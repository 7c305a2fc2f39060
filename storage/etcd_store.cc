#include "storage/etcd_store.h"

#include <cassert>

#include <set>
#include <tuple>

#include "reactor/json_writer.h"
#include "reactor/log.h"
#include "storage/base64.h"
#include "storage/etcd_wire.h"

namespace uvsched {
namespace {

using simdjson::dom::element;
using namespace etcd_wire;

constexpr size_t kMaxOpsPerTxn = 128;  // etcd's default --max-txn-ops
constexpr size_t kMaxTxnsInFlight = 2;
// A watch that falls behind gets many revisions in one line; a parser keeps
// the capacity of the largest document it saw, so after such a line it is
// replaced rather than kept at that size.
constexpr size_t kBigWatchLine = 1 << 20;

}  // namespace

struct EtcdStore::Watch {
  WatchId id = 0;
  std::string prefix;
  int64_t next_revision = 0;   // 0: from whenever the watch is created
  bool deleted_values = true;  // ask etcd for prev_kv
  WatchCallback cb;
  HttpClient::RequestId request = 0;
  std::string buffer;  // a partial line between chunks
  std::unique_ptr<Timer> retry;
  uint64_t backoff_ms = 0;
  simdjson::dom::parser parser;
};

bool parse_etcd_endpoints(const std::string& list, std::vector<Url>* out) {
  std::string_view rest = list;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    auto u = parse_url(rest.substr(0, comma));
    if (!u) return false;
    u->target = "";
    out->push_back(*u);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  return !out->empty();
}

EtcdStore::EtcdStore(uv_loop_t* loop, Clock& clock, std::vector<Url> endpoints, Options options)
    : clock_(clock),
      endpoints_(std::move(endpoints)),
      options_(options),
      values_(options_.value_dictionary, options_.pack_values, options_.older_value_dictionaries),
      client_(loop, clock, ClientOptions{.max_connections_per_origin = kRequestConnections}),
      stream_client_(loop, clock, ClientOptions{.max_connections_per_origin = kWatchConnections}),
      probe_timer_(clock.new_timer()) {
  uv_idle_init(loop, &idle_);
  idle_.data = this;
  if (options_.tls) {
    client_.use_tls(options_.tls.get());
    stream_client_.use_tls(options_.tls.get());
  }
  schedule_probe();
}

// Its idle handle and its clients' connections call back into it: close()
// must have run (and its callbacks finished) before it goes.
EtcdStore::~EtcdStore() { assert(closing_ && "EtcdStore destroyed before close()"); }

// ---- requests, fail-over, availability ----------------------------------------

namespace {
bool is_read(std::string_view path) { return path == "/v3/kv/range" || path == "/v3/maintenance/status"; }
}  // namespace

void EtcdStore::call(const std::string& path, std::string body, JsonCallback cb, size_t attempts_left) {
  if (closing_) {
    cb(StoreStatus::unavailable("store is closing"), element());
    return;
  }
  const Url& ep = endpoints_[current_ % endpoints_.size()];
  ClientRequest req;
  req.method = "POST";
  req.url = ep.base() + path;
  req.headers = {{"Content-Type", "application/json"}, {"Grpc-Metadata-hasleader", "true"}};
  req.body = body;
  req.timeout_ms = options_.request_timeout_ms;
  client_.request(std::move(req), [this, path, body = std::move(body), cb = std::move(cb),
                                   attempts_left](ClientResponse&& r) mutable {
    bool transport = r.error != 0 || r.status == 502 || r.status == 503 || r.status == 504;
    if (transport) {
      std::string why = r.error != 0 ? r.error_text : "etcd answered " + std::to_string(r.status);
      current_ = (current_ + 1) % endpoints_.size();  // the next call tries the next member
      // A write etcd may have received may have been applied (a time-out, a
      // leader change, a member killed before it answered). Sent again to
      // another member, a compare-and-swap would fail against its own
      // result and the caller be told it lost; so, as etcd's own client
      // does, only reads and writes that surely never left are sent again.
      const bool maybe_applied = !is_read(path) && (r.error == 0 || r.sent);
      if (attempts_left > 1 && !closing_ && !maybe_applied) {
        call(path, std::move(body), std::move(cb), attempts_left - 1);
        return;
      }
      if (attempts_left <= 1) mark_down(why);
      if (maybe_applied) why += " (the write may have been applied)";
      cb(StoreStatus::unavailable("etcd unreachable: " + why), element());
      return;
    }
    mark_up();
    element doc;
    if (parser_.parse(r.body).get(doc) != simdjson::SUCCESS) {
      cb(StoreStatus{StoreCode::kInvalid, "etcd sent malformed JSON"}, element());
      return;
    }
    if (r.status != 200) {
      std::string_view message;
      if (doc["error"].get(message) != simdjson::SUCCESS) message = "etcd error";
      StoreCode code = message.find("not found") != std::string_view::npos ? StoreCode::kNotFound : StoreCode::kInvalid;
      cb(StoreStatus{code, std::string(message)}, doc);
      return;
    }
    note_revision(doc);
    cb(StoreStatus{}, doc);
  });
}

void EtcdStore::note_revision(element obj) { revision_ = std::max(revision_, header_revision(obj)); }

void EtcdStore::mark_down(const std::string& why) {
  bool was_up = !down_reason_;
  if (was_up) log_warn("etcd_unreachable").kv("error", why);
  down_reason_ = "etcd unreachable: " + why;
  if (was_up) schedule_probe();  // from the health interval to the reconnect backoff
}

void EtcdStore::mark_up() {
  if (down_reason_) log_info("etcd_reachable").kv("endpoint", endpoints_[current_].origin());
  down_reason_.reset();
  probe_backoff_ms_ = 0;
}

// One probe in flight at a time: every health interval while up, with a
// doubling backoff while down.
void EtcdStore::schedule_probe() {
  if (closing_) return;
  uint64_t delay = options_.health_interval_ms;
  if (down_reason_) {
    probe_backoff_ms_ = std::max(options_.reconnect_min_ms, std::min(probe_backoff_ms_ * 2, options_.reconnect_max_ms));
    delay = probe_backoff_ms_;
  }
  probe_timer_->start(delay, [this] { probe(); });
}

void EtcdStore::probe() {
  call(
      "/v3/maintenance/status", "{}", [this](const StoreStatus&, element) { schedule_probe(); }, endpoints_.size());
}

// ---- kv ---------------------------------------------------------------------------

void EtcdStore::get(std::string key, RangeOptions options, RangeCallback cb) {
  JsonWriter w;
  w.begin_object();
  write_range_fields(w, key, options.prefix);
  if (options.limit > 0) w.key("limit").value(std::to_string(options.limit));
  if (options.keys_only) w.key("keys_only").value(true);
  w.end_object();
  call(
      "/v3/kv/range", w.take(),
      [this, cb = std::move(cb)](const StoreStatus& st, element doc) {
        RangeResult r = st.ok() ? decode_range(doc) : RangeResult{};
        for (auto& kv : r.kvs) decode_value(kv);
        r.status = st;
        cb(std::move(r));
      },
      endpoints_.size());
}

void EtcdStore::put(std::string key, std::string value, int64_t lease, WriteCallback cb) {
  queue_write({TxnOp::Type::kPut, std::move(key), values_.encode(std::move(value)), lease, false}, std::move(cb));
}

void EtcdStore::del(std::string key, bool prefix, WriteCallback cb) {
  queue_write({TxnOp::Type::kDelete, std::move(key), {}, 0, prefix}, std::move(cb));
}

// Held until the loop turn is over, so the turn's writes share one txn.
void EtcdStore::queue_write(TxnOp op, WriteCallback cb) {
  pending_writes_.push_back({std::move(op), std::move(cb)});
  arm_flush();
}

void EtcdStore::arm_flush() {
  if (idle_active_ || txns_in_flight_ >= kMaxTxnsInFlight) return;
  if (pending_writes_.empty() && pending_txns_.empty()) return;
  uv_idle_start(&idle_, &EtcdStore::on_idle);
  idle_active_ = true;
}

void EtcdStore::on_idle(uv_idle_t* h) {
  auto* self = static_cast<EtcdStore*>(h->data);
  uv_idle_stop(h);
  self->idle_active_ = false;
  if (self->txns_in_flight_ >= kMaxTxnsInFlight) return;  // a txn's answer flushes them
  self->flush_writes();
  self->flush_txns();
}

// One loop turn's writes, cut into txns etcd accepts: at most 128 ops, no key
// twice, and a prefix delete on its own (it may cover other keys of the batch).
void EtcdStore::flush_writes() {
  std::vector<PendingWrite> all = std::move(pending_writes_);
  pending_writes_.clear();
  std::vector<PendingWrite> batch;
  std::set<std::string> keys;
  for (auto& w : all) {
    bool alone = w.op.prefix;
    if (!batch.empty() && (alone || batch.size() >= kMaxOpsPerTxn || keys.count(w.op.key))) {
      send_write_batch(std::move(batch));
      batch.clear();
      keys.clear();
    }
    keys.insert(w.op.key);
    batch.push_back(std::move(w));
    if (alone) {
      send_write_batch(std::move(batch));
      batch.clear();
      keys.clear();
    }
  }
  if (!batch.empty()) send_write_batch(std::move(batch));
}

bool EtcdStore::add_fence(TxnRequest& t) const {
  if (!fence_ || t.unfenced) return false;
  t.compares.push_back(*fence_);
  t.failure.push_back({TxnOp::Type::kRange, fence_->key, {}, 0, false});
  return true;
}

bool EtcdStore::fence_failed(TxnResult& r) const {
  if (r.ranges.empty()) return true;  // the read of the fence key is the failure branch's last
  RangeResult fence = std::move(r.ranges.back());
  r.ranges.pop_back();
  return fence.kvs.size() != 1 || fence.kvs[0].create_revision != fence_->number;
}

namespace {
StoreStatus fenced_status() { return {StoreCode::kFenced, "fenced: this uvsched no longer leads"}; }
}  // namespace

void EtcdStore::send_write_batch(std::vector<PendingWrite> batch) {
  TxnRequest t;
  for (const auto& w : batch) t.success.push_back(w.op);
  const bool fenced = add_fence(t);
  auto shared = std::make_shared<std::vector<PendingWrite>>(std::move(batch));
  send_txn(txn_body(t, /*with_prev=*/true),
           [this, shared, fenced](const StoreStatus& status, TxnResult&& tr, element doc) {
             auto& ws = *shared;
             StoreStatus st = status;
             if (st.ok() && fenced && !tr.succeeded) {
               log_warn("store_write_fenced").kv("writes", static_cast<uint64_t>(ws.size()));
               st = fenced_status();
               for (auto& w : ws) w.cb(WriteResult{st, 0, {}});
               return;
             }
             if (!st.ok() && st.code != StoreCode::kUnavailable && ws.size() > 1) {
               // One bad op (an unknown lease, say) fails the whole txn: retry each alone
               // so the others are not failed with it.
               for (auto& w : ws) send_write_batch({std::move(w)});
               return;
             }
             std::vector<WriteResult> results =
                 st.ok() ? decode_txn_writes(doc, ws.size()) : std::vector<WriteResult>(ws.size());
             for (size_t i = 0; i < ws.size(); ++i) {
               WriteResult r = std::move(results[i]);
               for (auto& kv : r.prev_kvs) decode_value(kv);
               r.status = st;
               r.revision = tr.revision;
               ws[i].cb(std::move(r));
             }
           });
}

void EtcdStore::send_txn(std::string body, std::function<void(const StoreStatus&, TxnResult&&, element)> cb) {
  ++txns_in_flight_;
  call(
      "/v3/kv/txn", std::move(body),
      [this, cb = std::move(cb)](const StoreStatus& st, element doc) {
        --txns_in_flight_;
        TxnResult r = st.ok() ? decode_txn(doc) : TxnResult{};
        for (auto& range : r.ranges) {
          for (auto& kv : range.kvs) decode_value(kv);
        }
        r.status = st;
        cb(st, std::move(r), doc);
        arm_flush();  // what waited for a free slot goes now, as one txn
      },
      endpoints_.size());
}

namespace {

// A compare-and-write that can share a txn with others of its turn: it only
// writes single keys on success and reads nothing. Its failure branch may
// read: a shared txn that fails is sent again one by one, each with its own.
bool combinable(const TxnRequest& t) {
  if (t.unfenced || t.compares.empty() || t.success.size() > 8) return false;
  for (const auto& op : t.success) {
    if (op.type == TxnOp::Type::kRange || op.prefix) return false;
  }
  return true;
}

// The distinct compares of a group: every create of a pod storm checks the
// same namespace, and one copy of that compare does for all of them (etcd
// evaluates each copy, and the gateway decodes each).
class DistinctCompares {
 public:
  // True the first time this compare is seen.
  bool add(const Compare& c) {
    return seen_.emplace(c.key, static_cast<int>(c.target), static_cast<int>(c.op), c.number, c.value).second;
  }
  size_t size() const { return seen_.size(); }
  void clear() { seen_.clear(); }

 private:
  std::set<std::tuple<std::string, int, int, int64_t, std::string>> seen_;
};

std::vector<std::string> written_keys(const TxnRequest& t) {
  std::vector<std::string> keys;
  for (const auto& op : t.success) keys.push_back(op.key);
  return keys;
}

}  // namespace

// Independent compare-and-writes of one loop turn (a pod storm's creates and
// bindings) go out as one txn with every compare: when all hold — the usual
// case — one raft round serves them all; when any fails, each is sent again
// on its own, so each still gets its own answer.
void EtcdStore::txn(TxnRequest request, TxnCallback cb) {
  for (auto& op : request.success) op.value = values_.encode(std::move(op.value));
  for (auto& op : request.failure) op.value = values_.encode(std::move(op.value));
  // A value compare sees the stored form (packing is deterministic: the same value packs the same).
  for (auto& c : request.compares) {
    if (c.target == Compare::Target::kValue) c.value = values_.encode(std::move(c.value));
  }
  if (!combinable(request)) {
    const bool fenced = add_fence(request);
    send_txn(txn_body(request, false), [this, fenced, cb = std::move(cb)](const StoreStatus&, TxnResult&& r, element) {
      if (fenced && r.status.ok() && !r.succeeded && fence_failed(r)) r.status = fenced_status();
      cb(std::move(r));
    });
    return;
  }
  pending_txns_.push_back({std::move(request), std::move(cb)});
  arm_flush();
}

void EtcdStore::flush_txns() {
  std::vector<PendingTxn> all = std::move(pending_txns_);
  pending_txns_.clear();
  std::vector<PendingTxn> group;
  // A key one member writes is not touched by another (two creates of one
  // name must not both succeed); keys only compared are shared freely (the
  // namespace every create of a pod storm checks).
  std::set<std::string> written, compared;
  DistinctCompares compares;
  size_t ops = 0;
  for (auto& t : all) {
    auto writes = written_keys(t.request);
    bool clash = false;
    for (const auto& k : writes) clash = clash || written.count(k) != 0 || compared.count(k) != 0;
    for (const auto& c : t.request.compares) clash = clash || written.count(c.key) != 0;
    if (!group.empty() && (clash || compares.size() + t.request.compares.size() > kMaxOpsPerTxn ||
                           ops + t.request.success.size() > kMaxOpsPerTxn)) {
      send_txn_group(std::move(group));
      group.clear();
      written.clear();
      compared.clear();
      compares.clear();
      ops = 0;
    }
    written.insert(writes.begin(), writes.end());
    for (const auto& c : t.request.compares) {
      compared.insert(c.key);
      compares.add(c);
    }
    ops += t.request.success.size();
    group.push_back(std::move(t));
  }
  if (!group.empty()) send_txn_group(std::move(group));
}

void EtcdStore::send_txn_alone(PendingTxn t) {
  auto cb = std::make_shared<TxnCallback>(std::move(t.cb));
  const bool fenced = add_fence(t.request);
  send_txn(txn_body(t.request, false), [this, cb, fenced](const StoreStatus&, TxnResult&& r, element) {
    if (fenced && r.status.ok() && !r.succeeded && fence_failed(r)) r.status = fenced_status();
    (*cb)(std::move(r));
  });
}

void EtcdStore::send_txn_group(std::vector<PendingTxn> group) {
  if (group.size() == 1) return send_txn_alone(std::move(group[0]));
  TxnRequest combined;
  DistinctCompares compares;
  for (const auto& t : group) {
    for (const auto& c : t.request.compares) {
      if (compares.add(c)) combined.compares.push_back(c);
    }
    combined.success.insert(combined.success.end(), t.request.success.begin(), t.request.success.end());
  }
  // A failed fence fails the group; each is then sent alone and hears why.
  if (fence_) combined.compares.push_back(*fence_);
  auto shared = std::make_shared<std::vector<PendingTxn>>(std::move(group));
  send_txn(txn_body(combined, false), [this, shared](const StoreStatus& st, TxnResult&& r, element) {
    if ((st.ok() && !r.succeeded) || (!st.ok() && st.code != StoreCode::kUnavailable)) {
      for (auto& t : *shared) send_txn_alone(std::move(t));  // someone's compare failed: ask one by one
      return;
    }
    for (auto& t : *shared) {
      TxnResult each;
      each.status = st;
      each.succeeded = r.succeeded;
      each.revision = r.revision;
      t.cb(std::move(each));
    }
  });
}

// ---- watches ------------------------------------------------------------------------

Store::WatchId EtcdStore::watch(std::string prefix, int64_t start_revision, WatchCallback cb, bool deleted_values) {
  auto w = std::make_unique<Watch>();
  w->id = next_watch_++;
  w->prefix = std::move(prefix);
  w->deleted_values = deleted_values;
  w->next_revision = start_revision;
  w->cb = std::move(cb);
  w->retry = clock_.new_timer();
  Watch* raw = w.get();
  WatchId id = raw->id;
  watches_[id] = std::move(w);
  // "From now on" means after every revision this client has already seen, so
  // a write it issues after this call is not missed while etcd sets the watch
  // up. A client that has seen nothing yet watches from etcd's own "now".
  if (start_revision == 0 && revision_ > 0) raw->next_revision = revision_ + 1;
  start_watch(raw);
  return id;
}

void EtcdStore::start_watch(Watch* w) {
  JsonWriter body;
  body.begin_object().key("create_request").begin_object();
  write_range_fields(body, w->prefix, true);
  if (w->next_revision > 0) body.key("start_revision").value(std::to_string(w->next_revision));
  if (w->deleted_values) body.key("prev_kv").value(true);
  body.end_object().end_object();
  const Url& ep = endpoints_[current_ % endpoints_.size()];
  ClientRequest req;
  req.method = "POST";
  req.url = ep.base() + "/v3/watch";
  req.headers = {{"Content-Type", "application/json"}, {"Grpc-Metadata-hasleader", "true"}};
  req.body = body.take();
  req.timeout_ms = 0;  // a watch lasts as long as it is wanted
  WatchId id = w->id;
  req.on_body = [this, id](std::string_view piece) {
    auto it = watches_.find(id);
    if (it == watches_.end()) return;
    Watch* w = it->second.get();
    size_t start = w->buffer.size();
    w->buffer.append(piece);
    size_t nl = w->buffer.find('\n', start);
    if (nl == std::string::npos) return;
    std::string lines = std::move(w->buffer);  // whole lines; the partial tail goes back
    size_t at = 0;
    for (; nl != std::string::npos; nl = lines.find('\n', at)) {
      std::string_view line(lines.data() + at, nl - at);
      at = nl + 1;
      on_watch_line(w, line);
      if (watches_.find(id) == watches_.end()) return;                       // the callback cancelled it
      if (line.size() > kBigWatchLine) w->parser = simdjson::dom::parser();  // do not keep its capacity
    }
    w->buffer.assign(lines, at, std::string::npos);
  };
  w->buffer.clear();
  w->request = stream_client_.request(std::move(req), [this, id](ClientResponse&& r) {
    auto it = watches_.find(id);
    if (it == watches_.end() || closing_) return;
    if (r.error != 0) mark_down(r.error_text);
    restart_watch(it->second.get());  // the stream ended: pick up where it stopped
  });
}

void EtcdStore::on_watch_line(Watch* w, std::string_view line) {
  WatchLine got;
  if (!decode_watch_line(w->parser, line, &got)) return;
  mark_up();
  w->backoff_ms = 0;
  revision_ = std::max(revision_, got.revision);
  if (got.canceled) {
    if (got.compact_revision > 0) {
      WatchCallback cb = std::move(w->cb);
      WatchId id = w->id;
      stream_client_.cancel(w->request);
      watches_.erase(id);
      cb(StoreStatus{StoreCode::kCompacted, "requested revision is no longer kept"}, {});
    }
    return;
  }
  if (got.created && w->next_revision == 0) w->next_revision = got.revision + 1;
  if (got.events.empty()) return;
  for (auto& e : got.events) {
    decode_value(e.kv);
    if (e.prev_kv) decode_value(*e.prev_kv);
  }
  w->next_revision = got.events.back().kv.mod_revision + 1;
  WatchCallback cb = w->cb;  // the callback may cancel this watch
  cb(StoreStatus{}, got.events);
}

void EtcdStore::decode_value(KeyValue& kv) {
  if (values_.decode(&kv.value) || told_unreadable_) return;
  told_unreadable_ = true;
  log_warn("etcd_value_unreadable")
      .kv("key", kv.key)
      .kv("why", "packed against another dictionary, or damaged; passed on as stored");
}

void EtcdStore::restart_watch(Watch* w) {
  w->backoff_ms = std::max(options_.reconnect_min_ms, std::min(w->backoff_ms * 2, options_.reconnect_max_ms));
  current_ = (current_ + 1) % endpoints_.size();
  WatchId id = w->id;
  w->retry->start(w->backoff_ms, [this, id] {
    auto it = watches_.find(id);
    if (it != watches_.end() && !closing_) start_watch(it->second.get());
  });
}

void EtcdStore::cancel_watch(WatchId id) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  stream_client_.cancel(it->second->request);
  watches_.erase(it);
}

// ---- leases -------------------------------------------------------------------------

void EtcdStore::lease_grant(int64_t ttl_seconds, LeaseCallback cb) {
  std::string body = "{\"TTL\":\"" + std::to_string(ttl_seconds) + "\"}";
  call(
      "/v3/lease/grant", std::move(body),
      [cb = std::move(cb)](const StoreStatus& st, element doc) {
        LeaseResult r;
        r.status = st;
        if (st.ok()) {
          r.id = i64_field(doc, "ID");
          r.ttl_seconds = i64_field(doc, "TTL");
          std::string_view err;
          if (doc["error"].get(err) == simdjson::SUCCESS && !err.empty())
            r.status = {StoreCode::kInvalid, std::string(err)};
        }
        cb(std::move(r));
      },
      endpoints_.size());
}

void EtcdStore::lease_keepalive(int64_t id, LeaseCallback cb) {
  // The gateway answers a keep-alive as a stream: take the first result, then
  // drop the connection.
  const Url& ep = endpoints_[current_ % endpoints_.size()];
  ClientRequest req;
  req.method = "POST";
  req.url = ep.base() + "/v3/lease/keepalive";
  req.headers = {{"Content-Type", "application/json"}, {"Grpc-Metadata-hasleader", "true"}};
  req.body = "{\"ID\":\"" + std::to_string(id) + "\"}";
  req.timeout_ms = options_.request_timeout_ms;
  struct State {
    std::string buffer;
    bool answered = false;
    HttpClient::RequestId request = 0;
    LeaseCallback cb;
  };
  auto state = std::make_shared<State>();
  state->cb = std::move(cb);
  req.on_body = [this, id, state](std::string_view piece) {
    if (state->answered) return;
    state->buffer.append(piece);
    size_t nl = state->buffer.find('\n');
    if (nl == std::string::npos) return;
    element doc, result;
    LeaseResult r;
    r.id = id;
    if (parser_.parse(state->buffer.substr(0, nl)).get(doc) != simdjson::SUCCESS ||
        doc["result"].get(result) != simdjson::SUCCESS) {
      r.status = {StoreCode::kInvalid, "unexpected keep-alive answer"};
    } else {
      r.ttl_seconds = i64_field(result, "TTL");
      if (r.ttl_seconds <= 0) r.status = {StoreCode::kNotFound, "lease not found"};
    }
    state->answered = true;
    stream_client_.cancel(state->request);
    mark_up();
    state->cb(std::move(r));
  };
  state->request = stream_client_.request(std::move(req), [this, id, state](ClientResponse&& r) {
    if (state->answered) return;
    state->answered = true;
    LeaseResult out;
    out.id = id;
    if (r.error != 0) {
      mark_down(r.error_text);
      out.status = StoreStatus::unavailable("etcd unreachable: " + r.error_text);
    } else {
      out.status = {StoreCode::kNotFound, "lease not found"};
    }
    state->cb(std::move(out));
  });
}

void EtcdStore::lease_revoke(int64_t id, LeaseCallback cb) {
  std::string body = "{\"ID\":\"" + std::to_string(id) + "\"}";
  call(
      "/v3/lease/revoke", std::move(body),
      [id, cb = std::move(cb)](const StoreStatus& st, element) {
        cb(LeaseResult{st, id, 0});
      },
      endpoints_.size());
}

// ---- shutdown -------------------------------------------------------------------------

void EtcdStore::close(std::function<void()> done) {
  if (closing_) return;
  flush_writes();  // what was asked in this turn still goes out
  flush_txns();
  closing_ = true;
  probe_timer_->stop();
  watches_.clear();
  auto left = std::make_shared<int>(3);
  auto step = [left, done = std::move(done)] {
    if (--*left == 0 && done) done();
  };
  client_.close(step);
  stream_client_.close(step);
  uv_close(reinterpret_cast<uv_handle_t*>(&idle_), [](uv_handle_t* h) { (void)h; });
  step();
}

}  // namespace uvsched
