// RFC 6902 JSON Patch, the third patch type of the Kubernetes API: what
// `kubectl patch --type json` sends, and what the official Python client sends
// for every patch (it always says application/json-patch+json). A list of
// operations (add, remove, replace, move, copy, test) on RFC 6901 JSON
// Pointers, applied in order; all or nothing.
#pragma once

#include <string>

#include "handlers/json_value.h"

namespace uvsched {

// Applies `patch` to `doc`. False, with *error, when the patch is malformed or
// an operation cannot apply (a missing path, a failed test); `doc` may then be
// partly changed and must be dropped.
bool apply_json_patch(JsonValue& doc, const JsonValue& patch, std::string* error);

}  // namespace uvsched
