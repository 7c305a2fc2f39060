#include "reactor/json_writer.h"

#include <charconv>
#include <cmath>

namespace uvsched {

namespace {

// Bytes a JSON string cannot hold as they are: quote, backslash, control characters.
constexpr bool needs_escape(unsigned char c) { return c == '"' || c == '\\' || c < 0x20 || c == 0x7f; }

void append_escaped(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default: {
      const char u[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
      out.append(u, sizeof u);
    }
  }
}

}  // namespace

// Runs of plain bytes are copied whole: a byte at a time, this was most of
// the cost of writing a txn of base64 values for etcd.
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  size_t run = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (!needs_escape(c)) continue;
    out.append(s.data() + run, i - run);
    append_escaped(out, c);
    run = i + 1;
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (first_.back() == 0) out_ += ',';
    first_.back() = 0;
  }
}

JsonWriter& JsonWriter::begin_object() {
  separate();
  out_ += '{';
  first_.push_back(1);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  out_ += '}';
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  separate();
  out_ += '[';
  first_.push_back(1);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  out_ += ']';
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  separate();
  append_json_string(out_, k);
  out_ += ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  separate();
  append_json_string(out_, s);
  return *this;
}

template <typename Int>
static void append_integer(std::string& out, Int n) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
  (void)ec;
  out.append(buf, end);
}

JsonWriter& JsonWriter::value(int64_t n) {
  separate();
  append_integer(out_, n);
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t n) {
  separate();
  append_integer(out_, n);
  return *this;
}

JsonWriter& JsonWriter::value(double d) {
  separate();
  if (!std::isfinite(d)) {
    out_ += "null";
    return *this;
  }
  char buf[32];
  // The shortest round-trip form, but never a plain integer beyond 64 bits:
  // to_chars may print 1.5e21 as 1500000000000000000000, which JSON readers
  // (simdjson among them) refuse as a big integer.
  auto [end, ec] = std::fabs(d) >= 9e18 ? std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific)
                                        : std::to_chars(buf, buf + sizeof buf, d);
  (void)ec;
  out_.append(buf, end);
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  separate();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  separate();
  out_ += json;
  return *this;
}

}  // namespace uvsched
