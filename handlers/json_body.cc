#include "handlers/json_body.h"

#include <cmath>

namespace uvsched {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// nullopt: absent or null. Otherwise the element.
std::optional<element> field(simdjson::dom::object obj, std::string_view key) {
  element e;
  if (obj.at_key(key).get(e) != simdjson::SUCCESS || e.is_null()) return std::nullopt;
  return e;
}

JsonError wrong_type(std::string_view path, std::string_view want) {
  return JsonError{"field '" + std::string(path) + "' must be " + std::string(want), std::string(path)};
}

JsonError missing(std::string_view path) {
  return JsonError{"field '" + std::string(path) + "' is required", std::string(path)};
}

// An object or an array: `present` says whether the field was there at all.
template <typename Container>
std::optional<JsonError> read_container(simdjson::dom::object obj, std::string_view key, std::string_view path,
                                        Container* out, bool* present, bool required, std::string_view want) {
  auto e = field(obj, key);
  *present = e.has_value();
  if (!e) return required ? std::optional(missing(path)) : std::nullopt;
  if (e->get(*out) != simdjson::SUCCESS) return wrong_type(path, want);
  return std::nullopt;
}

}  // namespace

std::optional<JsonError> parse_json_object(simdjson::dom::parser& parser, std::string_view body,
                                           simdjson::dom::object* out) {
  if (body.empty()) return JsonError{"request body is empty; a JSON object is expected", {}};
  element doc;
  auto err = parser.parse(body.data(), body.size()).get(doc);
  if (err != simdjson::SUCCESS) return JsonError{std::string("malformed JSON: ") + simdjson::error_message(err), {}};
  if (doc.get(*out) != simdjson::SUCCESS) return JsonError{"request body must be a JSON object", {}};
  return std::nullopt;
}

std::optional<JsonError> read_string(simdjson::dom::object obj, std::string_view key, std::string_view path,
                                     std::string* out, bool required) {
  auto e = field(obj, key);
  if (!e) return required ? std::optional(missing(path)) : std::nullopt;
  std::string_view s;
  if (e->get(s) != simdjson::SUCCESS) return wrong_type(path, "a string");
  *out = std::string(s);
  return std::nullopt;
}

std::optional<JsonError> read_int(simdjson::dom::object obj, std::string_view key, std::string_view path, int64_t* out,
                                  bool required) {
  auto e = field(obj, key);
  if (!e) return required ? std::optional(missing(path)) : std::nullopt;
  int64_t n;
  if (e->get(n) == simdjson::SUCCESS) {
    *out = n;
    return std::nullopt;
  }
  // Go's encoding/json writes whole numbers without a fraction, but be lenient
  // with 3.0; 3.5 is not an integer.
  double d;
  if (e->get(d) == simdjson::SUCCESS && std::floor(d) == d && std::fabs(d) < 9.0e15) {
    *out = static_cast<int64_t>(d);
    return std::nullopt;
  }
  return wrong_type(path, "an integer");
}

std::optional<JsonError> read_number(simdjson::dom::object obj, std::string_view key, std::string_view path,
                                     double* out, bool required) {
  auto e = field(obj, key);
  if (!e) return required ? std::optional(missing(path)) : std::nullopt;
  double d;
  if (e->get(d) != simdjson::SUCCESS) return wrong_type(path, "a number");
  *out = d;
  return std::nullopt;
}

std::optional<JsonError> read_bool(simdjson::dom::object obj, std::string_view key, std::string_view path, bool* out,
                                   bool required) {
  auto e = field(obj, key);
  if (!e) return required ? std::optional(missing(path)) : std::nullopt;
  bool b;
  if (e->get(b) != simdjson::SUCCESS) return wrong_type(path, "true or false");
  *out = b;
  return std::nullopt;
}

std::optional<JsonError> read_object(simdjson::dom::object obj, std::string_view key, std::string_view path,
                                     simdjson::dom::object* out, bool* present, bool required) {
  return read_container(obj, key, path, out, present, required, "an object");
}

std::optional<JsonError> read_array(simdjson::dom::object obj, std::string_view key, std::string_view path,
                                    simdjson::dom::array* out, bool* present, bool required) {
  return read_container(obj, key, path, out, present, required, "an array");
}

}  // namespace uvsched
