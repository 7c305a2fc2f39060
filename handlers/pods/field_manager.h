// Server-side apply's bookkeeping, kept where the API server keeps it, in
// metadata.managedFields: which manager set which fields of a pod, so that
// an apply can take back what its manager no longer sets, and is refused
// (409) when it would change a field another manager set. Written from the
// Kubernetes documentation of server-side apply and of FieldsV1; values in,
// values out.
//
// What is simplified: lists merge by the strategic merge keys (a pod's
// containers by name, their ports by containerPort), where the API server's
// structured merge keys some of them by two fields; a write that names no
// fieldManager is recorded under no manager (the API server would name one
// after the User-Agent), so a plain POST costs nothing extra.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "handlers/json_value.h"

namespace uvsched {

// A set of field paths. A path is a sequence of FieldsV1 elements: "f:NAME"
// (an object's field or a map's key), "k:{"KEY":VALUE}" (a keyed list's
// element), "v:VALUE" (a set's element), and a last "." when the element the
// path names is owned itself.
class FieldSet {
 public:
  using Path = std::string;             // its elements joined by kSep
  static constexpr char kSep = '\x1f';  // JSON text never holds it unescaped

  // The fields a pod object sets: its leaves, each keyed list element (with
  // "."), each set element. Its identity and what the server sets (kind,
  // apiVersion, metadata's name, namespace, uid, resourceVersion,
  // creationTimestamp, generation, deletion fields, managedFields) and its
  // status are nobody's.
  static FieldSet of_pod(const JsonValue& pod);
  // From a managedFields entry's fieldsV1; nullopt when it is not one.
  static std::optional<FieldSet> from_v1(const JsonValue& v1);
  JsonValue to_v1() const;

  bool empty() const { return paths_.empty(); }
  bool contains(const Path& p) const { return paths_.count(p) != 0; }
  void add(const Path& p) { paths_.insert(p); }
  void remove(const Path& p) { paths_.erase(p); }
  const std::set<Path>& paths() const { return paths_; }

 private:
  std::set<Path> paths_;
};

// The value `path` names in `object`; nullptr when absent. A path ending in
// "." names the list element before it.
const JsonValue* value_at(const JsonValue& object, const FieldSet::Path& path);
// As the API server prints a path in a conflict: .spec.containers[name="c"].image
std::string display_path(const FieldSet::Path& path);

struct ManagedEntry {
  std::string manager;
  std::string operation;  // "Apply" or "Update"
  std::string time;
  std::string subresource;
  FieldSet fields;
};
// The pod's managedFields (entries it cannot read are dropped).
std::vector<ManagedEntry> managed_entries(const JsonValue& pod);
// Writes them back; an entry that owns nothing goes, and so does an empty list.
void set_managed_entries(JsonValue& pod, const std::vector<ManagedEntry>& entries);

struct ApplyConflict {
  std::string manager;
  FieldSet::Path path;
};

// Applies `config`, the whole of what `manager` wants of the pod, to `live`:
// its fields merge into the pod, fields the manager set before and no
// longer sets (and no other manager set) are removed, and the manager's
// Apply entry becomes what it set now. A field another manager set to
// another value is a conflict: then nothing changes and the conflicts are
// returned, unless `force` (--force-conflicts) takes those fields over.
std::vector<ApplyConflict> apply_config(JsonValue& live, const JsonValue& config, const std::string& manager,
                                        bool force, const std::string& now);

// A create (`old` null) or update not by apply: `manager`, when named, takes
// the fields whose values it changed from every other manager; every
// manager loses the fields `next` no longer has.
void record_update(const JsonValue* old, JsonValue& next, const std::string& manager, const std::string& now);

// The API server's words: Apply failed with 1 conflict: conflict with "m" using v1: .spec.x
std::string apply_conflict_message(const std::vector<ApplyConflict>& conflicts);

}  // namespace uvsched
