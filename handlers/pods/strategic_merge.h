// Kubernetes' strategic merge patch, for pods: what `kubectl apply`, `kubectl
// edit` and `kubectl patch` (its default type) send. Maps merge as in a JSON
// merge patch (null deletes a key). A list whose elements the pod schema keys
// by a field (containers by name, their ports by containerPort, conditions by
// type, ...) merges element by element; finalizers merge as a set; any other
// list is replaced whole, as in a merge patch.
//
// Directives: "$patch": "replace" | "delete" | "merge" in a map or a list
// element, {"$patch": "replace"} as a list element (the list becomes the other
// elements), "$setElementOrder/<list>", "$deleteFromPrimitiveList/<list>" and
// "$retainKeys".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "handlers/json_value.h"

namespace uvsched {

// Merges `patch` into `target`, the object at `path` of a pod ("" for the pod
// itself, "status" for its status subresource). False, with *error, when the
// patch is malformed (an unknown directive, a keyed list element without its
// key); `target` may then be partly merged and must be dropped.
bool strategic_merge(JsonValue& target, const JsonValue& patch, std::string_view path, std::string* error);

// How the pod's list at `path` ("spec.containers.ports") merges: by the
// field returned, as a set of scalars when it is "", or (nullopt) whole.
// Server-side apply keys its lists by the same rules.
std::optional<std::string_view> list_merge_key(std::string_view path);

}  // namespace uvsched
