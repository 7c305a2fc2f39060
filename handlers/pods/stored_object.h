// How a stored object goes out: its resource version (the store's mod
// revision) spliced into its metadata, one at a time or as a list written
// item by item.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "handlers/json_value.h"
#include "storage/store.h"

namespace uvsched {

// `stored` with metadata.resourceVersion = rv. Stored objects lead with kind,
// apiVersion and a non-empty metadata object, so it is spliced in without a parse.
std::string with_rv(const std::string& stored, int64_t rv);
// The stored object parsed, its resourceVersion set; nullopt if it is not JSON.
std::optional<JsonValue> parse_stored(const KeyValue& kv);

// Lists are written item by item into one string: at 100k pods every copy
// of the whole list costs tens of megabytes.
class ListWriter {
 public:
  explicit ListWriter(std::string_view kind) {
    out_ = "{\"kind\":\"";
    out_ += kind;
    out_ += "\",\"apiVersion\":\"v1\",\"items\":[";
  }
  void add(const std::string& stored, int64_t rv) {
    if (count_++ > 0) out_ += ',';
    out_ += with_rv(stored, rv);
  }
  // The list's metadata comes last: a continue token is known only once the
  // items are written, and a sliced list's first slices are already sent.
  void finish(int64_t rv, const std::string& cont) {
    out_ += "],\"metadata\":{\"resourceVersion\":\"" + std::to_string(rv) + "\"";
    if (!cont.empty()) out_ += ",\"continue\":\"" + cont + "\"";
    out_ += "}}";
  }
  // What is written so far (all of it, after finish).
  std::string take() {
    std::string out = std::move(out_);
    out_.clear();
    return out;
  }
  size_t size() const { return count_; }

 private:
  std::string out_;
  size_t count_ = 0;
};

}  // namespace uvsched
