#include "storage/base64.h"

#include <absl/strings/escaping.h>

namespace uvsched {
namespace {

// Debian builds Abseil with its own string_view type.
absl::string_view view(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace

std::string base64_encode(std::string_view in) { return absl::Base64Escape(view(in)); }

std::optional<std::string> base64_decode(std::string_view in) {
  // Abseil also takes unpadded text; the gateway always pads, so anything
  // else is a corrupt answer and is refused as before.
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  if (!absl::Base64Unescape(view(in), &out)) return std::nullopt;
  return out;
}

}  // namespace uvsched
