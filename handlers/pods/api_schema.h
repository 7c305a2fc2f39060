// The one description of the core/v1 objects uvsched stores and serves: what
// the typed decoder checks a body against (typed_decode.h) and what
// /openapi/v3 says (discovery.cc), so `kubectl explain` and the server agree.
// Written in our own words from the Kubernetes API reference: every field of
// a described type is named (so that an unknown one can be told), with its
// JSON type; nested types uvsched does not act on are kFreeObject (any
// object, kept as sent).
#pragma once

#include <string_view>
#include <vector>

namespace uvsched {

enum class SchemaKind {
  kString,
  kInteger,  // int32/int64
  kBoolean,
  kQuantity,     // resource.Quantity: a string, or a number
  kIntOrString,  // intstr.IntOrString
  kTime,         // RFC 3339 string
  kObject,       // of the described type `ref`
  kFreeObject,   // any JSON object
  kStringMap,    // map[string]string
  kQuantityMap,  // map[string]Quantity
  kArray,        // of `item`, with `ref` when item is kObject
};

struct SchemaField {
  std::string_view name;
  SchemaKind kind;
  std::string_view ref = {};              // kObject, or kArray of kObject: the type's name
  SchemaKind item = SchemaKind::kString;  // kArray: its elements
  std::string_view description = {};
  std::string_view merge_key = {};  // kArray: x-kubernetes-patch-merge-key
};

struct SchemaType {
  std::string_view name;     // "io.k8s.api.core.v1.PodSpec"
  std::string_view go_name;  // "PodSpec", as the API server's decoder names it
  std::string_view description;
  std::vector<SchemaField> fields;
  std::string_view kind = {};  // a top-level kind ("Pod"): its group-version-kind
};

const std::vector<SchemaType>& api_schema();
// nullptr when not described.
const SchemaType* schema_type(std::string_view name);

// Go's name for a JSON type, as in "cannot unmarshal object into ... of type string".
std::string_view go_type_name(const SchemaField& f);

}  // namespace uvsched
