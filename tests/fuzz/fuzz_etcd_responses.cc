// etcd gateway answers on arbitrary bytes: the body of a range, txn (reads
// and writes) and lease answer, and the lines of a watch stream; and the
// bytes as a value stored in etcd (packed or not). Decoding never fails
// hard; what decodes must be self-consistent.
#include <cstddef>
#include <cstdint>
#include <string>

#include "storage/etcd_values.h"
#include "storage/etcd_wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uvsched::etcd_wire;
  std::string text(reinterpret_cast<const char*>(data), size);
  static simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc) == simdjson::SUCCESS && doc.is_object()) {
    uvsched::RangeResult range = decode_range(doc);
    if (range.kvs.size() > size) __builtin_trap();  // every kv came from the input
    decode_txn(doc);
    auto writes = decode_txn_writes(doc, 3);
    if (writes.size() != 3) __builtin_trap();
    i64_field(doc, "ID");
    i64_field(doc, "TTL");
  }
  // The same bytes as a stored value: read as is, and as if behind this
  // dictionary's marker (what a damaged packed value would look like).
  // Whatever reads back, written again, reads back the same.
  static uvsched::EtcdValues values(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"x"}})", true);
  static const std::string marker = values.encode(std::string(200, 'x')).substr(0, uvsched::EtcdValues::kMarkerSize);
  for (std::string value : {text, marker + text}) {
    if (!values.decode(&value)) continue;
    std::string again = values.encode(value);
    if (!values.decode(&again) || again != value) __builtin_trap();
  }
  // The same bytes as a watch stream: one line at a time, as the store reads it.
  static simdjson::dom::parser line_parser;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line(text.data() + start, (nl == std::string::npos ? text.size() : nl) - start);
    WatchLine got;
    if (decode_watch_line(line_parser, line, &got) && got.events.size() > line.size()) __builtin_trap();
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return 0;
}
