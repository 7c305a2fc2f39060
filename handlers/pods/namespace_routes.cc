// The registry's namespaces (listed, created from JSON or protobuf, applied,
// read, deleted with their pods) and nodes (a read-only view of the agents).
#include "handlers/pods/pod_registry.h"

#include "handlers/pods/field_manager.h"
#include "handlers/pods/k8s_protobuf.h"
#include "handlers/pods/k8s_request.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/pod_table.h"
#include "handlers/pods/pod_validation.h"
#include "handlers/pods/stored_object.h"
#include "storage/unwaited.h"

namespace uvsched {

void PodRegistry::list_namespaces(RequestContext& ctx) {
  if (auto refused = refuse_bad_list_options(ctx.request.query())) return ctx.reply(std::move(*refused));
  if (query_flag(ctx.request.query(), "watch")) return watch_namespaces(ctx);
  RangeOptions all;
  all.prefix = true;
  Responder res = ctx.responder;
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  int64_t now = clock_.unix_ms();
  store_.get(kNamespacePrefix, all, [res, table, now](RangeResult&& r) mutable {
    if (!r.status.ok()) return res.send(store_down(r.status));
    if (table.wanted) {
      std::vector<JsonValue> objs;
      for (const auto& kv : r.kvs) {
        if (auto v = parse_stored(kv)) objs.push_back(std::move(*v));
      }
      return res.send(k8s_object(200, namespace_table(objs, std::to_string(r.revision), now, table.row)));
    }
    ListWriter items("NamespaceList");
    for (const auto& kv : r.kvs) items.add(kv.value, kv.mod_revision);
    items.finish(r.revision, "");
    res.send(k8s_object(200, items.take()));
  });
}

void PodRegistry::create_namespace(RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  if (auto refused = refuse_dry_run(ctx.request)) return ctx.reply(std::move(*refused));
  std::string error;
  // kubectl's `create namespace` sends protobuf (a typed client), and takes
  // JSON back.
  bool protobuf = sends_protobuf(ctx.request);
  if (!protobuf) {
    if (auto refused = refuse_media_type(ctx.request, /*protobuf_too=*/true)) return ctx.reply(std::move(*refused));
  }
  auto ns = protobuf ? namespace_from_protobuf(ctx.request.body, &error) : JsonValue::parse(ctx.request.body, &error);
  if (!ns || !ns->is_object())
    return ctx.reply(k8s_error(400, "BadRequest", ns ? "the body must be a Namespace" : error));
  std::vector<std::string> warnings;
  if (auto refused = decode_body(ctx.request, *ns, "io.k8s.api.core.v1.Namespace", "Namespace", &warnings)) {
    return ctx.reply(std::move(*refused));
  }
  std::string name = ns->find({"metadata", "name"}) ? ns->find({"metadata", "name"})->text() : "";
  if (!is_dns1123_label(name)) {
    return ctx.reply(
        k8s_object(422, invalid_status_json("Namespace", name,
                                            {{"metadata.name", "FieldValueInvalid",
                                              "Invalid value: \"" + name + "\": must be a DNS-1123 label"}})));
  }
  if (auto issues = validate_object_meta(*ns); !issues.empty()) {
    return ctx.reply(k8s_object(422, invalid_status_json("Namespace", name, issues)));
  }
  JsonValue obj = JsonValue::object();
  obj.set("kind", JsonValue::string("Namespace"));
  obj.set("apiVersion", JsonValue::string("v1"));
  JsonValue meta = *ns->get("metadata");
  meta.erase("resourceVersion");
  meta.set("uid", JsonValue::string(new_uid()));
  meta.set("creationTimestamp", JsonValue::string(rfc3339(clock_.unix_ms())));
  obj.set("metadata", std::move(meta));
  obj.ensure({"status"}).set("phase", JsonValue::string("Active"));
  std::string json = obj.dump();
  std::string key = std::string(kNamespacePrefix) + name;
  TxnRequest t;
  t.compares.push_back({key, Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});
  t.success.push_back({TxnOp::Type::kPut, key, json, 0, false});
  Responder res = ctx.responder;
  store_.txn(std::move(t), [res, json, name, warnings = std::move(warnings)](TxnResult&& r) mutable {
    if (!r.status.ok()) return res.send(store_down(r.status));
    if (!r.succeeded)
      return res.send(
          k8s_error(409, "AlreadyExists", "namespaces \"" + name + "\" already exists", "namespaces", name));
    res.send(with_warnings(k8s_object(201, with_rv(json, r.revision)), warnings));
  });
}

// A namespace is created or changed here by server-side apply only (GitOps
// tools apply their namespaces): its labels and annotations, owned as a
// pod's fields are (field_manager.h).
void PodRegistry::apply_namespace(RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  if (auto refused = refuse_dry_run(ctx.request)) return ctx.reply(std::move(*refused));
  auto type = patch_type(ctx.request.header("Content-Type"));
  if (!type || *type != PatchType::kApply) {
    return ctx.reply(k8s_error(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted media types include: "
                               "application/apply-patch+yaml (uvsched changes a namespace only by server-side apply)"));
  }
  std::string name = ctx.param("ns");
  auto read = read_apply_request(ctx.request, "io.k8s.api.core.v1.Namespace", "Namespace", name);
  if (auto* refused = std::get_if<HttpResponse>(&read)) return ctx.reply(std::move(*refused));
  ApplyRequest& apply = std::get<ApplyRequest>(read);
  // (Named, not bound: a lambda below captures them.)
  const std::string manager = apply.options.manager;
  const bool force = apply.options.force;
  std::vector<std::string> warnings = std::move(apply.warnings);
  if (!is_dns1123_label(name)) {
    return ctx.reply(
        k8s_object(422, invalid_status_json("Namespace", name,
                                            {{"metadata.name", "FieldValueInvalid",
                                              "Invalid value: \"" + name + "\": must be a DNS-1123 label"}})));
  }
  std::string key = std::string(kNamespacePrefix) + name, now = rfc3339(clock_.unix_ms()), uid = new_uid();
  Responder res = ctx.responder;
  store_.get(key, {},
             [this, res, key, name, now, uid, config = std::move(apply.config), manager, force,
              warnings = std::move(warnings)](RangeResult&& r) mutable {
               if (!r.status.ok()) return res.send(store_down(r.status));
               int64_t expect = r.kvs.empty() ? 0 : r.kvs[0].mod_revision;
               std::string why;
               std::optional<JsonValue> obj = r.kvs.empty() ? std::optional<JsonValue>(JsonValue::object())
                                                            : JsonValue::parse(r.kvs[0].value, &why);
               if (!obj) return res.send(k8s_error(500, "InternalError", "stored namespace is unreadable"));
               if (r.kvs.empty()) {
                 obj->set("kind", JsonValue::string("Namespace"));
                 obj->set("apiVersion", JsonValue::string("v1"));
                 JsonValue& meta = obj->ensure({"metadata"});
                 meta.set("name", JsonValue::string(name));
                 meta.set("uid", JsonValue::string(uid));
                 meta.set("creationTimestamp", JsonValue::string(now));
                 obj->ensure({"status"}).set("phase", JsonValue::string("Active"));
               }
               auto conflicts = apply_config(*obj, config, manager, force, now);
               if (!conflicts.empty()) return res.send(apply_conflicts(conflicts, name));
               if (auto issues = validate_object_meta(*obj); !issues.empty()) {
                 return res.send(k8s_object(422, invalid_status_json("Namespace", name, issues)));
               }
               std::string json = obj->dump();
               TxnRequest t;
               t.compares.push_back({key,
                                     expect == 0 ? Compare::Target::kCreateRevision : Compare::Target::kModRevision,
                                     Compare::Op::kEqual,
                                     expect,
                                     {}});
               t.success.push_back({TxnOp::Type::kPut, key, json, 0, false});
               store_.txn(std::move(t), [res, json, name, created = expect == 0,
                                         warnings = std::move(warnings)](TxnResult&& tr) mutable {
                 if (!tr.status.ok()) return res.send(store_down(tr.status));
                 if (!tr.succeeded) {
                   return res.send(k8s_error(409, "Conflict",
                                             "Operation cannot be fulfilled on namespaces \"" + name +
                                                 "\": the object has been modified; please apply your changes to the "
                                                 "latest version and try again",
                                             "namespaces", name));
                 }
                 res.send(with_warnings(k8s_object(created ? 201 : 200, with_rv(json, tr.revision)), warnings));
               });
             });
}

void PodRegistry::get_namespace(RequestContext& ctx) {
  std::string name = ctx.param("ns");
  Responder res = ctx.responder;
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  int64_t now = clock_.unix_ms();
  store_.get(kNamespacePrefix + name, {}, [res, name, table, now](RangeResult&& r) mutable {
    if (!r.status.ok()) return res.send(store_down(r.status));
    if (r.kvs.empty())
      return res.send(k8s_error(404, "NotFound", "namespaces \"" + name + "\" not found", "namespaces", name));
    auto ns = table.wanted ? parse_stored(r.kvs[0]) : std::nullopt;
    if (ns) {
      return res.send(k8s_object(200, namespace_table({*ns}, std::to_string(r.kvs[0].mod_revision), now, table.row)));
    }
    res.send(k8s_object(200, with_rv(r.kvs[0].value, r.kvs[0].mod_revision)));
  });
}

void PodRegistry::delete_namespace(RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  if (auto refused = refuse_dry_run(ctx.request)) return ctx.reply(std::move(*refused));
  std::string name = ctx.param("ns");
  Responder res = ctx.responder;
  // Its pods go first (one revision), then the namespace itself.
  store_.del(std::string(kPodPrefix) + name + "/", true,
             unwaited<WriteResult>("namespace_pods_delete", std::string(kPodPrefix) + name + "/"));
  store_.del(kNamespacePrefix + name, false, [res, name](WriteResult&& r) mutable {
    if (!r.status.ok()) return res.send(store_down(r.status));
    if (r.prev_kvs.empty())
      return res.send(k8s_error(404, "NotFound", "namespaces \"" + name + "\" not found", "namespaces", name));
    res.send(k8s_object(200, with_rv(r.prev_kvs[0].value, r.revision)));
  });
}

void PodRegistry::list_nodes(RequestContext& ctx) {
  if (auto refused = refuse_bad_list_options(ctx.request.query())) return ctx.reply(std::move(*refused));
  if (query_flag(ctx.request.query(), "watch")) return watch_nodes(ctx);
  std::vector<JsonValue> nodes = nodes_ ? nodes_() : std::vector<JsonValue>{};
  std::string rv = std::to_string(store_.revision());
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  if (table.wanted) return ctx.reply(k8s_object(200, node_table(nodes, rv, clock_.unix_ms(), table.row)));
  ListWriter items("NodeList");
  for (const auto& n : nodes) items.add(n.dump(), store_.revision());
  items.finish(store_.revision(), "");
  ctx.reply(k8s_object(200, items.take()));
}

std::optional<JsonValue> PodRegistry::node_named(const std::string& name) const {
  for (auto& n : nodes_ ? nodes_() : std::vector<JsonValue>{}) {
    if (const JsonValue* nn = n.find({"metadata", "name"}); nn && nn->text() == name) return std::move(n);
  }
  return std::nullopt;
}

HttpResponse PodRegistry::node_not_found(const std::string& name) {
  return k8s_error(404, "NotFound", "nodes \"" + name + "\" not found", "nodes", name);
}

void PodRegistry::get_node(RequestContext& ctx) {
  std::string name = ctx.param("name");
  auto node = node_named(name);
  if (!node) return ctx.reply(node_not_found(name));
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  if (table.wanted) {
    return ctx.reply(
        k8s_object(200, node_table({*node}, std::to_string(store_.revision()), clock_.unix_ms(), table.row)));
  }
  ctx.reply(k8s_object(200, with_rv(node->dump(), store_.revision())));  // as its list's items have it
}

}  // namespace uvsched
