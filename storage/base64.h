// Base64 for etcd's JSON gateway (keys and values travel base64-encoded),
// through OpenSSL's libcrypto.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace uvsched {

std::string base64_encode(std::string_view in);
std::optional<std::string> base64_decode(std::string_view in);

}  // namespace uvsched
