// A small streaming JSON writer: commas and escaping are its business, the
// caller's is only the order of keys and values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace uvsched {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(int64_t n);
  JsonWriter& value(int n) { return value(static_cast<int64_t>(n)); }
  JsonWriter& value(uint64_t n);
  JsonWriter& value(double d);  // non-finite numbers are written as null
  JsonWriter& value(bool b);
  JsonWriter& null();
  // Pre-encoded JSON (an object kept as text, say), written as one value.
  JsonWriter& raw(std::string_view json);
  // The same, for a caller that writes its value's text itself: the buffer,
  // separated from what came before, to append exactly one value to.
  std::string& raw_buffer() {
    separate();
    return out_;
  }

  const std::string& str() const { return out_; }
  // What is written so far; writing may go on after it (the rest follows).
  std::string take() {
    std::string out = std::move(out_);
    out_.clear();
    return out;
  }
  void reserve(size_t bytes) { out_.reserve(bytes); }

 private:
  void separate();

  std::string out_;
  // Per open container, 1 while no element is written yet: a string, so the
  // usual depth (under 16) needs no allocation.
  std::string first_;
  bool after_key_ = false;
};

// Appends s as a quoted JSON string.
void append_json_string(std::string& out, std::string_view s);

// Appends d as JSON writes it (value(double)): null when it is not finite.
void append_json_number(std::string& out, double d);

}  // namespace uvsched
