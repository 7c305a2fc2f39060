#include "handlers/pods/openapi_proto.h"

#include <simdjson.h>

#include <cstdint>

namespace uvsched {
namespace {

// Protocol buffers' wire format, the two kinds of field this needs.
class ProtoWriter {
 public:
  void string(int field, std::string_view s) {
    tag(field, 2);
    varint(s.size());
    out_.append(s);
  }
  void message(int field, const ProtoWriter& m) { string(field, m.out_); }
  void boolean(int field, bool b) {
    tag(field, 0);
    varint(b ? 1 : 0);
  }
  const std::string& bytes() const { return out_; }

 private:
  void tag(int field, int wire_type) { varint(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire_type)); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>(v | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
  }
  std::string out_;
};

// Field numbers of gnostic's OpenAPIv2.proto.
namespace field {
constexpr int kDocSwagger = 1, kDocInfo = 2, kDocPaths = 8, kDocDefinitions = 9;
constexpr int kPathsPath = 2;      // Paths: NamedPathItem
constexpr int kPathItemPatch = 8;  // PathItem: the patch Operation
constexpr int kOperationParameters = 8, kOperationVendorExtension = 13;
constexpr int kParametersItemParameter = 1, kParameterNonBody = 2, kNonBodyQuery = 3;
constexpr int kQueryIn = 2, kQueryName = 4, kQueryType = 6;  // QueryParameterSubSchema
constexpr int kInfoTitle = 1, kInfoVersion = 2, kInfoDescription = 3;
constexpr int kNamedName = 1, kNamedValue = 2;  // NamedSchema, NamedAny
constexpr int kRepeatedItems = 1;               // Definitions, Properties, TypeItem, ItemsItem
constexpr int kAnyYaml = 2;
constexpr int kAdditionalSchema = 1, kAdditionalBoolean = 2;
constexpr int kSchemaRef = 1, kSchemaFormat = 2, kSchemaTitle = 3, kSchemaDescription = 4, kSchemaRequired = 19,
              kSchemaAdditional = 21, kSchemaType = 22, kSchemaItems = 23, kSchemaProperties = 25,
              kSchemaVendorExtension = 31;
}  // namespace field

ProtoWriter schema(simdjson::dom::object s);

ProtoWriter named_schemas(simdjson::dom::object map) {
  ProtoWriter list;
  for (auto [name, value] : map) {
    simdjson::dom::object sub;
    if (value.get(sub)) continue;
    ProtoWriter named;
    named.string(field::kNamedName, name);
    named.message(field::kNamedValue, schema(sub));
    list.message(field::kRepeatedItems, named);
  }
  return list;
}

// The object's x-* members as NamedAny entries of field `at` in `w`.
void vendor_extensions(ProtoWriter& w, int at, simdjson::dom::object o) {
  for (auto [key, value] : o) {
    if (key.substr(0, 2) != "x-") continue;
    ProtoWriter any;
    any.string(field::kAnyYaml, simdjson::minify(value));  // JSON is YAML
    ProtoWriter named;
    named.string(field::kNamedName, key);
    named.message(field::kNamedValue, any);
    w.message(at, named);
  }
}

ProtoWriter schema(simdjson::dom::object s) {
  ProtoWriter w;
  auto text = [&](const char* key, int f) {
    std::string_view v;
    if (!s[key].get(v)) w.string(f, v);
  };
  text("$ref", field::kSchemaRef);
  text("format", field::kSchemaFormat);
  text("title", field::kSchemaTitle);
  text("description", field::kSchemaDescription);
  simdjson::dom::array required;
  if (!s["required"].get(required)) {
    for (simdjson::dom::element r : required) {
      std::string_view name;
      if (!r.get(name)) w.string(field::kSchemaRequired, name);
    }
  }
  simdjson::dom::element additional;
  if (!s["additionalProperties"].get(additional)) {
    ProtoWriter item;
    simdjson::dom::object sub;
    bool b = false;
    if (!additional.get(sub)) {
      item.message(field::kAdditionalSchema, schema(sub));
    } else if (!additional.get(b)) {
      item.boolean(field::kAdditionalBoolean, b);
    }
    w.message(field::kSchemaAdditional, item);
  }
  std::string_view type;
  if (!s["type"].get(type)) {
    ProtoWriter t;
    t.string(field::kRepeatedItems, type);
    w.message(field::kSchemaType, t);
  }
  simdjson::dom::object items;
  if (!s["items"].get(items)) {
    ProtoWriter i;
    i.message(field::kRepeatedItems, schema(items));
    w.message(field::kSchemaItems, i);
  }
  simdjson::dom::object properties;
  if (!s["properties"].get(properties)) w.message(field::kSchemaProperties, named_schemas(properties));
  vendor_extensions(w, field::kSchemaVendorExtension, s);
  return w;
}

// The paths' PATCH operations: their kind (x-kubernetes-group-version-kind)
// and query parameters, which kubectl 1.20 reads to learn that a kind takes
// dryRun before it sends --dry-run=server.
ProtoWriter paths(simdjson::dom::object map) {
  ProtoWriter out;
  for (auto [path, item] : map) {
    simdjson::dom::object patch;
    if (item["patch"].get(patch)) continue;
    ProtoWriter op;
    simdjson::dom::array params;
    if (!patch["parameters"].get(params)) {
      for (simdjson::dom::element p : params) {
        std::string_view name, in, type;
        if (p["name"].get(name) || p["in"].get(in) || in != "query") continue;
        ProtoWriter q;
        q.string(field::kQueryIn, in);
        q.string(field::kQueryName, name);
        if (!p["type"].get(type)) q.string(field::kQueryType, type);
        ProtoWriter non_body, parameter, item_w;
        non_body.message(field::kNonBodyQuery, q);
        parameter.message(field::kParameterNonBody, non_body);
        item_w.message(field::kParametersItemParameter, parameter);
        op.message(field::kOperationParameters, item_w);
      }
    }
    vendor_extensions(op, field::kOperationVendorExtension, patch);
    ProtoWriter path_item;
    path_item.message(field::kPathItemPatch, op);
    ProtoWriter named;
    named.string(field::kNamedName, path);
    named.message(field::kNamedValue, path_item);
    out.message(field::kPathsPath, named);
  }
  return out;
}

}  // namespace

std::optional<std::string> openapi_v2_protobuf(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::object doc;
  std::string_view swagger;
  if (parser.parse(json.data(), json.size()).get(doc) || doc["swagger"].get(swagger)) return std::nullopt;
  ProtoWriter d;
  d.string(field::kDocSwagger, swagger);
  simdjson::dom::object info;
  if (!doc["info"].get(info)) {
    ProtoWriter i;
    std::string_view v;
    if (!info["title"].get(v)) i.string(field::kInfoTitle, v);
    if (!info["version"].get(v)) i.string(field::kInfoVersion, v);
    if (!info["description"].get(v)) i.string(field::kInfoDescription, v);
    d.message(field::kDocInfo, i);
  }
  simdjson::dom::object path_map;
  if (!doc["paths"].get(path_map)) d.message(field::kDocPaths, paths(path_map));
  simdjson::dom::object definitions;
  if (!doc["definitions"].get(definitions)) d.message(field::kDocDefinitions, named_schemas(definitions));
  return d.bytes();
}

}  // namespace uvsched
