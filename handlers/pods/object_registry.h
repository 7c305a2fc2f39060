// API objects that only hold data for the scheduler to read: PodGroups
// (scheduling.x-k8s.io/v1alpha1), PriorityClasses (scheduling.k8s.io/v1) and
// PodDisruptionBudgets (policy/v1).
// Each kind is described once (ObjectKind: its group, names, validation,
// defaults, table columns and built-in objects) and served the way the API
// server serves a custom resource: create (with dryRun), get, list (JSON or
// kubectl's Table), watch, replace over a resourceVersion, merge and JSON
// patches, delete, and discovery under /apis/<group>/<version>. A kind
// described in api_schema.h has its bodies and patched objects decoded as
// the API server decodes them (typed_decode.h). Objects are JSON at
// /registry/<group>/<resource>/[<namespace>/]<name>.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "handlers/json_value.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/router.h"
#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

struct ObjectColumn {
  std::string name;  // as kubectl prints it: "Min Member"
  std::string type;  // string, integer
  std::function<std::string(const JsonValue& obj)> cell;
};

struct ObjectKind {
  std::string group, version, resource, kind;
  bool namespaced = true;
  std::vector<std::string> short_names;
  // Defaults `obj` and says what is wrong with it (nothing: it may be stored).
  // `old` is the stored object for an update, null for a create.
  std::function<std::vector<FieldIssue>(JsonValue& obj, const JsonValue* old)> admit;
  // What admission refuses outright (403 Forbidden, as the API server's
  // admission plugins do), given what is stored; nullopt: allowed.
  std::function<std::optional<std::string>(const JsonValue& obj)> forbid;
  std::vector<ObjectColumn> columns;  // between NAME and AGE
  std::vector<JsonValue> builtins;    // objects every cluster has: updated as admit allows, never deleted
  std::string builtin_delete_refusal = "it is built in";  // why not, in the 403 a delete of one gets
  // For a dry run: what uvsched would do with the object now, answered in
  // the annotation uvsched.io/dry-run-placement (null: nothing to say).
  std::function<std::string(const JsonValue& obj)> preview;
  // A kind built into Kubernetes, not a custom resource. It also takes a
  // strategic merge patch, which kubectl apply and kubectl patch send for
  // one: its lists merge as the pod's of the same name do
  // (metadata.finalizers as a set, status.conditions by type); the rest as
  // in a merge patch. A body of the wrong JSON types is a 400, as its typed
  // decoder says, where a custom resource's is a 422, as its schema says.
  bool built_in = false;
  // Reads a create's protobuf body (what kubectl's typed `create` sends for
  // a built-in kind); null: only JSON is taken (415 otherwise).
  std::function<std::optional<JsonValue>(std::string_view body, std::string* error)> from_protobuf;
  std::string api_version() const { return group + "/" + version; }
  std::string prefix() const { return "/registry/" + group + "/" + resource + "/"; }
};

class ObjectRegistry {
 public:
  ObjectRegistry(Store& store, Clock& clock, std::function<bool()> is_leader);
  ~ObjectRegistry();
  // Serves `kind` (whose built-ins are stored by start()).
  void add_kind(ObjectKind kind);
  void add_routes(Router& router);
  // Stores the built-in objects not there yet.
  void start();
  // The /apis answer: every group served, each at its one version.
  std::string group_list() const;
  // A group-version another handler serves (its resource list too), listed in /apis.
  void list_group(std::string group, std::string version) { elsewhere_.emplace_back(group, version); }

 private:
  struct Served;
  void list(const Served& s, RequestContext& ctx, const std::string& ns);
  void watch(const Served& s, RequestContext& ctx, const std::string& prefix);
  void get(const Served& s, RequestContext& ctx);
  void create(const Served& s, RequestContext& ctx);
  void replace(const Served& s, RequestContext& ctx);
  void patch(const Served& s, RequestContext& ctx);
  void remove(const Served& s, RequestContext& ctx);
  // The store key of the object a request names.
  std::string key_of(const Served& s, const RequestContext& ctx) const;
  std::string resource_list(const Served& s) const;
  // Writes `next` over `revision` (0: a create), after admitting it; answers.
  // `warnings` (Warning header values) go with whatever it answers.
  void write(const Served& s, Responder res, JsonValue next, const JsonValue* old, int64_t revision, int ok_status,
             bool dry_run, std::vector<std::string> warnings);
  bool refuse_unless_leader(RequestContext& ctx);

  Store& store_;
  Clock& clock_;
  std::function<bool()> is_leader_;
  std::vector<std::unique_ptr<Served>> served_;
  std::vector<std::pair<std::string, std::string>> elsewhere_;  // (list_group)
};

}  // namespace uvsched
