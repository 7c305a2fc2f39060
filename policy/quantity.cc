#include "policy/quantity.h"

#include <cctype>
#include <string>

namespace uvsched {
namespace {

constexpr int64_t kMax = INT64_MAX / 1000;

// value = digits * 10^exp10 * 2^exp2 * 1000, rounded up, in __int128 to stay exact.
std::optional<int64_t> scale(__int128 digits, int exp10, int exp2) {
  __int128 v = digits * 1000;
  while (exp2-- > 0) {
    v *= 2;
    if (v > static_cast<__int128>(kMax) * 1000 * 1000) return std::nullopt;
  }
  for (; exp10 > 0; --exp10) {
    v *= 10;
    if (v > static_cast<__int128>(kMax) * 1000 * 1000) return std::nullopt;
  }
  for (; exp10 < 0; ++exp10) v = (v + 9) / 10;  // round up
  if (v > static_cast<__int128>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

}  // namespace

std::optional<int64_t> parse_quantity_milli(std::string_view s) {
  if (s.empty() || s.size() > 64) return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (s[i] == '+' || s[i] == '-') {
    negative = s[i] == '-';
    ++i;
  }
  __int128 digits = 0;
  int exp10 = 0;
  bool any = false, dot = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (digits < static_cast<__int128>(1) << 100) {
        digits = digits * 10 + (c - '0');
        if (dot) --exp10;
      } else if (!dot) {
        ++exp10;
      }
      any = true;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!any || negative) return std::nullopt;  // resources are never negative
  std::string_view suffix = s.substr(i);
  int exp2 = 0;
  if (suffix.empty()) {
  } else if (suffix == "m") {
    exp10 -= 3;
  } else if (suffix == "k") {
    exp10 += 3;
  } else if (suffix == "M") {
    exp10 += 6;
  } else if (suffix == "G") {
    exp10 += 9;
  } else if (suffix == "T") {
    exp10 += 12;
  } else if (suffix == "P") {
    exp10 += 15;
  } else if (suffix == "E") {
    exp10 += 18;
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    const std::string_view bin = "KMGTPE";
    size_t p = bin.find(suffix[0]);
    if (p == std::string_view::npos) return std::nullopt;
    exp2 = 10 * static_cast<int>(p + 1);
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string e(suffix.substr(1));
    if (e.empty() || e.size() > 3) return std::nullopt;
    size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(e, &used);
    } catch (...) {
      return std::nullopt;
    }
    if (used != e.size()) return std::nullopt;
    exp10 += n;
  } else {
    return std::nullopt;
  }
  return scale(digits, exp10, exp2);
}

std::string format_quantity_milli(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

}  // namespace uvsched
