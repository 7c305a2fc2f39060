// The one description of the API objects uvsched stores and serves (core/v1's,
// and the kinds of the object registry: policy/v1 PodDisruptionBudget,
// scheduling.k8s.io/v1 PriorityClass, scheduling.x-k8s.io/v1alpha1 PodGroup):
// what the typed decoder checks a body against (typed_decode.h) and what
// /openapi/v2 and /openapi/v3 say (discovery.cc), so `kubectl explain` and
// the server agree.
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
  // A top-level kind ("Pod"): its group-version-kind, and where it is served
  // (the resource: its objects are at .../<resource>/{name}; none for a kind
  // only created through another's subresource, as Binding).
  std::string_view kind = {};
  std::string_view group = {};  // "" is core
  std::string_view version = "v1";
  std::string_view resource = {};
  bool namespaced = true;
};

const std::vector<SchemaType>& api_schema();
// nullptr when not described.
const SchemaType* schema_type(std::string_view name);
// The described type whose top-level kind is group/version kind; nullptr when none.
const SchemaType* schema_of_kind(std::string_view group, std::string_view version, std::string_view kind);

// Go's name for a JSON type, as in "cannot unmarshal object into ... of type string".
std::string_view go_type_name(const SchemaField& f);

}  // namespace uvsched
