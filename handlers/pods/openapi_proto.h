// The OpenAPI v2 document in the protobuf form kubectl before 1.27 asks for
// (gnostic's openapi_v2.Document, `Accept:
// application/com.github.proto-openapi.spec.v2@v1.0+protobuf`) to validate a
// manifest on the client. It is made from the JSON document uvsched serves,
// so both say the same: swagger, info, and each definition's schema ($ref,
// format, description, required, additionalProperties, type, items,
// properties and its x- extensions, whose values travel as YAML: JSON text).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace uvsched {

inline constexpr std::string_view kOpenApiV2ProtobufType = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

// nullopt when `json` is not an OpenAPI v2 document.
std::optional<std::string> openapi_v2_protobuf(std::string_view json);

}  // namespace uvsched
