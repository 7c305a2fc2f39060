#include "storage/etcd_wire.h"

#include <cstdlib>

#include "storage/base64.h"

namespace uvsched::etcd_wire {

using simdjson::dom::element;

namespace {

std::string b64_field(element obj, const char* name) {
  std::string_view s;
  if (obj[name].get(s) != simdjson::SUCCESS) return {};
  auto d = base64_decode(s);
  return d ? *d : std::string();
}

std::string_view target_name(Compare::Target t) {
  switch (t) {
    case Compare::Target::kCreateRevision:
      return "CREATE";
    case Compare::Target::kModRevision:
      return "MOD";
    case Compare::Target::kVersion:
      return "VERSION";
    case Compare::Target::kValue:
      return "VALUE";
  }
  return "MOD";
}

std::string_view op_name(Compare::Op op) {
  switch (op) {
    case Compare::Op::kEqual:
      return "EQUAL";
    case Compare::Op::kNotEqual:
      return "NOT_EQUAL";
    case Compare::Op::kGreater:
      return "GREATER";
    case Compare::Op::kLess:
      return "LESS";
  }
  return "EQUAL";
}

void write_op(JsonWriter& w, const TxnOp& op, bool with_prev) {
  w.begin_object();
  switch (op.type) {
    case TxnOp::Type::kPut:
      w.key("request_put").begin_object();
      w.key("key").value(base64_encode(op.key)).key("value").value(base64_encode(op.value));
      if (op.lease != 0) w.key("lease").value(std::to_string(op.lease));
      if (with_prev) w.key("prev_kv").value(true);
      w.end_object();
      break;
    case TxnOp::Type::kDelete:
      w.key("request_delete_range").begin_object();
      write_range_fields(w, op.key, op.prefix);
      if (with_prev) w.key("prev_kv").value(true);
      w.end_object();
      break;
    case TxnOp::Type::kRange:
      w.key("request_range").begin_object();
      write_range_fields(w, op.key, op.prefix);
      w.end_object();
      break;
  }
  w.end_object();
}

}  // namespace

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

bool bool_field(element obj, const char* name) {
  bool b = false;
  return obj[name].get(b) == simdjson::SUCCESS && b;
}

KeyValue decode_kv(element obj) {
  KeyValue kv;
  kv.key = b64_field(obj, "key");
  kv.value = b64_field(obj, "value");
  kv.create_revision = i64_field(obj, "create_revision");
  kv.mod_revision = i64_field(obj, "mod_revision");
  kv.version = i64_field(obj, "version");
  kv.lease = i64_field(obj, "lease");
  return kv;
}

std::vector<KeyValue> decode_kvs(element obj, const char* name) {
  std::vector<KeyValue> out;
  simdjson::dom::array arr;
  if (obj[name].get(arr) != simdjson::SUCCESS) return out;
  for (element e : arr) out.push_back(decode_kv(e));
  return out;
}

int64_t header_revision(element obj) {
  element h;
  return obj["header"].get(h) == simdjson::SUCCESS ? i64_field(h, "revision") : 0;
}

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

std::string txn_body(const TxnRequest& t, bool with_prev) {
  JsonWriter w;
  w.begin_object().key("compare").begin_array();
  for (const auto& c : t.compares) {
    w.begin_object().key("key").value(base64_encode(c.key));
    w.key("target").value(target_name(c.target)).key("result").value(op_name(c.op));
    switch (c.target) {
      case Compare::Target::kCreateRevision:
        w.key("create_revision").value(std::to_string(c.number));
        break;
      case Compare::Target::kModRevision:
        w.key("mod_revision").value(std::to_string(c.number));
        break;
      case Compare::Target::kVersion:
        w.key("version").value(std::to_string(c.number));
        break;
      case Compare::Target::kValue:
        w.key("value").value(base64_encode(c.value));
        break;
    }
    w.end_object();
  }
  w.end_array().key("success").begin_array();
  for (const auto& op : t.success) write_op(w, op, with_prev);
  w.end_array().key("failure").begin_array();
  for (const auto& op : t.failure) write_op(w, op, with_prev);
  w.end_array().end_object();
  return w.take();
}

RangeResult decode_range(element obj) {
  RangeResult r;
  r.revision = header_revision(obj);
  r.kvs = decode_kvs(obj, "kvs");
  r.more = bool_field(obj, "more");
  r.count = i64_field(obj, "count");
  return r;
}

TxnResult decode_txn(element doc) {
  TxnResult r;
  r.succeeded = bool_field(doc, "succeeded");
  r.revision = header_revision(doc);
  simdjson::dom::array responses;
  if (doc["responses"].get(responses) == simdjson::SUCCESS) {
    for (element resp : responses) {
      element range;
      if (resp["response_range"].get(range) == simdjson::SUCCESS) r.ranges.push_back(decode_range(range));
    }
  }
  return r;
}

std::vector<WriteResult> decode_txn_writes(element doc, size_t ops) {
  std::vector<WriteResult> out(ops);
  simdjson::dom::array responses;
  if (!doc.is_object() || doc["responses"].get(responses) != simdjson::SUCCESS) return out;
  size_t i = 0;
  for (element resp : responses) {
    if (i == ops) break;
    WriteResult& r = out[i++];
    element body;
    if (resp["response_put"].get(body) == simdjson::SUCCESS) {
      element prev;
      if (body["prev_kv"].get(prev) == simdjson::SUCCESS) r.prev_kvs.push_back(decode_kv(prev));
    } else if (resp["response_delete_range"].get(body) == simdjson::SUCCESS) {
      r.deleted = i64_field(body, "deleted");
      r.prev_kvs = decode_kvs(body, "prev_kvs");
    }
  }
  return out;
}

bool decode_watch_line(simdjson::dom::parser& parser, std::string_view line, WatchLine* out) {
  if (line.find_first_not_of(" \r\t") == std::string_view::npos) return false;
  element doc, result;
  if (parser.parse(line.data(), line.size()).get(doc) != simdjson::SUCCESS ||
      doc["result"].get(result) != simdjson::SUCCESS || !result.is_object())
    return false;
  out->revision = header_revision(result);
  out->canceled = bool_field(result, "canceled");
  out->compact_revision = i64_field(result, "compact_revision");
  out->created = bool_field(result, "created");
  simdjson::dom::array events;
  if (result["events"].get(events) != simdjson::SUCCESS) return true;
  for (element e : events) {
    WatchEvent ev;
    std::string_view type;
    // PUT is the enum's default, so it is absent on the wire.
    ev.type = e["type"].get(type) == simdjson::SUCCESS && type == "DELETE" ? WatchEvent::Type::kDelete
                                                                           : WatchEvent::Type::kPut;
    element kv, prev;
    if (e["kv"].get(kv) == simdjson::SUCCESS) ev.kv = decode_kv(kv);
    if (e["prev_kv"].get(prev) == simdjson::SUCCESS) ev.prev_kv = decode_kv(prev);
    out->events.push_back(std::move(ev));
  }
  return true;
}

}  // namespace uvsched::etcd_wire
