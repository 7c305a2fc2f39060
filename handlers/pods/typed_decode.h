// What the API server's decoder does before anything else looks at a body:
// every field of a described type (api_schema.h) must have its JSON type
// (else 400 BadRequest naming it); a field the type does not have, and a
// field given twice, are handled as the request's fieldValidation says:
// Strict refuses them, Warn drops them and says so in a Warning header (the
// API server's default), Ignore drops them quietly. A field given twice keeps
// its last value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "handlers/json_value.h"
#include "handlers/pods/api_schema.h"
#include "handlers/pods/pod_validation.h"

namespace uvsched {

enum class FieldValidation { kIgnore, kWarn, kStrict };

// The query parameter: "" (Warn), Ignore, Warn or Strict; nullopt otherwise.
std::optional<FieldValidation> parse_field_validation(std::string_view value);

struct TypedDecode {
  std::vector<FieldIssue> type_errors;  // the body cannot be this type: 400
  // The same, as a custom resource's schema validation words them (its
  // answer is a 422 Invalid: its body is decoded untyped, then checked).
  std::vector<FieldIssue> schema_errors;
  std::string_view version = "v1";     // of the type decoded, for message()
  std::vector<std::string> unknown;    // field paths the type does not have (dropped unless Strict)
  std::vector<std::string> duplicate;  // field paths given more than once (the last kept)

  // Whether the request is refused: type errors, or Strict with unknown or duplicate fields.
  bool refused(FieldValidation mode) const;
  // The API server's message for a refusal ("Pod in version "v1" cannot be handled as a Pod: ...",
  // or "strict decoding error: ...") and its causes.
  std::string message(std::string_view kind, FieldValidation mode) const;
  std::vector<FieldIssue> causes(FieldValidation mode) const;
  // Warning header values (RFC 7234 form, code 299) for what Warn dropped.
  std::vector<std::string> warnings() const;
};

// Checks `obj` against `type`, dropping unknown fields and all but the last
// of duplicated ones (under every mode: a refused body is not stored anyway).
TypedDecode decode_typed(JsonValue& obj, const SchemaType& type);

}  // namespace uvsched
