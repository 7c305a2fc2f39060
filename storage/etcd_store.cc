#include "storage/etcd_store.h"

#include <set>

#include "reactor/json_writer.h"
#include "reactor/log.h"
#include "storage/base64.h"

namespace uvsched {
namespace {

using simdjson::dom::element;

constexpr size_t kMaxOpsPerTxn = 128;  // etcd's default --max-txn-ops

// etcd writes int64 as JSON strings; fields at their default are absent.
int64_t i64_field(element obj, const char* name) {
  element v;
  if (obj[name].get(v) != simdjson::SUCCESS) return 0;
  if (v.is_string()) {
    std::string_view s;
    if (v.get(s) != simdjson::SUCCESS) return 0;
    return std::strtoll(std::string(s).c_str(), nullptr, 10);
  }
  int64_t n = 0;
  if (v.get(n) == simdjson::SUCCESS) return n;
  uint64_t u = 0;
  if (v.get(u) == simdjson::SUCCESS) return static_cast<int64_t>(u);
  return 0;
}

std::string b64_field(element obj, const char* name) {
  std::string_view s;
  if (obj[name].get(s) != simdjson::SUCCESS) return {};
  auto d = base64_decode(s);
  return d ? *d : std::string();
}

bool bool_field(element obj, const char* name) {
  bool b = false;
  return obj[name].get(b) == simdjson::SUCCESS && b;
}

KeyValue kv_from(element obj) {
  KeyValue kv;
  kv.key = b64_field(obj, "key");
  kv.value = b64_field(obj, "value");
  kv.create_revision = i64_field(obj, "create_revision");
  kv.mod_revision = i64_field(obj, "mod_revision");
  kv.version = i64_field(obj, "version");
  kv.lease = i64_field(obj, "lease");
  return kv;
}

std::vector<KeyValue> kvs_from(element obj, const char* name) {
  std::vector<KeyValue> out;
  simdjson::dom::array arr;
  if (obj[name].get(arr) != simdjson::SUCCESS) return out;
  for (element e : arr) out.push_back(kv_from(e));
  return out;
}

int64_t header_revision(element obj) {
  element h;
  return obj["header"].get(h) == simdjson::SUCCESS ? i64_field(h, "revision") : 0;
}

// The end of the range holding every key that starts with `prefix`.
std::string prefix_end(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(prefix.back());
    if (last < 0xff) {
      ++last;
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

void write_range_fields(JsonWriter& w, const std::string& key, bool prefix) {
  w.key("key").value(base64_encode(key));
  if (prefix) w.key("range_end").value(base64_encode(prefix_end(key)));
}

void write_op(JsonWriter& w, const TxnOp& op) {
  w.begin_object();
  switch (op.type) {
    case TxnOp::Type::kPut:
      w.key("request_put").begin_object();
      w.key("key").value(base64_encode(op.key)).key("value").value(base64_encode(op.value));
      if (op.lease != 0) w.key("lease").value(std::to_string(op.lease));
      w.key("prev_kv").value(true).end_object();
      break;
    case TxnOp::Type::kDelete:
      w.key("request_delete_range").begin_object();
      write_range_fields(w, op.key, op.prefix);
      w.key("prev_kv").value(true).end_object();
      break;
    case TxnOp::Type::kRange:
      w.key("request_range").begin_object();
      write_range_fields(w, op.key, op.prefix);
      w.end_object();
      break;
  }
  w.end_object();
}

std::string_view target_name(Compare::Target t) {
  switch (t) {
    case Compare::Target::kCreateRevision: return "CREATE";
    case Compare::Target::kModRevision: return "MOD";
    case Compare::Target::kVersion: return "VERSION";
    case Compare::Target::kValue: return "VALUE";
  }
  return "MOD";
}

std::string_view op_name(Compare::Op op) {
  switch (op) {
    case Compare::Op::kEqual: return "EQUAL";
    case Compare::Op::kNotEqual: return "NOT_EQUAL";
    case Compare::Op::kGreater: return "GREATER";
    case Compare::Op::kLess: return "LESS";
  }
  return "EQUAL";
}

std::string txn_body(const TxnRequest& t) {
  JsonWriter w;
  w.begin_object().key("compare").begin_array();
  for (const auto& c : t.compares) {
    w.begin_object().key("key").value(base64_encode(c.key));
    w.key("target").value(target_name(c.target)).key("result").value(op_name(c.op));
    switch (c.target) {
      case Compare::Target::kCreateRevision: w.key("create_revision").value(std::to_string(c.number)); break;
      case Compare::Target::kModRevision: w.key("mod_revision").value(std::to_string(c.number)); break;
      case Compare::Target::kVersion: w.key("version").value(std::to_string(c.number)); break;
      case Compare::Target::kValue: w.key("value").value(base64_encode(c.value)); break;
    }
    w.end_object();
  }
  w.end_array().key("success").begin_array();
  for (const auto& op : t.success) write_op(w, op);
  w.end_array().key("failure").begin_array();
  for (const auto& op : t.failure) write_op(w, op);
  w.end_array().end_object();
  return w.take();
}

RangeResult range_from(element obj) {
  RangeResult r;
  r.revision = header_revision(obj);
  r.kvs = kvs_from(obj, "kvs");
  r.more = bool_field(obj, "more");
  r.count = i64_field(obj, "count");
  return r;
}

}  // namespace

struct EtcdStore::Watch {
  WatchId id = 0;
  std::string prefix;
  int64_t next_revision = 0;  // 0: from whenever the watch is created
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
      // etcd batches concurrent requests into one raft round: let many be in flight.
      client_(loop, clock, ClientOptions{.max_connections_per_origin = 256}),
      stream_client_(loop, clock, ClientOptions{.max_connections_per_origin = 4096}),
      probe_timer_(clock.new_timer()) {
  uv_idle_init(loop, &idle_);
  idle_.data = this;
  if (options_.tls) {
    client_.use_tls(options_.tls.get());
    stream_client_.use_tls(options_.tls.get());
  }
  schedule_probe();
}

EtcdStore::~EtcdStore() = default;

// ---- requests, fail-over, availability ----------------------------------------

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
      current_ = (current_ + 1) % endpoints_.size();  // try the next member
      if (attempts_left > 1 && !closing_) {
        call(path, std::move(body), std::move(cb), attempts_left - 1);
        return;
      }
      mark_down(why);
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
  call("/v3/maintenance/status", "{}", [this](const StoreStatus&, element) { schedule_probe(); }, endpoints_.size());
}

// ---- kv ---------------------------------------------------------------------------

void EtcdStore::get(std::string key, RangeOptions options, RangeCallback cb) {
  JsonWriter w;
  w.begin_object();
  write_range_fields(w, key, options.prefix);
  if (options.limit > 0) w.key("limit").value(std::to_string(options.limit));
  if (options.keys_only) w.key("keys_only").value(true);
  w.end_object();
  call("/v3/kv/range", w.take(), [cb = std::move(cb)](const StoreStatus& st, element doc) {
    RangeResult r = st.ok() ? range_from(doc) : RangeResult{};
    r.status = st;
    cb(std::move(r));
  }, endpoints_.size());
}

void EtcdStore::put(std::string key, std::string value, int64_t lease, WriteCallback cb) {
  queue_write({TxnOp::Type::kPut, std::move(key), std::move(value), lease, false}, std::move(cb));
}

void EtcdStore::del(std::string key, bool prefix, WriteCallback cb) {
  queue_write({TxnOp::Type::kDelete, std::move(key), {}, 0, prefix}, std::move(cb));
}

// Held until the loop turn is over, so the turn's writes share one txn.
void EtcdStore::queue_write(TxnOp op, WriteCallback cb) {
  pending_writes_.push_back({std::move(op), std::move(cb)});
  if (!idle_active_) {
    uv_idle_start(&idle_, &EtcdStore::on_idle);
    idle_active_ = true;
  }
}

void EtcdStore::on_idle(uv_idle_t* h) {
  auto* self = static_cast<EtcdStore*>(h->data);
  uv_idle_stop(h);
  self->idle_active_ = false;
  self->flush_writes();
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

void EtcdStore::send_write_batch(std::vector<PendingWrite> batch) {
  TxnRequest t;
  for (const auto& w : batch) t.success.push_back(w.op);
  auto shared = std::make_shared<std::vector<PendingWrite>>(std::move(batch));
  send_txn(txn_body(t), [this, shared](const StoreStatus& st, TxnResult&& tr, element doc) {
    auto& ws = *shared;
    if (!st.ok() && st.code != StoreCode::kUnavailable && ws.size() > 1) {
      // One bad op (an unknown lease, say) fails the whole txn: retry each alone
      // so the others are not failed with it.
      for (auto& w : ws) send_write_batch({std::move(w)});
      return;
    }
    simdjson::dom::array responses;
    bool have = st.ok() && doc["responses"].get(responses) == simdjson::SUCCESS;
    auto it = have ? responses.begin() : simdjson::dom::array::iterator();
    for (auto& w : ws) {
      WriteResult r;
      r.status = st;
      r.revision = tr.revision;
      if (have && it != responses.end()) {
        element resp = *it;
        element body;
        if (resp["response_put"].get(body) == simdjson::SUCCESS) {
          element prev;
          if (body["prev_kv"].get(prev) == simdjson::SUCCESS) r.prev_kvs.push_back(kv_from(prev));
        } else if (resp["response_delete_range"].get(body) == simdjson::SUCCESS) {
          r.deleted = i64_field(body, "deleted");
          r.prev_kvs = kvs_from(body, "prev_kvs");
        }
        ++it;
      }
      w.cb(std::move(r));
    }
  });
}

void EtcdStore::send_txn(std::string body, std::function<void(const StoreStatus&, TxnResult&&, element)> cb) {
  call("/v3/kv/txn", std::move(body), [cb = std::move(cb)](const StoreStatus& st, element doc) {
    TxnResult r;
    r.status = st;
    if (st.ok()) {
      r.succeeded = bool_field(doc, "succeeded");
      r.revision = header_revision(doc);
    }
    cb(st, std::move(r), doc);
  }, endpoints_.size());
}

void EtcdStore::txn(TxnRequest request, TxnCallback cb) {
  send_txn(txn_body(request), [cb = std::move(cb)](const StoreStatus& st, TxnResult&& r, element doc) {
    simdjson::dom::array responses;
    if (st.ok() && doc["responses"].get(responses) == simdjson::SUCCESS) {
      for (element resp : responses) {
        element range;
        if (resp["response_range"].get(range) == simdjson::SUCCESS) r.ranges.push_back(range_from(range));
      }
    }
    cb(std::move(r));
  });
}

// ---- watches ------------------------------------------------------------------------

Store::WatchId EtcdStore::watch(std::string prefix, int64_t start_revision, WatchCallback cb) {
  auto w = std::make_unique<Watch>();
  w->id = next_watch_++;
  w->prefix = std::move(prefix);
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
  body.key("prev_kv").value(true).end_object().end_object();
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
    w->buffer.append(piece);
    size_t nl;
    while ((nl = w->buffer.find('\n')) != std::string::npos) {
      std::string line = w->buffer.substr(0, nl);
      w->buffer.erase(0, nl + 1);
      on_watch_line(w, line);
      if (watches_.find(id) == watches_.end()) return;  // the callback cancelled it
    }
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
  if (line.find_first_not_of(" \r\t") == std::string_view::npos) return;
  element doc, result;
  if (w->parser.parse(line.data(), line.size()).get(doc) != simdjson::SUCCESS ||
      doc["result"].get(result) != simdjson::SUCCESS)
    return;
  mark_up();
  w->backoff_ms = 0;
  int64_t rev = header_revision(result);
  revision_ = std::max(revision_, rev);
  if (bool_field(result, "canceled")) {
    if (i64_field(result, "compact_revision") > 0) {
      WatchCallback cb = std::move(w->cb);
      WatchId id = w->id;
      stream_client_.cancel(w->request);
      watches_.erase(id);
      cb(StoreStatus{StoreCode::kCompacted, "requested revision is no longer kept"}, {});
    }
    return;
  }
  if (bool_field(result, "created") && w->next_revision == 0) w->next_revision = rev + 1;
  simdjson::dom::array events;
  if (result["events"].get(events) != simdjson::SUCCESS) return;
  std::vector<WatchEvent> out;
  for (element e : events) {
    WatchEvent ev;
    std::string_view type;
    ev.type = e["type"].get(type) == simdjson::SUCCESS && type == "DELETE" ? WatchEvent::Type::kDelete
                                                                           : WatchEvent::Type::kPut;  // PUT is the default, so absent
    element kv, prev;
    if (e["kv"].get(kv) == simdjson::SUCCESS) ev.kv = kv_from(kv);
    if (e["prev_kv"].get(prev) == simdjson::SUCCESS) ev.prev_kv = kv_from(prev);
    out.push_back(std::move(ev));
  }
  if (out.empty()) return;
  w->next_revision = out.back().kv.mod_revision + 1;
  WatchCallback cb = w->cb;  // the callback may cancel this watch
  cb(StoreStatus{}, out);
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
  call("/v3/lease/grant", std::move(body), [cb = std::move(cb)](const StoreStatus& st, element doc) {
    LeaseResult r;
    r.status = st;
    if (st.ok()) {
      r.id = i64_field(doc, "ID");
      r.ttl_seconds = i64_field(doc, "TTL");
      std::string_view err;
      if (doc["error"].get(err) == simdjson::SUCCESS && !err.empty()) r.status = {StoreCode::kInvalid, std::string(err)};
    }
    cb(std::move(r));
  }, endpoints_.size());
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
  call("/v3/lease/revoke", std::move(body), [id, cb = std::move(cb)](const StoreStatus& st, element) {
    cb(LeaseResult{st, id, 0});
  }, endpoints_.size());
}

// ---- shutdown -------------------------------------------------------------------------

void EtcdStore::close(std::function<void()> done) {
  if (closing_) return;
  flush_writes();  // what was asked in this turn still goes out
  closing_ = true;
  probe_timer_->stop();
  watches_.clear();
  auto left = std::make_shared<int>(3);
  auto step = [left, done = std::move(done)] {
    if (--*left == 0 && done) done();
  };
  client_.close(step);
  stream_client_.close(step);
  uv_close(reinterpret_cast<uv_handle_t*>(&idle_), [](uv_handle_t* h) {
    (void)h;
  });
  step();
}

}  // namespace uvsched
