// Strict parsing of the tools' numeric flags: the whole text is the number
// (std::from_chars: no leading spaces, no trailing characters, no locale) and
// it is at least `lo`. std::stoi and friends accept "12abc" and throw on "abc",
// which made a mistyped flag either run with the wrong value or end the tool
// with an uncaught exception.
#pragma once

#include <charconv>
#include <cmath>
#include <string_view>
#include <system_error>

namespace uvsched::cli {

// An integer (int, long, uint64_t...) >= lo.
template <typename Int>
bool parse_int(std::string_view v, Int lo, Int* out) {
  const char* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, *out);
  return ec == std::errc() && p == end && *out >= lo;
}

// A finite number >= lo.
inline bool parse_double(std::string_view v, double lo, double* out) {
  const char* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, *out);
  return ec == std::errc() && p == end && std::isfinite(*out) && *out >= lo;
}

}  // namespace uvsched::cli
