// Base64 for etcd's JSON gateway (keys and values travel base64-encoded),
// through Abseil's escaping functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace uvsched {

std::string base64_encode(std::string_view in);
// Padded standard base64 only, as the gateway writes it; nullopt otherwise.
std::optional<std::string> base64_decode(std::string_view in);

}  // namespace uvsched
