// The Kubernetes protobuf wire form ("application/vnd.kubernetes.protobuf":
// the bytes k8s\0, then a runtime.Unknown holding the object's TypeMeta and
// its own protobuf), read for the one object typed clients send uvsched that
// way: kubectl's `create namespace`, `create pdb` and `auth can-i` / `auth whoami` (client-go's typed clients prefer
// protobuf, and do not fall back to JSON on a 415). What is read becomes the
// JSON object the rest of the registry takes; fields uvsched does not keep
// are skipped.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "handlers/json_value.h"

namespace uvsched {

inline constexpr std::string_view kKubernetesProtobuf = "application/vnd.kubernetes.protobuf";

// A Namespace: metadata (name, generateName, labels, annotations,
// finalizers) and spec.finalizers. nullopt, with *error, when the bytes are
// not one.
std::optional<JsonValue> namespace_from_protobuf(std::string_view body, std::string* error);

// A policy/v1 PodDisruptionBudget (kubectl create pdb): metadata as for a
// Namespace, and its spec (minAvailable, maxUnavailable, selector,
// unhealthyPodEvictionPolicy). nullopt, with *error, when the bytes are not one.
std::optional<JsonValue> pod_disruption_budget_from_protobuf(std::string_view body, std::string* error);

// A SelfSubjectAccessReview (spec.resourceAttributes: namespace, verb, group,
// version, resource, subresource, name; spec.nonResourceAttributes: path,
// verb), SelfSubjectRulesReview (spec.namespace) or SelfSubjectReview
// (nothing), as its JSON: apiVersion, kind and spec. Strings sent empty are
// left out. nullopt, with *error, for anything else.
std::optional<JsonValue> self_review_from_protobuf(std::string_view body, std::string* error);

}  // namespace uvsched
