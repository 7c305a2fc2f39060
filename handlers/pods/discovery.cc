#include "handlers/pods/discovery.h"

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
      } else {
        w.key("x-kubernetes-int-or-string").value(true);
      }
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

// Every described type's schema, as a member of w's open object (v3's
// components.schemas, v2's definitions).
void write_described_types(JsonWriter& w, bool v2) {
  for (const SchemaType& t : api_schema()) {
    w.key(t.name).begin_object();
    w.key("description").value(t.description).key("type").value("object");
    w.key("properties").begin_object();
    for (const SchemaField& f : t.fields) {
      w.key(f.name);
      write_field_schema(w, f, f.kind, true, v2);
    }
    w.end_object();
    if (!t.kind.empty()) {
      w.key("x-kubernetes-group-version-kind").begin_array();
      w.begin_object().key("group").value("").key("kind").value(t.kind).key("version").value("v1").end_object();
      w.end_array();
    }
    w.end_object();
  }
}

// An OpenAPI v3 document for core/v1 from the one description the typed
// decoder checks bodies against (api_schema.h), so `kubectl explain` shows
// what the server takes; the lists and Node (read-only here) let any field
// through.
std::string openapi_v3_core() {
  JsonWriter w;
  w.begin_object().key("openapi").value("3.0.0");
  w.key("info").begin_object().key("title").value("uvsched").key("version").value("v1.32.0").end_object();
  // kubectl looks here for a PATCH operation on the kind that takes
  // `fieldValidation`; finding it, it leaves validation to the server instead
  // of fetching a protobuf schema.
  w.key("paths").begin_object();
  struct Path {
    const char* path;
    const char* kind;
  };
  for (const Path& p : {Path{"/api/v1/namespaces/{namespace}/pods/{name}", "Pod"},
                        Path{"/api/v1/namespaces/{name}", "Namespace"}, Path{"/api/v1/nodes/{name}", "Node"}}) {
    w.key(p.path).begin_object().key("patch").begin_object();
    w.key("x-kubernetes-group-version-kind").begin_object();
    w.key("group").value("").key("kind").value(p.kind).key("version").value("v1").end_object();
    w.key("parameters").begin_array();
    w.begin_object().key("name").value("fieldValidation").key("in").value("query");
    w.key("schema").begin_object().key("type").value("string").end_object().end_object();
    w.end_array();
    w.key("responses")
        .begin_object()
        .key("200")
        .begin_object()
        .key("description")
        .value("OK")
        .end_object()
        .end_object();
    w.end_object().end_object();
  }
  w.end_object();
  w.key("components").begin_object().key("schemas").begin_object();
  write_described_types(w, /*v2=*/false);
  for (const char* kind : {"PodList", "Node", "NodeList", "NamespaceList"}) {
    w.key(std::string("io.k8s.api.core.v1.") + kind).begin_object();
    w.key("type").value("object");
    w.key("x-kubernetes-preserve-unknown-fields").value(true);
    w.key("x-kubernetes-group-version-kind").begin_array();
    w.begin_object().key("group").value("").key("kind").value(kind).key("version").value("v1").end_object();
    w.end_array().end_object();
  }
  w.end_object().end_object().end_object();
  return w.take();
}

std::string openapi_v2() {
  JsonWriter w;
  w.begin_object().key("swagger").value("2.0");
  w.key("info").begin_object().key("title").value("uvsched").key("version").value("v1.32.0").end_object();
  // Pods, PodGroups and PriorityClasses take dryRun (and fieldValidation):
  // kubectl 1.20 looks for the parameter on the kind's PATCH before it sends
  // --dry-run=server, and refuses ("doesn't support dry-run") without it.
  struct Patchable {
    const char* path;
    const char* group;
    const char* kind;
    const char* version;
  };
  w.key("paths").begin_object();
  for (const Patchable& p :
       {Patchable{"/api/v1/namespaces/{namespace}/pods/{name}", "", "Pod", "v1"},
        Patchable{"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups/{name}", "scheduling.x-k8s.io",
                  "PodGroup", "v1alpha1"},
        Patchable{"/apis/scheduling.k8s.io/v1/priorityclasses/{name}", "scheduling.k8s.io", "PriorityClass", "v1"}}) {
    w.key(p.path).begin_object().key("patch").begin_object();
    w.key("x-kubernetes-group-version-kind").begin_object();
    w.key("group").value(p.group).key("kind").value(p.kind).key("version").value(p.version).end_object();
    w.key("parameters").begin_array();
    for (const char* name : {"dryRun", "fieldValidation"}) {
      w.begin_object().key("name").value(name).key("in").value("query").key("type").value("string").end_object();
    }
    w.end_array();
    w.key("responses")
        .begin_object()
        .key("200")
        .begin_object()
        .key("description")
        .value("OK")
        .end_object()
        .end_object();
    w.end_object().end_object();
  }
  w.end_object().key("definitions").begin_object();
  write_described_types(w, /*v2=*/true);
  for (const char* kind : {"PodList", "Node", "NodeList", "NamespaceList"}) {
    w.key(std::string("io.k8s.api.core.v1.") + kind).begin_object().key("type").value("object");
    w.key("x-kubernetes-group-version-kind").begin_array();
    w.begin_object().key("group").value("").key("kind").value(kind).key("version").value("v1").end_object();
    w.end_array().end_object();
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
  static const std::string v3_core = openapi_v3_core();
  router.add("GET", "/openapi/v3", [](RequestContext& ctx) {
    ctx.reply(k8s_object(200, R"({"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=uvsched1"}}})"));
  });
  router.add("GET", "/openapi/v3/api/v1", [](RequestContext& ctx) { ctx.reply(k8s_object(200, v3_core)); });
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
