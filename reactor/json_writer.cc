#include "reactor/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace uvsched {

namespace {

// Bytes a JSON string cannot hold as they are: quote, backslash, control characters.
constexpr bool needs_escape(unsigned char c) { return c == '"' || c == '\\' || c < 0x20 || c == 0x7f; }

// Whether any of a word's bytes needs_escape, with the bit tricks for "some
// byte is zero" and "some byte is below n": exact as a yes or no for the word
// (a borrow can only mark bytes above one that really matches).
template <typename Word>
constexpr bool word_needs_escape(Word w) {
  constexpr Word kOnes = static_cast<Word>(~Word{0}) / 0xff, kHighs = kOnes * 0x80;
  auto has_zero = [](Word x) { return static_cast<Word>((x - kOnes) & ~x & kHighs); };
  Word below_space = (w - kOnes * 0x20) & ~w & kHighs;
  return (below_space | has_zero(w ^ (kOnes * '"')) | has_zero(w ^ (kOnes * '\\')) | has_zero(w ^ (kOnes * 0x7f))) != 0;
}

template <typename Word>
Word load(const char* p) {
  Word w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// Whether any byte of `s` needs escaping, a word at a time: the last word
// overlaps the one before it rather than leaving bytes to look at one by one
// (most strings written are keys of four to eight bytes).
bool any_needs_escape(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  if (n >= 8) {
    for (size_t i = 0; i + 8 <= n; i += 8) {
      if (word_needs_escape(load<uint64_t>(p + i))) return true;
    }
    return word_needs_escape(load<uint64_t>(p + n - 8));
  }
  if (n >= 4) return word_needs_escape(load<uint32_t>(p)) || word_needs_escape(load<uint32_t>(p + n - 4));
  for (size_t i = 0; i < n; ++i) {
    if (needs_escape(static_cast<unsigned char>(p[i]))) return true;
  }
  return false;
}

void append_escaped(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default: {
      const char u[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
      out.append(u, sizeof u);
    }
  }
}

}  // namespace

// Nearly every string written (a pod's ~80 keys and values) has nothing to
// escape: it goes out quotes and all in one copy. Otherwise runs of plain
// bytes are still copied whole: a byte at a time, this was most of the cost
// of writing a txn of base64 values for etcd.
void append_json_string(std::string& out, std::string_view s) {
  if (!any_needs_escape(s)) {
    size_t at = out.size();
    out.resize(at + s.size() + 2);
    char* d = out.data() + at;
    d[0] = '"';
    if (!s.empty()) std::memcpy(d + 1, s.data(), s.size());
    d[s.size() + 1] = '"';
    return;
  }
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
  append_json_number(out_, d);
  return *this;
}

void append_json_number(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char buf[32];
  // The shortest round-trip form, but never a plain integer beyond 64 bits:
  // to_chars may print 1.5e21 as 1500000000000000000000, which JSON readers
  // (simdjson among them) refuse as a big integer.
  auto [end, ec] = std::fabs(d) >= 9e18 ? std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific)
                                        : std::to_chars(buf, buf + sizeof buf, d);
  (void)ec;
  out.append(buf, end);
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
