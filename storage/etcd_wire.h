// etcd 3.4's v3 JSON gateway on the wire: request bodies out, answers in.
// Pure translation, no I/O: int64 travel as strings, bytes as base64, fields
// at their default are omitted, a prefix is a range_end. Decoders take
// whatever JSON arrives and never fail hard: a missing field reads as its
// default, as the gateway itself omits defaults.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reactor/json_writer.h"
#include "storage/store.h"

namespace uvsched::etcd_wire {

// The end of the range holding every key that starts with `prefix`.
std::string prefix_end(std::string prefix);
// "key" (and "range_end" for a prefix) of a range, delete or watch request.
void write_range_fields(JsonWriter& w, const std::string& key, bool prefix);
// The body of POST /v3/kv/txn. with_prev asks for each write's old value
// (puts and deletes report it; a TxnResult does not, and etcd's reading and
// encoding it cost it ~15% of its CPU in a pod storm).
std::string txn_body(const TxnRequest& t, bool with_prev);

int64_t i64_field(simdjson::dom::element obj, const char* name);
bool bool_field(simdjson::dom::element obj, const char* name);
KeyValue decode_kv(simdjson::dom::element obj);
std::vector<KeyValue> decode_kvs(simdjson::dom::element obj, const char* name);
int64_t header_revision(simdjson::dom::element obj);

// A /v3/kv/range answer (also each response_range of a txn).
RangeResult decode_range(simdjson::dom::element obj);
// A /v3/kv/txn answer: succeeded, revision and the ranges it read.
TxnResult decode_txn(simdjson::dom::element doc);
// Per op of a write-only txn: prev kvs and deleted counts; always `ops` long.
std::vector<WriteResult> decode_txn_writes(simdjson::dom::element doc, size_t ops);

// One newline-delimited line of a /v3/watch stream.
struct WatchLine {
  int64_t revision = 0;
  bool created = false;
  bool canceled = false;
  int64_t compact_revision = 0;
  std::vector<WatchEvent> events;
};
// False when the line is blank, not JSON, or carries no "result".
bool decode_watch_line(simdjson::dom::parser& parser, std::string_view line, WatchLine* out);

}  // namespace uvsched::etcd_wire
