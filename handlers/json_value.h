// A small mutable JSON tree for objects the API must edit (a pod gets its
// defaults, a patch is merged into it): built from simdjson's read-only DOM,
// written back with JsonWriter. Objects keep their key order; numbers keep
// their text, so nothing is lost in a round trip.
#pragma once

#include <simdjson.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reactor/json_writer.h"

namespace uvsched {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  JsonValue() = default;
  static JsonValue object() { return JsonValue(Type::kObject); }
  static JsonValue array() { return JsonValue(Type::kArray); }
  static JsonValue string(std::string s);
  static JsonValue number(double d);
  static JsonValue integer(int64_t n);
  static JsonValue boolean(bool b);
  static JsonValue from(simdjson::dom::element e);
  // Parses text; nullopt (with *error) when it is not JSON.
  static std::optional<JsonValue> parse(std::string_view text, std::string* error);
  // `text` with the string at `path` (object keys) replaced by `value`, the
  // rest byte for byte as it was: an edit without building the tree. nullopt
  // when the path does not end at a string or the text on the way to it is
  // not JSON (what lies off the path is not checked).
  static std::optional<std::string> with_string_at(std::string_view text, std::initializer_list<std::string_view> path,
                                                   std::string_view value);
  // `text` with the object at `path` changed by `edit`, the rest byte for
  // byte as it was: only that object is parsed and encoded again (a pod's
  // status, not its spec). nullopt when there is no object there, the text
  // on the way is not JSON, or `edit` returns false.
  static std::optional<std::string> with_object_at(std::string_view text, std::initializer_list<std::string_view> path,
                                                   const std::function<bool(JsonValue&)>& edit);

  Type type() const { return type_; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_null() const { return type_ == Type::kNull; }

  // Object access. get() is nullptr when absent; at() adds a null member.
  const JsonValue* get(std::string_view key) const;
  JsonValue* get(std::string_view key);
  JsonValue& at(std::string_view key);
  void set(std::string_view key, JsonValue v) { at(key) = std::move(v); }
  bool erase(std::string_view key);
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }
  std::vector<std::pair<std::string, JsonValue>>& members() { return members_; }
  // A nested member by path ("metadata", "name"); nullptr when any step is missing.
  const JsonValue* find(std::initializer_list<std::string_view> path) const;
  // The nested object, created (as objects) along the path when missing.
  JsonValue& ensure(std::initializer_list<std::string_view> path);

  // Array access.
  const std::vector<JsonValue>& items() const { return items_; }
  std::vector<JsonValue>& items() { return items_; }
  void push(JsonValue v) { items_.push_back(std::move(v)); }

  // Scalars: the text of a string, or of a number as written.
  const std::string& text() const { return text_; }
  bool as_bool() const { return bool_; }
  std::optional<double> as_number() const;
  std::optional<int64_t> as_integer() const;
  // The string value of a member, or "" when absent or not a string.
  std::string str(std::string_view key) const;

  // The same JSON value; objects compare as maps (their key order does not matter).
  bool same_as(const JsonValue& other) const;

  void write(JsonWriter& w) const;  // as one value of w
  void append_to(std::string& out) const;
  std::string dump() const;

  // RFC 7386 JSON merge patch: nulls delete, objects merge, everything else replaces.
  void merge_patch(const JsonValue& patch);

 private:
  explicit JsonValue(Type t) : type_(t) {}
  void fill(simdjson::dom::element e);  // this (a null) becomes e

  Type type_ = Type::kNull;
  bool bool_ = false;
  std::string text_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

}  // namespace uvsched
