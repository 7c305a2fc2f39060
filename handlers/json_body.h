// Reading JSON request bodies with simdjson: a parse failure or a field of the
// wrong type becomes one clear error that names the field, for a 400.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace uvsched {

struct JsonError {
  std::string message;
  std::string field;  // empty when the body as a whole is wrong
  // Every problem found, this one first, when a decoder looks at all the
  // fields (a TrainRequest); empty when it stopped at the first.
  std::vector<std::pair<std::string, std::string>> all;  // (field, message)
};

// Parses `body` (simdjson copies it into padded memory when needed) and checks
// it is an object. The element lives as long as `parser` is not reused.
std::optional<JsonError> parse_json_object(simdjson::dom::parser& parser, std::string_view body,
                                           simdjson::dom::object* out);

// Each reader leaves *out alone when the field is absent (or null) and
// returns an error when it is present with the wrong type, or absent but required.
// `path` names the field in errors, e.g. "options.k".
std::optional<JsonError> read_string(simdjson::dom::object obj, std::string_view key, std::string_view path,
                                     std::string* out, bool required = false);
std::optional<JsonError> read_int(simdjson::dom::object obj, std::string_view key, std::string_view path, int64_t* out,
                                  bool required = false);
std::optional<JsonError> read_number(simdjson::dom::object obj, std::string_view key, std::string_view path,
                                     double* out, bool required = false);
std::optional<JsonError> read_bool(simdjson::dom::object obj, std::string_view key, std::string_view path, bool* out,
                                   bool required = false);
// present: set to whether the object was there.
std::optional<JsonError> read_object(simdjson::dom::object obj, std::string_view key, std::string_view path,
                                     simdjson::dom::object* out, bool* present, bool required = false);
std::optional<JsonError> read_array(simdjson::dom::object obj, std::string_view key, std::string_view path,
                                    simdjson::dom::array* out, bool* present, bool required = false);

}  // namespace uvsched
