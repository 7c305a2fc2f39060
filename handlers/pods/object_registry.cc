#include "handlers/pods/object_registry.h"

#include <cassert>
#include <cstdlib>
#include <variant>

#include "handlers/pods/access_review.h"
#include "handlers/pods/api_schema.h"
#include "handlers/pods/json_patch.h"
#include "handlers/pods/k8s_request.h"
#include "handlers/pods/pod_table.h"
#include "handlers/pods/pod_validation.h"
#include "handlers/pods/prefix_watch.h"
#include "handlers/pods/stored_object.h"
#include "handlers/pods/strategic_merge.h"
#include "handlers/pods/typed_decode.h"
#include "reactor/json_writer.h"
#include "reactor/url.h"
#include "storage/unwaited.h"

namespace uvsched {

struct ObjectRegistry::Served {
  ObjectKind kind;
  std::string prefix;
  std::string list_kind;
  // Its described type (api_schema.h): bodies are decoded against it as the
  // API server decodes them (wrong JSON types 400, unknown fields as the
  // request's fieldValidation says). Null: taken as sent.
  const SchemaType* schema = nullptr;
};

namespace {

std::string name_of(const JsonValue& obj) {
  const JsonValue* n = obj.find({"metadata", "name"});
  return n && n->is_string() ? n->text() : "";
}

// kubectl's Table for objects of `kind`: NAME, the kind's columns, AGE.
std::string table_of(const ObjectKind& kind, const std::vector<JsonValue>& objs, const std::string& rv, int64_t now_ms,
                     RowObject row) {
  std::vector<TableColumn> columns = {{"Name", "string", "name", 0}};
  for (const auto& c : kind.columns) columns.push_back({c.name.c_str(), c.type.c_str(), "", 0});
  columns.push_back({"Age", "string", "", 0});
  JsonWriter w;
  begin_table(w, columns);
  for (const auto& obj : objs) {
    w.begin_object().key("cells").begin_array().value(name_of(obj));
    for (const auto& c : kind.columns) {
      std::string cell = c.cell(obj);
      if (c.type == "integer" && !cell.empty()) {
        w.value(static_cast<int64_t>(std::strtoll(cell.c_str(), nullptr, 10)));
      } else {
        w.value(cell.empty() ? "<none>" : cell);
      }
    }
    w.value(table_age(obj, now_ms)).end_array();
    write_row_object(w, obj, row);
    w.end_object();
  }
  end_table(w, rv);
  return w.take();
}

// "podgroups.scheduling.x-k8s.io \"g\"", as the API server names an object in its messages.
std::string named(const ObjectKind& kind, const std::string& name) {
  return kind.resource + "." + kind.group + " \"" + name + "\"";
}
HttpResponse not_found(const ObjectKind& kind, const std::string& name) {
  return k8s_error(404, "NotFound", named(kind, name) + " not found", kind.resource, name);
}
HttpResponse modified(const ObjectKind& kind, const std::string& name) {
  return k8s_error(409, "Conflict",
                   "Operation cannot be fulfilled on " + named(kind, name) +
                       ": the object has been modified; please apply your changes to the latest version and try again",
                   kind.resource, name);
}

// `obj` decoded against its kind's described type under `mode`: the
// refusal, or nullopt with what Warn dropped in `warnings`.
std::optional<HttpResponse> decode_object(const ObjectKind& kind, const SchemaType& schema, JsonValue& obj,
                                          FieldValidation mode, std::vector<std::string>* warnings) {
  TypedDecode decoded = decode_typed(obj, schema);
  std::string name = name_of(obj);
  if (!kind.built_in && !decoded.schema_errors.empty())
    return k8s_object(422, invalid_status_json(kind.kind, name, decoded.schema_errors));
  if (decoded.refused(mode)) return typed_refusal(decoded, mode, kind.kind, name);
  if (mode == FieldValidation::kWarn) *warnings = decoded.warnings();
  return std::nullopt;
}

// A create's or replace's request read as the API server reads it: the
// object, and whether it is a dry run; or the refusal to send.
struct WriteRequest {
  JsonValue object;
  bool dry_run = false;
  std::vector<std::string> warnings;  // Warning header values: what the decoder dropped
};
std::variant<WriteRequest, HttpResponse> read_write(const ObjectKind& kind, const SchemaType* schema,
                                                    const HttpRequest& request) {
  bool protobuf = kind.from_protobuf && sends_protobuf(request);
  if (!protobuf) {
    if (auto refused = refuse_media_type(request)) return std::move(*refused);
  }
  auto dry = dry_run_of(request);
  if (auto* refused = std::get_if<HttpResponse>(&dry)) return std::move(*refused);
  std::string error;
  auto obj = protobuf ? kind.from_protobuf(request.body, &error) : JsonValue::parse(request.body, &error);
  if (!obj || !obj->is_object()) return k8s_error(400, "BadRequest", obj ? "the body must be a " + kind.kind : error);
  // As the API server decodes a body for a typed path: what it leaves out
  // (the official clients send no apiVersion or kind unless the caller set
  // them) is the path's; what it says otherwise is checked (check_identity).
  for (auto [field, value] :
       {std::pair<const char*, std::string>{"apiVersion", kind.api_version()}, {"kind", kind.kind}}) {
    const JsonValue* v = obj->get(field);
    if (!v || v->is_null() || (v->is_string() && v->text().empty())) obj->set(field, JsonValue::string(value));
  }
  WriteRequest out{std::move(*obj), std::get<bool>(dry), {}};
  if (schema) {
    auto mode = field_validation_of(request);
    if (auto* refused = std::get_if<HttpResponse>(&mode)) return std::move(*refused);
    if (auto refused = decode_object(kind, *schema, out.object, std::get<FieldValidation>(mode), &out.warnings))
      return std::move(*refused);
  }
  return out;
}

// What the API server checks of every object before its kind's rules.
std::vector<FieldIssue> check_identity(const ObjectKind& kind, const JsonValue& obj, const std::string& ns) {
  std::vector<FieldIssue> issues;
  if (obj.str("apiVersion") != kind.api_version())
    issues.push_back({"apiVersion", "FieldValueInvalid", "Invalid value: must be " + kind.api_version()});
  if (obj.str("kind") != kind.kind)
    issues.push_back({"kind", "FieldValueInvalid", "Invalid value: must be " + kind.kind});
  for (auto& i : validate_object_meta(obj)) issues.push_back(std::move(i));
  if (kind.namespaced) {
    const JsonValue* n = obj.find({"metadata", "namespace"});
    if (n && n->is_string() && !n->text().empty() && n->text() != ns) {
      issues.push_back({"metadata.namespace", "FieldValueInvalid",
                        "Invalid value: \"" + n->text() + "\": does not match the namespace of the request"});
    }
  }
  return issues;
}

}  // namespace

ObjectRegistry::ObjectRegistry(Store& store, Clock& clock, std::function<bool()> is_leader)
    : store_(store), clock_(clock), is_leader_(std::move(is_leader)) {}

ObjectRegistry::~ObjectRegistry() = default;

void ObjectRegistry::add_kind(ObjectKind kind) {
  auto s = std::make_unique<Served>();
  s->prefix = kind.prefix();
  s->list_kind = kind.kind + "List";
  s->schema = schema_of_kind(kind.group, kind.version, kind.kind);
  assert(!s->schema || (s->schema->resource == kind.resource && s->schema->namespaced == kind.namespaced));
  s->kind = std::move(kind);
  served_.push_back(std::move(s));
}

void ObjectRegistry::start() {
  for (const auto& s : served_) {
    for (const auto& b : s->kind.builtins) {
      JsonValue obj = b;
      obj.ensure({"metadata"}).set("uid", JsonValue::string(new_uid()));
      obj.ensure({"metadata"}).set("creationTimestamp", JsonValue::string(rfc3339(clock_.unix_ms())));
      std::string key = s->prefix + name_of(obj);
      TxnRequest t;
      t.compares.push_back({key, Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});
      t.success.push_back({TxnOp::Type::kPut, key, obj.dump(), 0, false});
      store_.txn(std::move(t), unwaited<TxnResult>("builtin_object_create", key));
    }
  }
}

namespace {
constexpr const char* kPolicyVersion = "policy/v1";
}  // namespace

std::string ObjectRegistry::group_list() const {
  JsonWriter w;
  w.begin_object().key("kind").value("APIGroupList").key("apiVersion").value("v1").key("groups").begin_array();
  std::vector<std::string> seen;
  for (const auto& s : served_) {
    if (std::find(seen.begin(), seen.end(), s->kind.group) != seen.end()) continue;
    seen.push_back(s->kind.group);
    w.begin_object().key("name").value(s->kind.group).key("versions").begin_array();
    w.begin_object().key("groupVersion").value(s->kind.api_version()).key("version").value(s->kind.version);
    w.end_object().end_array();
    w.key("preferredVersion").begin_object().key("groupVersion").value(s->kind.api_version());
    w.key("version").value(s->kind.version).end_object().end_object();
  }
  // The policy group even when no kind of it is served here: core's
  // pods/eviction (discovery.cc) is its Eviction, and kubectl drain before
  // 1.22 evicts only when it finds the group, taking the Eviction's version from it.
  if (std::find(seen.begin(), seen.end(), "policy") == seen.end()) {
    seen.emplace_back("policy");
    w.begin_object().key("name").value("policy").key("versions").begin_array();
    w.begin_object().key("groupVersion").value(kPolicyVersion).key("version").value("v1").end_object().end_array();
    w.key("preferredVersion").begin_object().key("groupVersion").value(kPolicyVersion);
    w.key("version").value("v1").end_object().end_object();
  }
  // The reviews kubectl auth posts, answered by the auth gate, and the groups other handlers serve.
  std::vector<std::pair<std::string, std::string>> others;
  for (const ReviewResource& r : review_resources()) others.emplace_back(r.group, r.version);
  others.insert(others.end(), elsewhere_.begin(), elsewhere_.end());
  for (const auto& [group, version] : others) {
    if (std::find(seen.begin(), seen.end(), group) != seen.end()) continue;
    seen.push_back(group);
    std::string gv = group + "/" + version;
    w.begin_object().key("name").value(group).key("versions").begin_array();
    w.begin_object().key("groupVersion").value(gv).key("version").value(version).end_object().end_array();
    w.key("preferredVersion").begin_object().key("groupVersion").value(gv);
    w.key("version").value(version).end_object().end_object();
  }
  w.end_array().end_object();
  return w.take();
}

namespace {

std::string review_resource_list(std::string_view group_version) {
  JsonWriter w;
  w.begin_object().key("kind").value("APIResourceList").key("apiVersion").value("v1");
  w.key("groupVersion").value(group_version).key("resources").begin_array();
  for (const ReviewResource& r : review_resources()) {
    if (r.group_version() != group_version) continue;
    w.begin_object().key("name").value(r.resource).key("singularName").value("");
    w.key("namespaced").value(false).key("kind").value(r.kind);
    w.key("verbs").begin_array().value("create").end_array().end_object();
  }
  w.end_array().end_object();
  return w.take();
}

}  // namespace

std::string ObjectRegistry::resource_list(const Served& mine) const {
  JsonWriter w;
  w.begin_object().key("kind").value("APIResourceList").key("apiVersion").value("v1");
  w.key("groupVersion").value(mine.kind.api_version()).key("resources").begin_array();
  for (const auto& s : served_) {
    if (s->kind.api_version() != mine.kind.api_version()) continue;
    const ObjectKind& k = s->kind;
    w.begin_object().key("name").value(k.resource).key("singularName").value("");
    w.key("namespaced").value(k.namespaced).key("kind").value(k.kind).key("verbs").begin_array();
    for (const char* v : {"create", "delete", "get", "list", "patch", "update", "watch"}) w.value(v);
    w.end_array();
    if (!k.short_names.empty()) {
      w.key("shortNames").begin_array();
      for (const auto& n : k.short_names) w.value(n);
      w.end_array();
    }
    w.end_object();
  }
  w.end_array().end_object();
  return w.take();
}

void ObjectRegistry::add_routes(Router& router) {
  router.add("GET", "/apis", [this](RequestContext& ctx) { ctx.reply(k8s_object(200, group_list())); });
  if (std::none_of(served_.begin(), served_.end(),
                   [](const auto& s) { return s->kind.api_version() == kPolicyVersion; })) {
    router.add("GET", std::string("/apis/") + kPolicyVersion, [](RequestContext& ctx) {
      ctx.reply(k8s_object(200, std::string(R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":")") +
                                    kPolicyVersion + R"(","resources":[]})"));
    });
  }
  std::vector<std::string> review_versions;
  for (const ReviewResource& r : review_resources()) {
    std::string gv = r.group_version();
    if (std::find(review_versions.begin(), review_versions.end(), gv) != review_versions.end()) continue;
    review_versions.push_back(gv);
    router.add("GET", "/apis/" + gv,
               [gv](RequestContext& ctx) { ctx.reply(k8s_object(200, review_resource_list(gv))); });
  }
  std::vector<std::string> versions;
  for (const auto& sp : served_) {
    const Served& s = *sp;
    const ObjectKind& k = s.kind;
    std::string base = "/apis/" + k.api_version();
    if (std::find(versions.begin(), versions.end(), base) == versions.end()) {
      versions.push_back(base);
      router.add("GET", base, [this, &s](RequestContext& ctx) { ctx.reply(k8s_object(200, resource_list(s))); });
    }
    std::string coll = k.namespaced ? base + "/namespaces/{ns}/" + k.resource : base + "/" + k.resource;
    std::string one = coll + "/{name}";
    if (k.namespaced) {
      router.add("GET", base + "/" + k.resource, [this, &s](RequestContext& ctx) { list(s, ctx, ""); });
    }
    router.add("GET", coll,
               [this, &s](RequestContext& ctx) { list(s, ctx, s.kind.namespaced ? ctx.param("ns") : ""); });
    router.add("POST", coll, [this, &s](RequestContext& ctx) { create(s, ctx); });
    router.add("GET", one, [this, &s](RequestContext& ctx) { get(s, ctx); });
    router.add("PUT", one, [this, &s](RequestContext& ctx) { replace(s, ctx); });
    router.add("PATCH", one, [this, &s](RequestContext& ctx) { patch(s, ctx); });
    router.add("DELETE", one, [this, &s](RequestContext& ctx) { remove(s, ctx); });
  }
}

bool ObjectRegistry::refuse_unless_leader(RequestContext& ctx) {
  if (is_leader_()) return false;
  ctx.reply(k8s_error(503, "ServiceUnavailable", "this uvsched is a standby; ask the leader"));
  return true;
}

std::string ObjectRegistry::key_of(const Served& s, const RequestContext& ctx) const {
  return s.prefix + (s.kind.namespaced ? ctx.param("ns") + "/" : "") + ctx.param("name");
}

void ObjectRegistry::list(const Served& s, RequestContext& ctx, const std::string& ns) {
  std::string prefix = s.prefix + (ns.empty() ? "" : ns + "/");
  if (auto refused = refuse_bad_list_options(ctx.request.query())) return ctx.reply(std::move(*refused));
  if (query_flag(ctx.request.query(), "watch")) return watch(s, ctx, prefix);
  RangeOptions all;
  all.prefix = true;
  Responder res = ctx.responder;
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  store_.get(prefix, all, [this, res, table, &s](RangeResult&& r) mutable {
    if (!r.status.ok()) return res.send(store_down(r.status));
    if (table.wanted) {
      std::vector<JsonValue> objs;
      for (const auto& kv : r.kvs) {
        if (auto v = parse_stored(kv)) objs.push_back(std::move(*v));
      }
      return res.send(k8s_object(200, table_of(s.kind, objs, std::to_string(r.revision), clock_.unix_ms(), table.row)));
    }
    std::string out = "{\"kind\":\"" + s.list_kind + "\",\"apiVersion\":\"" + s.kind.api_version() + "\",\"items\":[";
    for (size_t i = 0; i < r.kvs.size(); ++i) {
      if (i) out += ',';
      out += with_rv(r.kvs[i].value, r.kvs[i].mod_revision);
    }
    out += "],\"metadata\":{\"resourceVersion\":\"" + std::to_string(r.revision) + "\"}}";
    res.send(k8s_object(200, std::move(out)));
  });
}

// (prefix_watch.h: the current objects, then the store's changes.)
void ObjectRegistry::watch(const Served& s, RequestContext& ctx, const std::string& prefix) {
  watch_prefix(store_, clock_, ctx, prefix, [&s](const JsonValue& obj, int64_t now_ms, RowObject row) {
    return table_of(s.kind, {obj}, "", now_ms, row);
  });
}

void ObjectRegistry::get(const Served& s, RequestContext& ctx) {
  Responder res = ctx.responder;
  std::string name = ctx.param("name");
  // kubectl get <kind> <name> asks for a Table too: its columns, not just NAME and AGE.
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  store_.get(key_of(s, ctx), {}, [this, res, name, table, &s](RangeResult&& r) mutable {
    if (!r.status.ok()) return res.send(store_down(r.status));
    if (r.kvs.empty()) return res.send(not_found(s.kind, name));
    if (table.wanted) {
      auto obj = parse_stored(r.kvs[0]);
      if (!obj) return res.send(k8s_error(500, "InternalError", "the stored object is not JSON"));
      return res.send(k8s_object(
          200, table_of(s.kind, {*obj}, std::to_string(r.kvs[0].mod_revision), clock_.unix_ms(), table.row)));
    }
    res.send(k8s_object(200, with_rv(r.kvs[0].value, r.kvs[0].mod_revision)));
  });
}

void ObjectRegistry::create(const Served& s, RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  auto read = read_write(s.kind, s.schema, ctx.request);
  if (auto* refused = std::get_if<HttpResponse>(&read)) return ctx.reply(std::move(*refused));
  WriteRequest& req = std::get<WriteRequest>(read);
  JsonValue& meta = req.object.ensure({"metadata"});
  if (s.kind.namespaced) {
    const JsonValue* n = meta.get("namespace");
    if (!n || !n->is_string() || n->text().empty()) meta.set("namespace", JsonValue::string(ctx.param("ns")));
  }
  meta.erase("resourceVersion");
  meta.set("uid", JsonValue::string(new_uid()));
  meta.set("creationTimestamp", JsonValue::string(rfc3339(clock_.unix_ms())));
  meta.set("generation", JsonValue::integer(1));
  write(s, ctx.responder, std::move(req.object), nullptr, 0, 201, req.dry_run, std::move(req.warnings));
}

void ObjectRegistry::write(const Served& s, Responder responder, JsonValue next, const JsonValue* old, int64_t revision,
                           int ok_status, bool dry_run, std::vector<std::string> warnings) {
  // Every answer carries what the decoder dropped, as the API server's do.
  auto reply = [responder, warnings = std::make_shared<const std::vector<std::string>>(std::move(warnings))](
                   HttpResponse r) mutable { responder.send(with_warnings(std::move(r), *warnings)); };
  std::string ns = next.find({"metadata", "namespace"}) ? next.find({"metadata", "namespace"})->text() : "";
  std::string name = name_of(next);
  std::vector<FieldIssue> issues = check_identity(s.kind, next, ns);
  if (issues.empty() && s.kind.admit) issues = s.kind.admit(next, old);
  if (!issues.empty()) return reply(k8s_object(422, invalid_status_json(s.kind.kind, name, issues)));
  if (s.kind.forbid) {
    if (auto why = s.kind.forbid(next))
      return reply(k8s_error(403, "Forbidden", named(s.kind, name) + " is forbidden: " + *why, s.kind.resource, name));
  }
  if (dry_run && s.kind.preview) {
    next.ensure({"metadata", "annotations"})
        .set("uvsched.io/dry-run-placement", JsonValue::string(s.kind.preview(next)));
  }
  std::string json = next.dump();
  std::string key = s.prefix + (s.kind.namespaced ? ns + "/" : "") + name;
  if (dry_run && revision != 0) return reply(k8s_object(ok_status, with_rv(json, revision)));
  if (dry_run) {  // a create: answered as the store would answer it, nothing written
    store_.get(key, {}, [reply, json, name, &s](RangeResult&& r) mutable {
      if (!r.status.ok()) return reply(store_down(r.status));
      if (!r.kvs.empty())
        return reply(k8s_error(409, "AlreadyExists", named(s.kind, name) + " already exists", s.kind.resource, name));
      reply(k8s_object(201, json));
    });
    return;
  }
  TxnRequest t;
  if (revision == 0) {
    t.compares.push_back({key, Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});
  } else {
    t.compares.push_back({key, Compare::Target::kModRevision, Compare::Op::kEqual, revision, {}});
  }
  t.success.push_back({TxnOp::Type::kPut, key, json, 0, false});
  store_.txn(std::move(t), [reply, json, name, ok_status, revision, &s](TxnResult&& r) mutable {
    if (!r.status.ok()) return reply(store_down(r.status));
    if (!r.succeeded) {
      if (revision == 0)
        return reply(k8s_error(409, "AlreadyExists", named(s.kind, name) + " already exists", s.kind.resource, name));
      return reply(modified(s.kind, name));
    }
    reply(k8s_object(ok_status, with_rv(json, r.revision)));
  });
}

void ObjectRegistry::replace(const Served& s, RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  auto read = read_write(s.kind, s.schema, ctx.request);
  if (auto* refused = std::get_if<HttpResponse>(&read)) return ctx.reply(std::move(*refused));
  WriteRequest& req = std::get<WriteRequest>(read);
  if (name_of(req.object) != ctx.param("name"))
    return ctx.reply(k8s_error(400, "BadRequest", "the name of the object does not match the name on the URL"));
  Responder res = ctx.responder;
  store_.get(
      key_of(s, ctx), {},
      [this, res, next = std::move(req.object), dry_run = req.dry_run, warnings = std::move(req.warnings),
       &s](RangeResult&& r) mutable {
        if (!r.status.ok()) return res.send(store_down(r.status));
        std::string name = name_of(next);
        if (r.kvs.empty()) return res.send(not_found(s.kind, name));
        std::string error;
        auto old = JsonValue::parse(r.kvs[0].value, &error);
        if (!old) return res.send(k8s_error(500, "InternalError", "the stored object is not JSON"));
        const JsonValue* rv = next.find({"metadata", "resourceVersion"});
        int64_t revision = r.kvs[0].mod_revision;
        if (rv && rv->is_string() && !rv->text().empty() && std::strtoll(rv->text().c_str(), nullptr, 10) != revision) {
          return res.send(modified(s.kind, name));
        }
        JsonValue& meta = next.ensure({"metadata"});
        meta.erase("resourceVersion");
        for (const char* k : {"uid", "creationTimestamp", "namespace"}) {
          if (const JsonValue* v = old->find({"metadata", k})) meta.set(k, *v);
        }
        write(s, res, std::move(next), &*old, revision, 200, dry_run, std::move(warnings));
      });
}

void ObjectRegistry::patch(const Served& s, RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  auto dry = dry_run_of(ctx.request);
  if (auto* refused = std::get_if<HttpResponse>(&dry)) return ctx.reply(std::move(*refused));
  std::optional<PatchType> type = patch_type(ctx.request.header("Content-Type"));
  bool strategic = s.kind.built_in && type == PatchType::kStrategic;
  if (!type || (*type != PatchType::kMerge && *type != PatchType::kJson && !strategic)) {
    // As the API server answers a custom resource: it has no strategic merge.
    return ctx.reply(
        k8s_error(415, "UnsupportedMediaType",
                  std::string("the body of the request was in an unknown format - accepted media types include: "
                              "application/json-patch+json, application/merge-patch+json") +
                      (s.kind.built_in ? ", application/strategic-merge-patch+json" : "")));
  }
  auto validation = field_validation_of(ctx.request);
  if (auto* refused = std::get_if<HttpResponse>(&validation)) return ctx.reply(std::move(*refused));
  std::string error;
  auto body = JsonValue::parse(ctx.request.body, &error);
  if (!body) return ctx.reply(k8s_error(400, "BadRequest", error));
  Responder res = ctx.responder;
  std::string name = ctx.param("name");
  bool dry_run = std::get<bool>(dry);
  store_.get(key_of(s, ctx), {},
             [this, res, name, dry_run, type = *type, p = std::move(*body),
              mode = std::get<FieldValidation>(validation), &s](RangeResult&& r) mutable {
               if (!r.status.ok()) return res.send(store_down(r.status));
               if (r.kvs.empty()) return res.send(not_found(s.kind, name));
               std::string error;
               auto old = JsonValue::parse(r.kvs[0].value, &error);
               if (!old) return res.send(k8s_error(500, "InternalError", "the stored object is not JSON"));
               JsonValue next = *old;
               if (type != PatchType::kJson && !p.is_object()) {
                 return res.send(k8s_error(400, "BadRequest", "a merge patch must be an object"));
               }
               if (type == PatchType::kMerge) {
                 next.merge_patch(p);
               } else if (type == PatchType::kStrategic) {
                 if (!strategic_merge(next, p, "", &error)) return res.send(k8s_error(400, "BadRequest", error));
               } else if (!apply_json_patch(next, p, &error)) {
                 return res.send(k8s_request_invalid(error));
               }
               // The patched object is decoded as a body would be: a patch
               // cannot give a field a wrong type, nor (Strict) add one the
               // type does not have.
               std::vector<std::string> warnings;
               if (s.schema) {
                 if (auto refused = decode_object(s.kind, *s.schema, next, mode, &warnings))
                   return res.send(std::move(*refused));
               }
               JsonValue& meta = next.ensure({"metadata"});
               meta.erase("resourceVersion");
               for (const char* k : {"uid", "creationTimestamp", "namespace", "name"}) {
                 if (const JsonValue* v = old->find({"metadata", k})) meta.set(k, *v);
               }
               write(s, res, std::move(next), &*old, r.kvs[0].mod_revision, 200, dry_run, std::move(warnings));
             });
}

void ObjectRegistry::remove(const Served& s, RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  auto dry = dry_run_of(ctx.request);
  if (auto* refused = std::get_if<HttpResponse>(&dry)) return ctx.reply(std::move(*refused));
  std::string name = ctx.param("name");
  for (const auto& b : s.kind.builtins) {
    if (name_of(b) == name) {
      return ctx.reply(k8s_error(403, "Forbidden",
                                 named(s.kind, name) + " is forbidden: " + s.kind.builtin_delete_refusal,
                                 s.kind.resource, name));
    }
  }
  Responder res = ctx.responder;
  std::string key = key_of(s, ctx);
  bool dry_run = std::get<bool>(dry);
  store_.get(key, {}, [this, res, key, name, dry_run, &s](RangeResult&& r) mutable {
    if (!r.status.ok()) return res.send(store_down(r.status));
    if (r.kvs.empty()) return res.send(not_found(s.kind, name));
    std::string object = with_rv(r.kvs[0].value, r.kvs[0].mod_revision);
    if (dry_run) return res.send(k8s_object(200, std::move(object)));
    TxnRequest t;
    t.compares.push_back({key, Compare::Target::kModRevision, Compare::Op::kEqual, r.kvs[0].mod_revision, {}});
    t.success.push_back({TxnOp::Type::kDelete, key, {}, 0, false});
    store_.txn(std::move(t), [res, object, name, &s](TxnResult&& t) mutable {
      if (!t.status.ok()) return res.send(store_down(t.status));
      if (!t.succeeded)
        return res.send(k8s_error(409, "Conflict", s.kind.kind + " \"" + name + "\" changed while being deleted",
                                  s.kind.resource, name));
      res.send(k8s_object(200, std::move(object)));
    });
  });
}

}  // namespace uvsched
