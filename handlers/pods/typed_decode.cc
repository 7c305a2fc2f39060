#include "handlers/pods/typed_decode.h"

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cstdio>

namespace uvsched {
namespace {

std::string_view json_type_name(const JsonValue& v) {
  switch (v.type()) {
    case JsonValue::Type::kNull:
      return "null";
    case JsonValue::Type::kBool:
      return "bool";
    case JsonValue::Type::kNumber:
      return "number";
    case JsonValue::Type::kString:
      return "string";
    case JsonValue::Type::kArray:
      return "array";
    case JsonValue::Type::kObject:
      return "object";
  }
  return "value";
}

// JSON Schema's names: of a value's type, and of the type a field wants.
std::string_view openapi_type_name(const JsonValue& v) {
  if (v.type() == JsonValue::Type::kNumber) return v.as_integer() ? "integer" : "number";
  if (v.type() == JsonValue::Type::kBool) return "boolean";
  return json_type_name(v);
}
std::string_view openapi_type_name(SchemaKind kind) {
  switch (kind) {
    case SchemaKind::kString:
    case SchemaKind::kTime:
      return "string";
    case SchemaKind::kInteger:
      return "integer";
    case SchemaKind::kBoolean:
      return "boolean";
    case SchemaKind::kQuantity:
    case SchemaKind::kIntOrString:
      return "integer or string";
    case SchemaKind::kObject:
    case SchemaKind::kFreeObject:
    case SchemaKind::kStringMap:
    case SchemaKind::kQuantityMap:
      return "object";
    case SchemaKind::kArray:
      return "array";
  }
  return "value";
}

// Walks a body once, in place. The field path is one string grown and cut
// back as the walk goes (a create decodes every pod: no string per field),
// and copied only into what is reported.
class Decoder {
 public:
  explicit Decoder(TypedDecode* out) : out_(*out) {}

  void object(JsonValue& obj, const SchemaType& type) {
    auto& members = obj.members();
    drop_duplicates(members);
    size_t kept = 0;  // unknown members are dropped in place, the rest keep their order
    for (size_t i = 0; i < members.size(); ++i) {
      auto& [name, value] = members[i];
      size_t mark = enter(name);
      const SchemaField* field = find_field(type, name);
      if (field == nullptr) {
        out_.unknown.push_back(path_);
      } else {
        check(value, *field, field->kind, type.go_name);
        if (kept != i) members[kept] = std::move(members[i]);
        ++kept;
      }
      path_.resize(mark);
    }
    members.resize(kept);
  }

 private:
  static const SchemaField* find_field(const SchemaType& type, std::string_view name) {
    for (const auto& f : type.fields) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }

  // ".name" (or "name" at the top) onto the path; returns where to cut back to.
  size_t enter(std::string_view name) {
    size_t mark = path_.size();
    if (!path_.empty()) path_ += '.';
    path_ += name;
    return mark;
  }
  size_t enter_index(std::string_view index) {
    size_t mark = path_.size();
    path_ += '[';
    path_ += index;
    path_ += ']';
    return mark;
  }

  // A member given twice keeps its last value, as Go's decoder does. Objects
  // are small: a scan finds none without allocating, the usual case.
  void drop_duplicates(std::vector<std::pair<std::string, JsonValue>>& members) {
    bool any = false;
    for (size_t i = 1; i < members.size() && !any; ++i) {
      for (size_t j = 0; j < i && !any; ++j) any = members[i].first == members[j].first;
    }
    if (!any) return;
    absl::flat_hash_map<std::string_view, size_t> last;
    for (size_t i = 0; i < members.size(); ++i) last[members[i].first] = i;
    std::vector<std::pair<std::string, JsonValue>> kept;
    kept.reserve(last.size());
    std::vector<std::string_view> reported;
    for (size_t i = 0; i < members.size(); ++i) {
      if (last[members[i].first] == i) continue;
      if (std::find(reported.begin(), reported.end(), members[i].first) != reported.end()) continue;
      reported.push_back(members[i].first);
      size_t mark = enter(members[i].first);
      out_.duplicate.push_back(path_);
      path_.resize(mark);
    }
    for (size_t i = 0; i < members.size(); ++i) {
      if (last[members[i].first] == i) kept.push_back(std::move(members[i]));
    }
    members = std::move(kept);
  }

  void wrong(const JsonValue& v, SchemaKind want, std::string_view go_type, std::string_view go_parent) {
    std::string go_path = path_;  // Go names the field without list indexes
    for (size_t at; (at = go_path.find('[')) != std::string::npos;) go_path.erase(at, go_path.find(']', at) - at + 1);
    out_.type_errors.push_back({path_, "FieldValueTypeInvalid",
                                "json: cannot unmarshal " + std::string(json_type_name(v)) + " into Go struct field " +
                                    std::string(go_parent) + "." + go_path + " of type " + std::string(go_type)});
    std::string got = "\"" + std::string(openapi_type_name(v)) + "\"";
    out_.schema_errors.push_back({path_, "FieldValueTypeInvalid",
                                  "Invalid value: " + got + ": " + path_ + " in body must be of type " +
                                      std::string(openapi_type_name(want)) + ": " + got});
  }

  // `kind` is the field's own, or its items' for the elements of a list.
  void check(JsonValue& v, const SchemaField& f, SchemaKind kind, std::string_view go_parent) {
    if (v.is_null()) return;  // Go leaves the zero value
    SchemaField as = f;
    as.kind = kind;
    std::string_view go_type = go_type_name(as);
    switch (kind) {
      case SchemaKind::kString:
      case SchemaKind::kTime:
        if (!v.is_string()) wrong(v, kind, go_type, go_parent);
        return;
      case SchemaKind::kInteger:
        if (v.type() != JsonValue::Type::kNumber || !v.as_integer()) wrong(v, kind, go_type, go_parent);
        return;
      case SchemaKind::kBoolean:
        if (v.type() != JsonValue::Type::kBool) wrong(v, kind, go_type, go_parent);
        return;
      case SchemaKind::kQuantity:
        if (!v.is_string() && v.type() != JsonValue::Type::kNumber) wrong(v, kind, go_type, go_parent);
        return;
      case SchemaKind::kIntOrString:
        if (!v.is_string() && !(v.type() == JsonValue::Type::kNumber && v.as_integer()))
          wrong(v, kind, go_type, go_parent);
        return;
      case SchemaKind::kFreeObject:
        if (!v.is_object()) wrong(v, kind, go_type, go_parent);
        return;
      case SchemaKind::kObject: {
        if (!v.is_object()) return wrong(v, kind, go_type, go_parent);
        if (const SchemaType* t = schema_type(f.ref)) object(v, *t);
        return;
      }
      case SchemaKind::kStringMap:
      case SchemaKind::kQuantityMap: {
        if (!v.is_object()) return wrong(v, kind, go_type, go_parent);
        SchemaKind value_kind = kind == SchemaKind::kStringMap ? SchemaKind::kString : SchemaKind::kQuantity;
        for (auto& [k, item] : v.members()) {
          size_t mark = enter_index(k);
          check(item, f, value_kind, go_parent);
          path_.resize(mark);
        }
        return;
      }
      case SchemaKind::kArray: {
        if (!v.is_array()) return wrong(v, kind, "[]" + std::string(element_go_type(f)), go_parent);
        char index[24];
        for (size_t i = 0; i < v.items().size(); ++i) {
          int n = std::snprintf(index, sizeof index, "%zu", i);
          size_t mark = enter_index(std::string_view(index, static_cast<size_t>(n)));
          check(v.items()[i], f, f.item, go_parent);
          path_.resize(mark);
        }
        return;
      }
    }
  }

  static std::string element_go_type(const SchemaField& f) {
    SchemaField item = f;
    item.kind = f.item;
    return std::string(go_type_name(item));
  }

  TypedDecode& out_;
  std::string path_;
};

std::string quoted_list(std::string_view what, const std::vector<std::string>& paths) {
  std::string s;
  for (const auto& p : paths) {
    if (!s.empty()) s += ", ";
    s += std::string(what) + " \"" + p + "\"";
  }
  return s;
}

}  // namespace

std::optional<FieldValidation> parse_field_validation(std::string_view value) {
  if (value.empty() || value == "Warn") return FieldValidation::kWarn;
  if (value == "Strict") return FieldValidation::kStrict;
  if (value == "Ignore") return FieldValidation::kIgnore;
  return std::nullopt;
}

bool TypedDecode::refused(FieldValidation mode) const {
  return !type_errors.empty() || (mode == FieldValidation::kStrict && (!unknown.empty() || !duplicate.empty()));
}

std::string TypedDecode::message(std::string_view kind, FieldValidation mode) const {
  if (!type_errors.empty()) {
    return std::string(kind) + " in version \"" + std::string(version) + "\" cannot be handled as a " +
           std::string(kind) + ": " + type_errors.front().message;
  }
  std::string s = "strict decoding error: " +
                  quoted_list("unknown field", mode == FieldValidation::kStrict ? unknown : std::vector<std::string>{});
  if (mode == FieldValidation::kStrict && !duplicate.empty()) {
    if (!unknown.empty()) s += ", ";
    s += quoted_list("duplicate field", duplicate);
  }
  return s;
}

std::vector<FieldIssue> TypedDecode::causes(FieldValidation mode) const {
  std::vector<FieldIssue> out = type_errors;
  if (mode == FieldValidation::kStrict) {
    for (const auto& p : unknown) out.push_back({p, "FieldValueInvalid", "unknown field \"" + p + "\""});
    for (const auto& p : duplicate) out.push_back({p, "FieldValueDuplicate", "duplicate field \"" + p + "\""});
  }
  return out;
}

std::vector<std::string> TypedDecode::warnings() const {
  std::vector<std::string> out;
  for (const auto& p : unknown) out.push_back("299 - \"unknown field \\\"" + p + "\\\"\"");
  for (const auto& p : duplicate) out.push_back("299 - \"duplicate field \\\"" + p + "\\\"\"");
  return out;
}

TypedDecode decode_typed(JsonValue& obj, const SchemaType& type) {
  TypedDecode out;
  out.version = type.version;
  if (obj.is_object()) Decoder(&out).object(obj, type);
  return out;
}

}  // namespace uvsched
