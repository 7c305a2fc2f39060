#include "handlers/json_value.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace uvsched {
namespace {
// Parsers and buffers are kept per thread for documents up to this size.
constexpr size_t kReusedCapacity = 64 * 1024;

template <typename Int>
void assign_integer(std::string& text, Int n) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
  (void)ec;
  text.assign(buf, end);
}
}  // namespace

JsonValue JsonValue::string(std::string s) {
  JsonValue v(Type::kString);
  v.text_ = std::move(s);
  return v;
}

JsonValue JsonValue::number(double d) {
  JsonValue v(Type::kNumber);
  append_json_number(v.text_, d);
  return v;
}

JsonValue JsonValue::integer(int64_t n) {
  JsonValue v(Type::kNumber);
  assign_integer(v.text_, n);
  return v;
}

JsonValue JsonValue::boolean(bool b) {
  JsonValue v(Type::kBool);
  v.bool_ = b;
  return v;
}

JsonValue JsonValue::from(simdjson::dom::element e) {
  JsonValue v;
  v.fill(e);
  return v;
}

// Each member is built where it will live, not returned and moved there: a
// pod is ~100 values, read for every create and update.
void JsonValue::fill(simdjson::dom::element e) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::OBJECT: {
      type_ = Type::kObject;
      simdjson::dom::object obj(e);
      members_.reserve(obj.size());
      for (auto field : obj) {
        members_.emplace_back(std::piecewise_construct, std::forward_as_tuple(field.key), std::forward_as_tuple());
        members_.back().second.fill(field.value);
      }
      return;
    }
    case T::ARRAY: {
      type_ = Type::kArray;
      simdjson::dom::array arr(e);
      items_.reserve(arr.size());
      for (auto item : arr) items_.emplace_back().fill(item);
      return;
    }
    case T::STRING:
      type_ = Type::kString;
      text_.assign(std::string_view(e));
      return;
    case T::INT64:
      type_ = Type::kNumber;
      assign_integer(text_, int64_t(e));
      return;
    case T::UINT64:
      type_ = Type::kNumber;
      assign_integer(text_, uint64_t(e));
      return;
    case T::DOUBLE:
      type_ = Type::kNumber;
      append_json_number(text_, double(e));
      return;
    case T::BOOL:
      type_ = Type::kBool;
      bool_ = bool(e);
      return;
    case T::NULL_VALUE:
      return;
  }
}

std::optional<JsonValue> JsonValue::parse(std::string_view text, std::string* error) {
  // A parser allocates buffers sized to its input: one per thread serves
  // every small document (pods, agent posts) without allocating again; a
  // rare large one gets its own, so its capacity is not kept.
  thread_local simdjson::dom::parser reused(kReusedCapacity);
  simdjson::dom::parser one_off;
  simdjson::dom::parser& parser = text.size() <= kReusedCapacity ? reused : one_off;
  simdjson::dom::element doc;
  auto err = parser.parse(text.data(), text.size()).get(doc);
  if (err != simdjson::SUCCESS) {
    *error = std::string("malformed JSON: ") + simdjson::error_message(err);
    return std::nullopt;
  }
  return from(doc);
}

namespace {

// Finds the value at `path` (object keys) in `text` without building the tree
// and hands it to `replace`, which says what takes its place: the text then
// comes back with only that span changed. The on-demand parser visits only
// the path; it needs padding past the text, so the text is copied into a
// buffer that has it. As in parse(), a small document reuses the thread's
// parser and buffer; a large one gets its own, so their capacity is not kept.
// `replace` returns the span (of the copy) that it replaces and the new text,
// or nullopt to leave the text alone.
using Replacement = std::optional<std::pair<std::string_view, std::string>>;
template <typename Replace>
std::optional<std::string> edit_at(std::string_view text, std::initializer_list<std::string_view> path,
                                   Replace&& replace) {
  thread_local simdjson::ondemand::parser reused_parser;
  thread_local std::string reused_padded;
  simdjson::ondemand::parser one_off_parser;
  std::string one_off_padded;
  bool small = text.size() <= kReusedCapacity;
  simdjson::ondemand::parser& parser = small ? reused_parser : one_off_parser;
  std::string& padded = small ? reused_padded : one_off_padded;
  padded.assign(text);
  padded.resize(text.size() + simdjson::SIMDJSON_PADDING, ' ');
  simdjson::ondemand::document doc;
  if (parser.iterate(padded.data(), text.size(), padded.size()).get(doc) != simdjson::SUCCESS) return std::nullopt;
  simdjson::ondemand::value v;
  if (doc.get_value().get(v) != simdjson::SUCCESS) return std::nullopt;
  for (std::string_view key : path) {
    simdjson::ondemand::object o;
    if (v.get_object().get(o) != simdjson::SUCCESS || o.find_field_unordered(key).get(v) != simdjson::SUCCESS) {
      return std::nullopt;
    }
  }
  Replacement r = replace(v);
  if (!r) return std::nullopt;
  size_t at = static_cast<size_t>(r->first.data() - padded.data());
  if (at + r->first.size() > text.size()) return std::nullopt;
  std::string out;
  out.reserve(text.size() - r->first.size() + r->second.size());
  out.append(text.substr(0, at));
  out.append(r->second);
  out.append(text.substr(at + r->first.size()));
  return out;
}

}  // namespace

std::optional<std::string> JsonValue::with_string_at(std::string_view text,
                                                     std::initializer_list<std::string_view> path,
                                                     std::string_view value) {
  return edit_at(text, path, [value](simdjson::ondemand::value& v) -> Replacement {
    simdjson::ondemand::json_type type;
    if (v.type().get(type) != simdjson::SUCCESS || type != simdjson::ondemand::json_type::string) return std::nullopt;
    std::string_view old = v.raw_json_token();
    // The raw token may run on over whitespace up to the next structural.
    size_t end = old.rfind('"');
    if (old.empty() || old[0] != '"' || end == 0 || end == std::string_view::npos) return std::nullopt;
    std::string quoted;
    append_json_string(quoted, value);
    return std::make_pair(old.substr(0, end + 1), std::move(quoted));
  });
}

std::optional<std::string> JsonValue::with_object_at(std::string_view text,
                                                     std::initializer_list<std::string_view> path,
                                                     const std::function<bool(JsonValue&)>& edit) {
  return edit_at(text, path, [&edit](simdjson::ondemand::value& v) -> Replacement {
    simdjson::ondemand::object o;
    std::string_view old;
    if (v.get_object().get(o) != simdjson::SUCCESS || o.raw_json().get(old) != simdjson::SUCCESS) return std::nullopt;
    // The raw text may run on over whitespace up to the next structural:
    // what follows the closing brace stays.
    size_t close = old.rfind('}');
    if (close == std::string_view::npos) return std::nullopt;
    old = old.substr(0, close + 1);
    std::string error;
    std::optional<JsonValue> obj = JsonValue::parse(old, &error);
    if (!obj || !obj->is_object() || !edit(*obj)) return std::nullopt;
    return std::make_pair(old, obj->dump());
  });
}

const JsonValue* JsonValue::get(std::string_view key) const {
  for (const auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}

JsonValue* JsonValue::get(std::string_view key) {
  for (auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}

JsonValue& JsonValue::at(std::string_view key) {
  if (type_ != Type::kObject) *this = object();
  if (JsonValue* v = get(key)) return *v;
  // Objects grow a member or a few at a time (a pod's defaults, its
  // binding): from 8, not from 1, 2 and 4, each a move of every member.
  if (members_.size() == members_.capacity()) members_.reserve(std::max<size_t>(8, 2 * members_.size()));
  members_.emplace_back(std::string(key), JsonValue());
  return members_.back().second;
}

bool JsonValue::erase(std::string_view key) {
  for (auto it = members_.begin(); it != members_.end(); ++it) {
    if (it->first == key) {
      members_.erase(it);
      return true;
    }
  }
  return false;
}

const JsonValue* JsonValue::find(std::initializer_list<std::string_view> path) const {
  const JsonValue* cur = this;
  for (auto key : path) {
    if (cur == nullptr || !cur->is_object()) return nullptr;
    cur = cur->get(key);
  }
  return cur;
}

JsonValue& JsonValue::ensure(std::initializer_list<std::string_view> path) {
  JsonValue* cur = this;
  for (auto key : path) {
    JsonValue& next = cur->at(key);
    if (!next.is_object()) next = object();
    cur = &next;
  }
  return *cur;
}

std::optional<double> JsonValue::as_number() const {
  if (type_ != Type::kNumber) return std::nullopt;
  return std::strtod(text_.c_str(), nullptr);
}

std::optional<int64_t> JsonValue::as_integer() const {
  if (type_ != Type::kNumber) return std::nullopt;
  int64_t n = 0;
  auto [p, ec] = std::from_chars(text_.data(), text_.data() + text_.size(), n);
  if (ec != std::errc() || p != text_.data() + text_.size()) return std::nullopt;
  return n;
}

std::string JsonValue::str(std::string_view key) const {
  const JsonValue* v = get(key);
  return v && v->is_string() ? v->text_ : std::string();
}

void JsonValue::write(JsonWriter& w) const { append_to(w.raw_buffer()); }

// Straight into the string, commas and all: the structure is known here, so
// none of JsonWriter's per-token bookkeeping is needed (a pod is ~80 tokens,
// written for every create and update).
void JsonValue::append_to(std::string& out) const {
  switch (type_) {
    case Type::kNull:
      out += "null";
      break;
    case Type::kBool:
      out += bool_ ? "true" : "false";
      break;
    case Type::kNumber:
      out += text_;
      break;
    case Type::kString:
      append_json_string(out, text_);
      break;
    case Type::kArray: {
      out += '[';
      const char* comma = "";
      for (const auto& i : items_) {
        out += comma;
        comma = ",";
        i.append_to(out);
      }
      out += ']';
      break;
    }
    case Type::kObject: {
      out += '{';
      bool first = true;
      for (const auto& [k, v] : members_) {
        if (!first) out += ',';
        first = false;
        append_json_string(out, k);
        out += ':';
        v.append_to(out);
      }
      out += '}';
      break;
    }
  }
}

bool JsonValue::same_as(const JsonValue& other) const {
  if (type_ != other.type_) return false;
  switch (type_) {
    case Type::kNull:
      return true;
    case Type::kBool:
      return bool_ == other.bool_;
    case Type::kNumber:
    case Type::kString:
      return text_ == other.text_;
    case Type::kArray:
      if (items_.size() != other.items_.size()) return false;
      for (size_t i = 0; i < items_.size(); ++i) {
        if (!items_[i].same_as(other.items_[i])) return false;
      }
      return true;
    case Type::kObject:
      if (members_.size() != other.members_.size()) return false;
      for (const auto& [k, v] : members_) {
        const JsonValue* theirs = other.get(k);
        if (!theirs || !v.same_as(*theirs)) return false;
      }
      return true;
  }
  return false;
}

std::string JsonValue::dump() const {
  std::string out;
  // Most documents dumped are pods (700-900 B): a start near it saves the
  // string doubling its way up from 15 bytes.
  if (type_ == Type::kObject) out.reserve(1024);
  append_to(out);
  return out;
}

void JsonValue::merge_patch(const JsonValue& patch) {
  if (!patch.is_object()) {
    *this = patch;
    return;
  }
  if (!is_object()) *this = object();
  // A few keys (a phase, an IP) are looked up in place; a large patch (an
  // agent's status data) goes through an index, or its merge would be
  // quadratic: 75k keys once took seconds.
  constexpr size_t kIndexedFrom = 16;
  if (patch.members_.size() < kIndexedFrom) {
    for (const auto& [k, v] : patch.members_) {
      if (v.is_null()) {
        erase(k);
      } else {
        at(k).merge_patch(v);
      }
    }
    return;
  }
  absl::flat_hash_map<std::string, size_t> index;
  index.reserve(members_.size() + patch.members_.size());
  for (size_t i = 0; i < members_.size(); ++i) index.try_emplace(members_[i].first, i);  // the first wins, as in get()
  std::vector<bool> erased(members_.size(), false);
  for (const auto& [k, v] : patch.members_) {
    auto it = index.find(k);
    if (v.is_null()) {
      if (it != index.end()) {
        erased[it->second] = true;
        index.erase(it);
      }
      continue;
    }
    if (it == index.end()) {
      members_.emplace_back(k, JsonValue());
      erased.push_back(false);
      it = index.emplace(k, members_.size() - 1).first;
    }
    members_[it->second].second.merge_patch(v);
  }
  size_t kept = 0;
  for (size_t i = 0; i < members_.size(); ++i) {
    if (erased[i]) continue;
    if (kept != i) members_[kept] = std::move(members_[i]);
    ++kept;
  }
  members_.resize(kept);
}

}  // namespace uvsched
