#include "handlers/pods/discovery.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <functional>
#include <memory>

#include "handlers/pods/api_schema.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/openapi_proto.h"
#include "reactor/json_writer.h"

namespace uvsched {
namespace {

struct Resource {
  const char* name;
  const char* kind;
  bool namespaced;
  std::initializer_list<const char*> verbs;
  std::initializer_list<const char*> short_names;
  const char* group = nullptr;  // a subresource whose kind is another group's (pods/eviction: policy/v1)
  const char* version = nullptr;
};

const Resource kResources[] = {
    {"pods", "Pod", true, {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, {"po"}},
    {"pods/status", "Pod", true, {"get", "patch", "update"}, {}},
    {"pods/binding", "Binding", true, {"create"}, {}},
    // kubectl drain evicts through it when it is listed here (with its group and version).
    {"pods/eviction", "Eviction", true, {"create"}, {}, "policy", "v1"},
    {"nodes", "Node", false, {"get", "list", "watch"}, {"no"}},
    {"namespaces", "Namespace", false, {"create", "delete", "get", "list", "watch"}, {"ns"}},
    {"events", "Event", true, {"list"}, {"ev"}},
    // None (empty_services.h): listed for kubectl cluster-info.
    {"services", "Service", true, {"get", "list"}, {"svc"}},
};

std::string api_resource_list() {
  JsonWriter w;
  w.begin_object().key("kind").value("APIResourceList").key("apiVersion").value("v1");
  w.key("groupVersion").value("v1").key("resources").begin_array();
  for (const auto& r : kResources) {
    w.begin_object().key("name").value(r.name).key("singularName").value("");
    w.key("namespaced").value(r.namespaced).key("kind").value(r.kind);
    if (r.group) w.key("group").value(r.group).key("version").value(r.version);
    w.key("verbs").begin_array();
    for (const char* v : r.verbs) w.value(v);
    w.end_array();
    if (r.short_names.size() > 0) {
      w.key("shortNames").begin_array();
      for (const char* s : r.short_names) w.value(s);
      w.end_array();
    }
    if (std::string_view(r.name) == "pods") w.key("categories").begin_array().value("all").end_array();
    w.end_object();
  }
  w.end_array().end_object();
  return w.take();
}

constexpr const char* kQuantityType = "io.k8s.apimachinery.pkg.api.resource.Quantity";
constexpr const char* kIntOrStringType = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";

// The scalars v3 fields refer to by name, in every v3 document.
void write_scalar_types(JsonWriter& w) {
  w.key(kQuantityType).begin_object();
  w.key("description")
      .value("An amount: a string, a decimal with an optional suffix (500m, 1.5, 128Mi, 2G), or a JSON number.");
  w.key("x-kubernetes-int-or-string").value(true).end_object();
  w.key(kIntOrStringType).begin_object();
  w.key("description").value("An integer, or a string (a percentage where the field says so).");
  w.key("x-kubernetes-int-or-string").value(true).end_object();
}

// One field's schema: its type, description, and for objects a reference to
// the described type (v3: allOf, as the API server writes it; v2: $ref). In
// v2, which kubectl before 1.27 validates manifests against, a quantity and
// a free object are left open (any value; any members), as that kubectl's
// validator reads them.
void write_field_schema(JsonWriter& w, const SchemaField& f, SchemaKind kind, bool with_description, bool v2 = false) {
  w.begin_object();
  if (with_description && !f.description.empty()) w.key("description").value(f.description);
  switch (kind) {
    case SchemaKind::kString:
      w.key("type").value("string");
      break;
    case SchemaKind::kTime:
      w.key("type").value("string").key("format").value("date-time");
      break;
    case SchemaKind::kInteger:
      w.key("type").value("integer").key("format").value("int64");
      break;
    case SchemaKind::kBoolean:
      w.key("type").value("boolean");
      break;
    case SchemaKind::kQuantity:
    case SchemaKind::kIntOrString:
      if (v2) {
        w.key("format").value("int-or-string");
        break;
      }
      // A reference to the named scalar (write_scalar_types), as the API server
      // writes one: kubectl explain names the field's type after it.
      w.key("allOf").begin_array().begin_object().key("$ref");
      w.value(std::string("#/components/schemas/") +
              (kind == SchemaKind::kQuantity ? kQuantityType : kIntOrStringType));
      w.end_object().end_array();
      break;
    case SchemaKind::kObject:
      if (v2) {
        w.key("$ref").value("#/definitions/" + std::string(f.ref));
        break;
      }
      w.key("allOf").begin_array().begin_object();
      w.key("$ref").value("#/components/schemas/" + std::string(f.ref)).end_object().end_array();
      w.key("default").begin_object().end_object();
      break;
    case SchemaKind::kFreeObject:
      w.key("type").value("object");
      if (v2) {
        w.key("additionalProperties").begin_object().end_object();
      } else {
        w.key("x-kubernetes-preserve-unknown-fields").value(true);
      }
      break;
    case SchemaKind::kStringMap:
    case SchemaKind::kQuantityMap:
      w.key("type").value("object").key("additionalProperties");
      write_field_schema(w, f, kind == SchemaKind::kStringMap ? SchemaKind::kString : SchemaKind::kQuantity, false, v2);
      break;
    case SchemaKind::kArray:
      w.key("type").value("array").key("items");
      write_field_schema(w, f, f.item, false, v2);
      if (!f.merge_key.empty()) {
        w.key("x-kubernetes-patch-merge-key").value(f.merge_key);
        w.key("x-kubernetes-patch-strategy").value("merge");
      }
      break;
  }
  w.end_object();
}

// The described types a document must hold for `roots` to be read: the
// roots, and every type their fields name, in the schema's order.
std::vector<const SchemaType*> types_reached_from(const std::vector<const SchemaType*>& roots) {
  std::vector<std::string_view> seen;
  std::vector<const SchemaType*> todo = roots;
  while (!todo.empty()) {
    const SchemaType* t = todo.back();
    todo.pop_back();
    if (std::find(seen.begin(), seen.end(), t->name) != seen.end()) continue;
    seen.push_back(t->name);
    for (const SchemaField& f : t->fields) {
      if (f.ref.empty()) continue;
      const SchemaType* r = schema_type(f.ref);
      assert(r && "a field names a type the schema describes");
      todo.push_back(r);
    }
  }
  std::vector<const SchemaType*> out;
  for (const SchemaType& t : api_schema()) {
    if (std::find(seen.begin(), seen.end(), t.name) != seen.end()) out.push_back(&t);
  }
  return out;
}

// The top-level kinds of one group-version.
std::vector<const SchemaType*> kinds_of(std::string_view group, std::string_view version) {
  std::vector<const SchemaType*> out;
  for (const SchemaType& t : api_schema()) {
    if (!t.kind.empty() && t.group == group && t.version == version) out.push_back(&t);
  }
  return out;
}

void write_group_version_kind(JsonWriter& w, std::string_view group, std::string_view kind, std::string_view version) {
  w.key("x-kubernetes-group-version-kind").begin_array();
  w.begin_object().key("group").value(group).key("kind").value(kind).key("version").value(version).end_object();
  w.end_array();
}

// `types`' schemas, as members of w's open object (v3's components.schemas,
// v2's definitions).
void write_types(JsonWriter& w, const std::vector<const SchemaType*>& types, bool v2) {
  for (const SchemaType* t : types) {
    w.key(t->name).begin_object();
    w.key("description").value(t->description).key("type").value("object");
    w.key("properties").begin_object();
    for (const SchemaField& f : t->fields) {
      w.key(f.name);
      write_field_schema(w, f, f.kind, true, v2);
    }
    w.end_object();
    if (!t->kind.empty()) write_group_version_kind(w, t->group, t->kind, t->version);
    w.end_object();
  }
}

// A kind's PATCH operation taking `parameters`: kubectl looks for one that
// takes fieldValidation and, finding it, leaves validation to the server
// (v3), and before 1.27 for dryRun before it sends --dry-run=server (v2).
struct PatchPath {
  std::string path;
  std::string_view group, kind, version;
};
void write_patch_paths(JsonWriter& w, const std::vector<PatchPath>& paths,
                       std::initializer_list<const char*> parameters, bool v2) {
  w.key("paths").begin_object();
  for (const PatchPath& p : paths) {
    w.key(p.path).begin_object().key("patch").begin_object();
    w.key("x-kubernetes-group-version-kind").begin_object();
    w.key("group").value(p.group).key("kind").value(p.kind).key("version").value(p.version).end_object();
    w.key("parameters").begin_array();
    for (const char* name : parameters) {
      w.begin_object().key("name").value(name).key("in").value("query");
      if (v2) {
        w.key("type").value("string");
      } else {
        w.key("schema").begin_object().key("type").value("string").end_object();
      }
      w.end_object();
    }
    w.end_array();
    w.key("responses").begin_object().key("200").begin_object().key("description").value("OK");
    w.end_object().end_object();
    w.end_object().end_object();
  }
  w.end_object();
}

// The path of the object a kind's PATCH names.
std::string object_path(const SchemaType& t) {
  std::string base = t.group.empty() ? "/api/v1" : "/apis/" + std::string(t.group) + "/" + std::string(t.version);
  return base + (t.namespaced ? "/namespaces/{namespace}/" : "/") + std::string(t.resource) + "/{name}";
}

// Core/v1's read-only and list kinds: any field passes.
constexpr const char* kOpenCoreKinds[] = {"PodList", "Node", "NodeList", "NamespaceList"};

// An OpenAPI v3 document for one group-version from the one description the
// typed decoder checks bodies against (api_schema.h), so `kubectl explain`
// shows what the server takes.
std::string openapi_v3(std::string_view group, std::string_view version) {
  JsonWriter w;
  w.begin_object().key("openapi").value("3.0.0");
  w.key("info").begin_object().key("title").value("uvsched").key("version").value("v1.32.0").end_object();
  std::vector<const SchemaType*> kinds = kinds_of(group, version);
  std::vector<PatchPath> patchable;
  for (const SchemaType* t : kinds) {
    if (!t->resource.empty()) patchable.push_back({object_path(*t), t->group, t->kind, t->version});
  }
  if (group.empty()) patchable.push_back({"/api/v1/nodes/{name}", "", "Node", "v1"});
  write_patch_paths(w, patchable, {"fieldValidation"}, false);
  w.key("components").begin_object().key("schemas").begin_object();
  write_types(w, types_reached_from(kinds), /*v2=*/false);
  write_scalar_types(w);
  if (group.empty()) {
    for (const char* kind : kOpenCoreKinds) {
      w.key(std::string("io.k8s.api.core.v1.") + kind).begin_object();
      w.key("type").value("object");
      w.key("x-kubernetes-preserve-unknown-fields").value(true);
      write_group_version_kind(w, "", kind, "v1");
      w.end_object();
    }
  }
  w.end_object().end_object().end_object();
  return w.take();
}

// The group-versions with described kinds, in the schema's order.
std::vector<std::pair<std::string_view, std::string_view>> group_versions() {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  for (const SchemaType& t : api_schema()) {
    std::pair<std::string_view, std::string_view> gv{t.group, t.version};
    if (!t.kind.empty() && std::find(out.begin(), out.end(), gv) == out.end()) out.push_back(gv);
  }
  return out;
}

// Where a group-version's v3 document is: "api/v1", "apis/policy/v1".
std::string v3_path(std::string_view group, std::string_view version) {
  return group.empty() ? "api/" + std::string(version) : "apis/" + std::string(group) + "/" + std::string(version);
}

// Each group-version's v3 document, at its path.
std::vector<std::pair<std::string, std::string>> openapi_v3_documents() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [group, version] : group_versions())
    out.emplace_back(v3_path(group, version), openapi_v3(group, version));
  return out;
}

// The index kubectl reads first. Each URL carries its document's hash, as
// the API server's do, so a client that caches documents by URL never keeps
// one a newer build changed.
std::string openapi_v3_index(const std::vector<std::pair<std::string, std::string>>& documents) {
  JsonWriter w;
  w.begin_object().key("paths").begin_object();
  for (const auto& [path, doc] : documents) {
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(doc));
    w.key(path).begin_object().key("serverRelativeURL").value("/openapi/v3/" + path + "?hash=" + hash).end_object();
  }
  w.end_object().end_object();
  return w.take();
}

std::string openapi_v2() {
  JsonWriter w;
  w.begin_object().key("swagger").value("2.0");
  w.key("info").begin_object().key("title").value("uvsched").key("version").value("v1.32.0").end_object();
  // Pods and the registry's kinds take dryRun (and fieldValidation): kubectl
  // 1.20 looks for the parameter on the kind's PATCH before it sends
  // --dry-run=server, and refuses ("doesn't support dry-run") without it.
  std::vector<PatchPath> patchable;
  for (const SchemaType& t : api_schema()) {
    // Not a Namespace's: uvsched takes no dry run of one, and so kubectl 1.20 says before it sends one.
    if (t.resource.empty() || t.kind == "Namespace") continue;
    patchable.push_back({object_path(t), t.group, t.kind, t.version});
  }
  write_patch_paths(w, patchable, {"dryRun", "fieldValidation"}, true);
  w.key("definitions").begin_object();
  std::vector<const SchemaType*> all;
  for (const SchemaType& t : api_schema()) all.push_back(&t);
  write_types(w, all, /*v2=*/true);
  for (const char* kind : kOpenCoreKinds) {
    w.key(std::string("io.k8s.api.core.v1.") + kind).begin_object().key("type").value("object");
    write_group_version_kind(w, "", kind, "v1");
    w.end_object();
  }
  w.end_object().end_object();
  return w.take();
}

}  // namespace

void add_discovery_routes(Router& router) {
  router.add("GET", "/version", [](RequestContext& ctx) {
    ctx.reply(k8s_object(200, R"({"major":"1","minor":"32","gitVersion":"v1.32.0-uvsched","gitCommit":"",)"
                              R"("gitTreeState":"clean","buildDate":"","goVersion":"","compiler":"gc",)"
                              R"("platform":"linux/amd64"})"));
  });
  router.add("GET", "/api", [](RequestContext& ctx) {
    ctx.reply(k8s_object(200, R"({"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]})"));
  });
  static const std::string resources = api_resource_list();
  router.add("GET", "/api/v1", [](RequestContext& ctx) { ctx.reply(k8s_object(200, resources)); });
  auto v3 = openapi_v3_documents();
  auto v3_index = std::make_shared<const std::string>(openapi_v3_index(v3));
  router.add("GET", "/openapi/v3", [v3_index](RequestContext& ctx) { ctx.reply(k8s_object(200, *v3_index)); });
  for (auto& [path, doc] : v3) {
    auto shared = std::make_shared<const std::string>(std::move(doc));
    router.add("GET", "/openapi/v3/" + path, [shared](RequestContext& ctx) { ctx.reply(k8s_object(200, *shared)); });
  }
  static const std::string v2 = openapi_v2();
  static const std::string v2_proto = openapi_v2_protobuf(v2).value();
  router.add("GET", "/openapi/v2", [](RequestContext& ctx) {
    // kubectl before 1.27 validates a manifest against the protobuf form.
    const std::string* accept = ctx.request.header("Accept");
    if (accept && accept->find(kOpenApiV2ProtobufType) != std::string::npos) {
      HttpResponse r;
      r.content_type = "application/octet-stream";  // what the API server says: Go cannot parse the type with its @
      r.body = v2_proto;
      return ctx.reply(std::move(r));
    }
    ctx.reply(k8s_object(200, v2));
  });
  // Unknown API paths answer a Status, never the plain JSON error; so do the
  // server's refusals (kubectl says of a 413 without one only that the server
  // "did not return more information").
  for (const char* prefix : {"/api/", "/apis/", "/openapi/"}) {
    router.set_not_found(prefix, [](RequestContext& ctx) {
      ctx.reply(k8s_error(404, "NotFound", "the server could not find the requested resource"));
    });
    router.set_refusal(prefix, [](int status, std::string_view message) {
      return k8s_error(status, k8s_reason_for(status), message);
    });
  }
}

}  // namespace uvsched
