#include "handlers/pods/pod_registry.h"

#include <algorithm>
#include <optional>
#include <random>
#include <variant>

#include "handlers/pods/active_deadlines.h"
#include "handlers/pods/field_manager.h"
#include "handlers/pods/json_patch.h"
#include "handlers/pods/k8s_request.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/node_label_edits.h"
#include "handlers/pods/node_taints.h"
#include "handlers/pods/pod_deletion.h"
#include "handlers/pods/pod_events.h"
#include "handlers/pods/pod_list.h"
#include "handlers/pods/pod_query.h"
#include "handlers/pods/pod_table.h"
#include "handlers/pods/inter_pod_validation.h"
#include "handlers/pods/pod_validation.h"
#include "handlers/pods/stored_object.h"
#include "handlers/pods/strategic_merge.h"
#include "handlers/pods/typed_decode.h"
#include "policy/placement.h"
#include "reactor/log.h"
#include "reactor/sliced_response.h"
#include "reactor/url.h"
#include "storage/base64.h"
#include "storage/unwaited.h"

namespace uvsched {

std::string pod_key(const std::string& ns, const std::string& name) {
  return std::string(PodRegistry::kPodPrefix) + ns + "/" + name;
}

HttpResponse pod_not_found(const std::string& name) {
  return k8s_error(404, "NotFound", "pods \"" + name + "\" not found", "pods", name);
}

std::string pod_conflict_message(const std::string& name) {
  return "Operation cannot be fulfilled on pods \"" + name +
         "\": the object has been modified; please apply your changes to the latest version and try again";
}

namespace {

std::string random_suffix() {
  static std::mt19937 rng{std::random_device{}()};
  static constexpr char kChars[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string s;
  for (int i = 0; i < 5; ++i) s += kChars[rng() % (sizeof kChars - 1)];
  return s;
}

// What the server owns in a pod's metadata stays as stored, whatever an
// update says (and a deletion is started by DELETE, never by an update).
void keep_server_fields(JsonValue& next, const JsonValue& old, const std::string& ns, const std::string& name) {
  JsonValue& meta = next.ensure({"metadata"});
  meta.set("name", JsonValue::string(name));
  meta.set("namespace", JsonValue::string(ns));
  for (const char* k : {"uid", "creationTimestamp", "deletionTimestamp", "managedFields"}) {
    if (const JsonValue* v = old.find({"metadata", k})) {
      meta.set(k, *v);
    } else {
      meta.erase(k);
    }
  }
  // What admission set at create (the PriorityClass's priority and policy)
  // stays when an update leaves it out, as defaults do; changed, it is 422.
  for (const char* k : {"priorityClassName", "priority", "preemptionPolicy"}) {
    const JsonValue* v = old.find({"spec", k});
    JsonValue* spec = next.get("spec");
    if (v && spec && spec->is_object() && !spec->get(k)) spec->set(k, *v);
  }
}

// Applies `patch` to `pod` (only to its status, for the status subresource).
// The refusal to send when it cannot apply; `pod` is then to be dropped.
std::optional<HttpResponse> apply_patch(JsonValue& pod, const JsonValue& patch, PatchType type, bool status_only) {
  std::string why;
  if (type == PatchType::kJson) {
    // Operations name paths in the whole pod; the status subresource keeps
    // only what they did to the status.
    JsonValue whole = status_only ? pod : JsonValue();
    JsonValue& doc = status_only ? whole : pod;
    if (!apply_json_patch(doc, patch, &why)) return k8s_request_invalid("the JSON patch cannot be applied: " + why);
    if (status_only) pod.set("status", whole.get("status") ? *whole.get("status") : JsonValue::object());
    return std::nullopt;
  }
  const JsonValue* change = status_only ? patch.get("status") : &patch;
  if (!change) return std::nullopt;
  JsonValue& target = status_only ? pod.ensure({"status"}) : pod;
  if (type == PatchType::kMerge) {
    target.merge_patch(*change);
  } else if (!strategic_merge(target, *change, status_only ? "status" : "", &why)) {
    return k8s_error(400, "BadRequest", "invalid strategic merge patch: " + why);
  }
  return std::nullopt;
}

}  // namespace

PodRegistry::PodRegistry(Store& store, Clock& clock, PodWriter& writer, std::function<bool()> is_leader)
    : store_(store), clock_(clock), writer_(writer), is_leader_(std::move(is_leader)) {}

void PodRegistry::start() {
  for (const char* ns : {"default", "kube-system"}) {
    JsonValue obj = JsonValue::object();
    obj.set("kind", JsonValue::string("Namespace"));
    obj.set("apiVersion", JsonValue::string("v1"));
    JsonValue& meta = obj.ensure({"metadata"});
    meta.set("name", JsonValue::string(ns));
    meta.set("uid", JsonValue::string(new_uid()));
    meta.set("creationTimestamp", JsonValue::string(rfc3339(clock_.unix_ms())));
    obj.ensure({"status"}).set("phase", JsonValue::string("Active"));
    TxnRequest t;
    std::string key = std::string(kNamespacePrefix) + ns;
    t.compares.push_back({key, Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});
    t.success.push_back({TxnOp::Type::kPut, key, obj.dump(), 0, false});
    store_.txn(std::move(t), unwaited<TxnResult>("namespace_create", key));
  }
}

void PodRegistry::add_routes(Router& router) {
  router.add("GET", "/api/v1/pods", [this](RequestContext& ctx) { list_pods(ctx, ""); });
  router.add("GET", "/api/v1/namespaces/{ns}/pods", [this](RequestContext& ctx) { list_pods(ctx, ctx.param("ns")); });
  router.add("POST", "/api/v1/namespaces/{ns}/pods", [this](RequestContext& ctx) { create_pod(ctx); });
  router.add("GET", "/api/v1/namespaces/{ns}/pods/{name}", [this](RequestContext& ctx) { get_pod(ctx); });
  router.add("PUT", "/api/v1/namespaces/{ns}/pods/{name}", [this](RequestContext& ctx) { replace_pod(ctx, false); });
  router.add("PATCH", "/api/v1/namespaces/{ns}/pods/{name}", [this](RequestContext& ctx) { patch_pod(ctx, false); });
  router.add("DELETE", "/api/v1/namespaces/{ns}/pods/{name}", [this](RequestContext& ctx) { delete_pod(ctx); });
  router.add("DELETE", "/api/v1/namespaces/{ns}/pods", [this](RequestContext& ctx) { delete_pods(ctx); });
  router.add("GET", "/api/v1/namespaces/{ns}/pods/{name}/status", [this](RequestContext& ctx) { get_pod(ctx); });
  router.add("PUT", "/api/v1/namespaces/{ns}/pods/{name}/status",
             [this](RequestContext& ctx) { replace_pod(ctx, true); });
  router.add("PATCH", "/api/v1/namespaces/{ns}/pods/{name}/status",
             [this](RequestContext& ctx) { patch_pod(ctx, true); });
  router.add("POST", "/api/v1/namespaces/{ns}/pods/{name}/binding", [this](RequestContext& ctx) { bind_pod(ctx); });
  router.add("POST", "/api/v1/namespaces/{ns}/bindings", [this](RequestContext& ctx) { bind_pod(ctx); });
  // What a kubelet would serve: said plainly rather than a bare 404, so
  // `kubectl logs` or `exec` tells its user why.
  auto unserved = [](std::string what) {
    return [what = std::move(what)](RequestContext& ctx) {
      ctx.reply(k8s_error(404, "NotFound", what, "pods", ctx.param("name")));
    };
  };
  const std::string no_kubelet = " is not served: uvsched runs no kubelet; the task's ";
  router.add(
      "GET", "/api/v1/namespaces/{ns}/pods/{name}/log",
      unserved("pods/log" + no_kubelet + "output stays on the agent that runs it (kubectl get pod -o wide names it)"));
  for (const char* sub : {"exec", "attach", "portforward", "proxy"}) {
    for (const char* method : {"GET", "POST"}) {
      router.add(method, std::string("/api/v1/namespaces/{ns}/pods/{name}/") + sub,
                 unserved(std::string("pods/") + sub + no_kubelet +
                          "processes are reached on the agent that runs it (kubectl get pod -o wide names it)"));
    }
  }
  // `kubectl debug` adds an ephemeral container, which only a kubelet could start.
  for (const char* method : {"GET", "PUT", "PATCH"}) {
    router.add(method, "/api/v1/namespaces/{ns}/pods/{name}/ephemeralcontainers",
               unserved("pods/ephemeralcontainers" + no_kubelet +
                        "containers are started by the agent that runs it; a debugging container cannot be added"));
  }
  router.add("POST", "/api/v1/namespaces/{ns}/pods/{name}/eviction", [this](RequestContext& ctx) { evict_pod(ctx); });
  router.add("GET", "/api/v1/namespaces", [this](RequestContext& ctx) { list_namespaces(ctx); });
  router.add("POST", "/api/v1/namespaces", [this](RequestContext& ctx) { create_namespace(ctx); });
  router.add("GET", "/api/v1/namespaces/{ns}", [this](RequestContext& ctx) { get_namespace(ctx); });
  router.add("DELETE", "/api/v1/namespaces/{ns}", [this](RequestContext& ctx) { delete_namespace(ctx); });
  router.add("PATCH", "/api/v1/namespaces/{ns}", [this](RequestContext& ctx) { apply_namespace(ctx); });
  router.add("GET", "/api/v1/nodes", [this](RequestContext& ctx) { list_nodes(ctx); });
  router.add("GET", "/api/v1/nodes/{name}", [this](RequestContext& ctx) { get_node(ctx); });
  router.add("PATCH", "/api/v1/nodes/{name}", [this](RequestContext& ctx) { patch_node(ctx); });
  router.add("GET", "/api/v1/events", [this](RequestContext& ctx) { list_events(ctx, ""); });
  router.add("GET", "/api/v1/namespaces/{ns}/events",
             [this](RequestContext& ctx) { list_events(ctx, ctx.param("ns")); });
}

bool PodRegistry::refuse_unless_leader(RequestContext& ctx) {
  if (is_leader_()) return false;
  ctx.reply(k8s_error(503, "ServiceUnavailable", "this uvsched is a standby; ask the leader"));
  return true;
}

// ---- pods: write paths ------------------------------------------------------------

void PodRegistry::create_pod(RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  std::string ns = ctx.param("ns"), error;
  if (auto refused = refuse_media_type(ctx.request)) return ctx.reply(std::move(*refused));
  auto options = write_options(ctx.request.query(), /*apply=*/false);
  if (auto* refused = std::get_if<HttpResponse>(&options)) return ctx.reply(std::move(*refused));
  auto pod = JsonValue::parse(ctx.request.body, &error);
  if (!pod || !pod->is_object()) {
    return ctx.reply(k8s_error(400, "BadRequest", pod ? "the body must be a Pod object" : error));
  }
  std::vector<std::string> warnings;
  if (auto refused = decode_body(ctx.request, *pod, "io.k8s.api.core.v1.Pod", "Pod", &warnings)) {
    return ctx.reply(std::move(*refused));
  }
  if (std::string kind = pod->str("kind"); !kind.empty() && kind != "Pod") {
    return ctx.reply(k8s_error(400, "BadRequest", "kind " + kind + " cannot be created at the pods endpoint"));
  }
  JsonValue& meta = pod->ensure({"metadata"});
  if (std::string given = meta.str("namespace"); !given.empty() && given != ns) {
    return ctx.reply(k8s_error(
        400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request"));
  }
  if (meta.str("name").empty() && !meta.str("generateName").empty()) {
    meta.set("name", JsonValue::string(meta.str("generateName") + random_suffix()));
  }
  meta.erase("deletionTimestamp");  // a deletion is started by DELETE
  meta.erase("managedFields");      // the server's to keep
  record_update(nullptr, *pod, std::get<WriteOptions>(options).manager, rfc3339(clock_.unix_ms()));
  create_checked(ctx.responder, ns, std::move(*pod), std::move(warnings), std::get<WriteOptions>(options).dry_run);
}

void PodRegistry::create_checked(Responder res, const std::string& ns, JsonValue pod, std::vector<std::string> warnings,
                                 bool dry_run) {
  std::string name = pod.find({"metadata", "name"}) ? pod.find({"metadata", "name"})->text() : "";
  if (auto issues = validate_pod(pod); !issues.empty()) {
    return res.send(k8s_object(422, invalid_status_json("Pod", name, issues)));
  }
  for (const std::string& text : unweighed_constraints(pod)) {
    std::string w = k8s_warning(text);
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(std::move(w));
  }
  if (admission_.admit) {
    if (!admission_.ready()) {
      admission_.when_ready([this, res, ns, pod = std::move(pod), warnings = std::move(warnings), dry_run]() mutable {
        if (res.connected()) create_checked(std::move(res), ns, std::move(pod), std::move(warnings), dry_run);
      });
      return;
    }
    if (auto refused = admission_.admit(pod)) return res.send(std::move(*refused));
  }
  default_pod(pod, ns, new_uid(), rfc3339(clock_.unix_ms()));
  if (dry_run) return dry_run_create(std::move(res), ns, name, std::move(pod), std::move(warnings));
  // The namespace is checked by the create's own txn (no read before it).
  CreateOutcome created = create_hook_ ? create_hook_(ns, name, pod) : nullptr;
  PodWrite how{.ok_status = 201, .created = std::move(created), .warnings = std::move(warnings)};
  store_new_pod(std::move(res), ns, name, std::move(pod), std::move(how));
}

// A create with dryRun=All: validated and defaulted as it would be stored,
// its namespace and name checked as the store would check them, and nothing
// written. uvsched adds where it would be placed now (the
// uvsched.io/dry-run-placement annotation): an agent, or why it would wait.
void PodRegistry::dry_run_create(Responder res, const std::string& ns, const std::string& name, JsonValue pod,
                                 std::vector<std::string> warnings) {
  if (preview_hook_) {
    pod.ensure({"metadata", "annotations"}).set(kDryRunPlacementAnnotation, JsonValue::string(preview_hook_(pod)));
  }
  store_.get(kNamespacePrefix + ns, {},
             [this, res, ns, name, pod = std::move(pod), warnings = std::move(warnings)](RangeResult&& n) mutable {
               if (!n.status.ok()) return res.send(store_down(n.status));
               if (n.kvs.empty()) {
                 return res.send(k8s_error(404, "NotFound", "namespaces \"" + ns + "\" not found", "namespaces", ns));
               }
               store_.get(pod_key(ns, name), {},
                          [res, name, pod = std::move(pod), warnings = std::move(warnings)](RangeResult&& p) mutable {
                            if (!p.status.ok()) return res.send(store_down(p.status));
                            if (!p.kvs.empty()) {
                              return res.send(k8s_error(409, "AlreadyExists", "pods \"" + name + "\" already exists",
                                                        "pods", name));
                            }
                            res.send(with_warnings(k8s_object(201, pod.dump()), warnings));
                          });
             });
}

void PodRegistry::store_new_pod(Responder res, const std::string& ns, const std::string& name, JsonValue pod,
                                PodWrite how) {
  pod.ensure({"metadata"}).erase("resourceVersion");
  std::string json = pod.dump();
  TxnRequest t;
  std::string key = pod_key(ns, name);
  t.compares.push_back({key, Compare::Target::kCreateRevision, Compare::Op::kEqual, 0, {}});
  t.success.push_back({TxnOp::Type::kPut, key, json, 0, false});
  snapshot_bytes_ += json.size();  // (an estimate: a failed create is counted too, until the next read)
  // A create needs its namespace: one txn checks both, and on failure
  // reads the namespace to tell "no such namespace" from "name taken".
  std::string ns_key = kNamespacePrefix + ns;
  t.compares.push_back({ns_key, Compare::Target::kCreateRevision, Compare::Op::kGreater, 0, {}});
  t.failure.push_back({TxnOp::Type::kRange, ns_key, {}, 0, false});
  // And reads the name: a create sent again after an etcd member failed
  // mid-call may find its own first attempt there (same uid, same bytes).
  t.failure.push_back({TxnOp::Type::kRange, key, {}, 0, false});
  store_.txn(std::move(t), [res, json, ns, name, how = std::move(how)](TxnResult&& r) mutable {
    int64_t revision = r.revision;
    bool landed_before = r.status.ok() && !r.succeeded && r.ranges.size() > 1 && r.ranges[1].kvs.size() == 1 &&
                         r.ranges[1].kvs[0].value == json;
    if (landed_before) revision = r.ranges[1].kvs[0].mod_revision;
    if (how.created) how.created(r.status.ok() && (r.succeeded || landed_before), revision, json);
    if (!r.status.ok()) return res.send(store_down(r.status));
    if (!r.succeeded && !landed_before) {
      if (r.ranges.empty() || r.ranges[0].kvs.empty()) {
        return res.send(k8s_error(404, "NotFound", "namespaces \"" + ns + "\" not found", "namespaces", ns));
      }
      return res.send(k8s_error(409, "AlreadyExists", "pods \"" + name + "\" already exists", "pods", name));
    }
    answer_written(res, how, json, revision);
  });
}

void PodRegistry::answer_written(Responder& res, const PodWrite& how, const std::string& json, int64_t revision) {
  if (how.answer_status) return res.send(k8s_object(how.ok_status, k8s_status_json(how.ok_status, "", "")));
  HttpResponse ok = with_warnings(k8s_object(how.ok_status, with_rv(json, revision)), how.warnings);
  if (how.change_warnings) ok = with_warnings(std::move(ok), *how.change_warnings);
  res.send(std::move(ok));
}

void PodRegistry::update_pod(Responder res, const std::string& ns, const std::string& name, PodChange change,
                             PodWrite how) {
  // The change's refusal, kept for the answer (a retry's replaces it).
  auto refusal = std::make_shared<std::optional<HttpResponse>>();
  auto new_images = std::make_shared<bool>(false);  // of the try that was written
  // The pod's deadline after the change, when the change moved it.
  auto new_deadline = std::make_shared<std::optional<std::optional<int64_t>>>();
  PodWriter::Update u;
  u.key = pod_key(ns, name);
  u.dry_run = how.dry_run;
  u.change = [change = std::move(change), refusal, new_images, new_deadline](JsonValue& pod, int64_t revision) {
    if (!pod.is_object()) {
      *refusal = k8s_error(500, "InternalError", "stored pod is unreadable");
      return PodWriter::Verdict::kDecline;
    }
    std::vector<std::string> images = container_images(pod);
    std::optional<int64_t> deadline = active_deadline_unix_ms(pod);
    // The change sees the pod as a client would (a JSON patch may test it).
    pod.ensure({"metadata"}).set("resourceVersion", JsonValue::string(std::to_string(revision)));
    *refusal = change(pod, revision);
    if (*refusal) return PodWriter::Verdict::kDecline;
    *new_images = container_images(pod) != images;
    new_deadline->reset();
    if (std::optional<int64_t> now = active_deadline_unix_ms(pod); now != deadline) *new_deadline = now;
    pod.ensure({"metadata"}).erase("resourceVersion");
    // The update that takes the last finalizer from a pod being deleted ends it.
    return ready_to_go(pod) ? PodWriter::Verdict::kDelete : PodWriter::Verdict::kPut;
  };
  u.done = [this, res, ns, name, refusal, new_images, new_deadline,
            how = std::move(how)](PodWriter::Result&& r) mutable {
    using Outcome = PodWriter::Outcome;
    switch (r.outcome) {
      case Outcome::kWritten:
        if (*new_images && !how.dry_run && images_hook_) images_hook_(ns, name);
        if (*new_deadline && !how.dry_run && deadline_hook_) deadline_hook_(ns, name, **new_deadline);
        return answer_written(res, how, r.stored, r.revision);
      case Outcome::kDeleted:
        return answer_written(res, how, r.stored, r.revision);
      case Outcome::kDeclined:
        return res.send(std::move(**refusal));
      case Outcome::kMissing:
        if (how.on_missing) return how.on_missing();
        return res.send(pod_not_found(name));
      case Outcome::kUnreadable:
        return res.send(k8s_error(500, "InternalError", "stored pod is unreadable"));
      case Outcome::kConflict:
        return res.send(k8s_error(409, "Conflict", pod_conflict_message(name), "pods", name));
      case Outcome::kStoreDown:
        return res.send(store_down(r.status));
    }
  };
  writer_.update(std::move(u));
}

void PodRegistry::replace_pod(RequestContext& ctx, bool status_only) {
  if (refuse_unless_leader(ctx)) return;
  std::string ns = ctx.param("ns"), name = ctx.param("name"), error;
  if (auto refused = refuse_media_type(ctx.request)) return ctx.reply(std::move(*refused));
  auto options = write_options(ctx.request.query(), /*apply=*/false);
  if (auto* refused = std::get_if<HttpResponse>(&options)) return ctx.reply(std::move(*refused));
  auto body = JsonValue::parse(ctx.request.body, &error);
  if (!body || !body->is_object())
    return ctx.reply(k8s_error(400, "BadRequest", body ? "the body must be a Pod" : error));
  std::vector<std::string> warnings;
  if (auto refused = decode_body(ctx.request, *body, "io.k8s.api.core.v1.Pod", "Pod", &warnings)) {
    return ctx.reply(std::move(*refused));
  }
  if (std::string given = body->find({"metadata", "name"}) ? body->find({"metadata", "name"})->text() : "";
      !given.empty() && given != name) {
    return ctx.reply(k8s_error(
        400, "BadRequest", "the name of the object (" + given + ") does not match the name on the URL (" + name + ")"));
  }
  int64_t want_rv = 0;
  if (const JsonValue* rv = body->find({"metadata", "resourceVersion"}); rv && rv->is_string() && !rv->text().empty()) {
    want_rv = std::strtoll(rv->text().c_str(), nullptr, 10);
  }
  PodChange change = [ns, name, want_rv, status_only, body = std::move(*body),
                      manager = std::get<WriteOptions>(options).manager,
                      now = rfc3339(clock_.unix_ms())](JsonValue& old, int64_t current) -> std::optional<HttpResponse> {
    if (want_rv != 0 && want_rv != current) return k8s_error(409, "Conflict", pod_conflict_message(name), "pods", name);
    JsonValue next;
    if (status_only) {
      next = std::move(old);
      next.set("status", body.get("status") ? *body.get("status") : JsonValue::object());
    } else {
      next = body;
      keep_server_fields(next, old, ns, name);
      if (!next.get("status") && old.get("status")) next.set("status", *old.get("status"));
      if (auto issues = validate_pod(next); !issues.empty())
        return k8s_object(422, invalid_status_json("Pod", name, issues));
      const JsonValue* meta = next.get("metadata");
      default_pod(next, ns, meta->str("uid"), meta->str("creationTimestamp"));
      if (auto issues = validate_pod_update(old, next); !issues.empty()) {
        return k8s_object(422, invalid_status_json("Pod", name, issues));
      }
    }
    record_update(&old, next, manager, now);
    old = std::move(next);
    return std::nullopt;
  };
  PodWrite how;
  how.warnings = std::move(warnings);
  how.dry_run = std::get<WriteOptions>(options).dry_run;
  update_pod(ctx.responder, ns, name, std::move(change), std::move(how));
}

void PodRegistry::patch_pod(RequestContext& ctx, bool status_only) {
  if (refuse_unless_leader(ctx)) return;
  // A JSON merge patch replaces lists; a strategic one (kubectl's default)
  // merges the pod's keyed lists (containers by name, ...) element by element;
  // a JSON patch is a list of operations.
  auto type = patch_type(ctx.request.header("Content-Type"));
  if (!type || (*type == PatchType::kApply && status_only)) {
    return ctx.reply(k8s_error(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted media types include: "
                               "application/json-patch+json, application/merge-patch+json, "
                               "application/strategic-merge-patch+json" +
                                   std::string(status_only ? "" : ", application/apply-patch+yaml")));
  }
  if (*type == PatchType::kApply) return apply_pod(ctx);
  auto options = write_options(ctx.request.query(), /*apply=*/false);
  if (auto* refused = std::get_if<HttpResponse>(&options)) return ctx.reply(std::move(*refused));
  std::string ns = ctx.param("ns"), name = ctx.param("name"), error;
  auto patch = JsonValue::parse(ctx.request.body, &error);
  if (!patch) return ctx.reply(k8s_error(400, "BadRequest", error));
  if (*type == PatchType::kJson && !patch->is_array()) {
    return ctx.reply(k8s_error(400, "BadRequest", "a JSON patch must be a list of operations"));
  }
  if (*type != PatchType::kJson && !patch->is_object())
    return ctx.reply(k8s_error(400, "BadRequest", "a patch must be an object"));
  auto validation = field_validation_of(ctx.request);
  if (auto* refused = std::get_if<HttpResponse>(&validation)) return ctx.reply(std::move(*refused));
  auto warnings = std::make_shared<std::vector<std::string>>();
  PodChange change = [ns, name, status_only, type = *type, patch = std::move(*patch),
                      mode = std::get<FieldValidation>(validation), manager = std::get<WriteOptions>(options).manager,
                      now = rfc3339(clock_.unix_ms()),
                      warnings](JsonValue& pod, int64_t current) -> std::optional<HttpResponse> {
    const JsonValue stored = pod;
    if (const JsonValue* rv = patch.find({"metadata", "resourceVersion"});
        rv && rv->is_string() && rv->text() != std::to_string(current)) {
      return k8s_error(409, "Conflict", pod_conflict_message(name), "pods", name);
    }
    if (auto refused = apply_patch(pod, patch, type, status_only)) return refused;
    // The patched pod is decoded as a body would be: a patch cannot give a
    // field a wrong type, nor (Strict) add one the type does not have.
    TypedDecode decoded = decode_typed(pod, *schema_type("io.k8s.api.core.v1.Pod"));
    if (decoded.refused(mode)) return typed_refusal(decoded, mode, "Pod", name);
    if (mode == FieldValidation::kWarn) *warnings = decoded.warnings();  // (a retry's decoding replaces them)
    keep_server_fields(pod, stored, ns, name);
    auto issues = validate_pod(pod);
    if (issues.empty() && !status_only) issues = validate_pod_update(stored, pod);
    if (!issues.empty()) return k8s_object(422, invalid_status_json("Pod", name, issues));
    record_update(&stored, pod, manager, now);
    return std::nullopt;
  };
  PodWrite how;
  how.change_warnings = warnings;  // known only once the patch is applied to the pod read
  how.dry_run = std::get<WriteOptions>(options).dry_run;
  update_pod(ctx.responder, ns, name, std::move(change), std::move(how));
}

void PodRegistry::apply_pod(RequestContext& ctx) {
  std::string ns = ctx.param("ns"), name = ctx.param("name");
  auto read = read_apply_request(ctx.request, "io.k8s.api.core.v1.Pod", "Pod", name);
  if (auto* refused = std::get_if<HttpResponse>(&read)) return ctx.reply(std::move(*refused));
  ApplyRequest& apply = std::get<ApplyRequest>(read);
  // (Named, not bound: the lambdas below capture them.)
  const std::string manager = apply.options.manager;
  const bool force = apply.options.force;
  const std::vector<std::string> warnings = apply.warnings;
  if (std::string given = apply.config.ensure({"metadata"}).str("namespace"); !given.empty() && given != ns) {
    return ctx.reply(k8s_error(
        400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request"));
  }
  std::string now = rfc3339(clock_.unix_ms());
  PodWrite how;
  how.warnings = warnings;
  how.dry_run = apply.options.dry_run;
  // Not there yet: the apply creates it, owning all it set.
  Responder res = ctx.responder;
  how.on_missing = [this, res, ns, name, config = apply.config, manager, now, warnings,
                    dry = apply.options.dry_run]() mutable {
    JsonValue pod = JsonValue::object();
    pod.ensure({"metadata"}).set("name", JsonValue::string(name));
    apply_config(pod, config, manager, /*force=*/false, now);  // nobody else's fields: no conflict
    create_checked(res, ns, std::move(pod), std::move(warnings), dry);
  };
  PodChange change = [ns, name, config = std::move(apply.config), manager, force, now](
                         JsonValue& pod, int64_t) -> std::optional<HttpResponse> {
    const JsonValue stored = pod;
    auto conflicts = apply_config(pod, config, manager, force, now);
    if (!conflicts.empty()) return apply_conflicts(conflicts, name);
    auto issues = validate_pod(pod);
    if (issues.empty()) issues = validate_pod_update(stored, pod);
    if (!issues.empty()) return k8s_object(422, invalid_status_json("Pod", name, issues));
    return std::nullopt;
  };
  update_pod(ctx.responder, ns, name, std::move(change), std::move(how));
}

void PodRegistry::delete_pod(RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  auto asked = delete_options_of(ctx.request);
  if (auto* refused = std::get_if<HttpResponse>(&asked)) return ctx.reply(std::move(*refused));
  const DeleteOptions& options = std::get<DeleteOptions>(asked);
  std::string ns = ctx.param("ns"), name = ctx.param("name");
  if (options.dry_run) {
    // A dry-run delete: the pod as it is, and nothing deleted or killed.
    Responder res = ctx.responder;
    store_.get(pod_key(ns, name), {}, [res, name](RangeResult&& r) mutable {
      if (!r.status.ok()) return res.send(store_down(r.status));
      if (r.kvs.empty()) return res.send(pod_not_found(name));
      res.send(k8s_object(200, with_rv(r.kvs[0].value, r.kvs[0].mod_revision)));
    });
    return;
  }
  Responder res = ctx.responder;
  delete_one(ns, name, options.grace_seconds, [res](HttpResponse&& r) mutable { res.send(std::move(r)); });
}

void PodRegistry::delete_one(const std::string& ns, const std::string& name, std::optional<int64_t> grace,
                             DeleteDone done) {
  if (delete_hook_ && delete_hook_(ns, name, grace, done)) return;
  delete_pod_object(store_, pod_key(ns, name), clock_.unix_ms(), std::nullopt,
                    [done = std::move(done), name](PodDeletion&& d) {
                      if (!d.status.ok()) return done(store_down(d.status));
                      if (!d.found) return done(pod_not_found(name));
                      done(k8s_object(200, with_rv(d.object, d.revision)));
                    });
}

namespace {

// A deletecollection's answers, gathered: once every one is in, the PodList
// of the pods deleted (as the API server answers), or the first failure other
// than a pod already gone.
struct DeletedPods {
  Responder res;
  std::string items;  // the pods deleted, comma-separated
  std::optional<HttpResponse> failure;
  size_t left = 0;  // answers still to come
  void add(const std::string& pod) { items += (items.empty() ? "" : ",") + pod; }
  void finish(int64_t revision) {
    if (failure) return res.send(std::move(*failure));
    res.send(k8s_object(200, R"({"kind":"PodList","apiVersion":"v1","items":[)" + items +
                                 R"(],"metadata":{"resourceVersion":")" + std::to_string(revision) + R"("}})"));
  }
};

}  // namespace

void PodRegistry::delete_pods(RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  std::string_view query = ctx.request.query();
  if (auto refused = refuse_bad_list_options(query)) return ctx.reply(std::move(*refused));
  auto asked = delete_options_of(ctx.request);
  if (auto* refused = std::get_if<HttpResponse>(&asked)) return ctx.reply(std::move(*refused));
  std::string error;
  auto selected = PodQuery::parse(query, &error);
  if (!selected) return ctx.reply(k8s_error(400, "BadRequest", error));
  RangeOptions all;
  all.prefix = true;
  std::string ns = ctx.param("ns");
  store_.get(pod_key(ns, ""), all,
             [this, res = ctx.responder, ns, q = std::move(*selected),
              options = std::get<DeleteOptions>(asked)](RangeResult&& r) mutable {
               if (!r.status.ok()) return res.send(store_down(r.status));
               auto c = std::make_shared<DeletedPods>(DeletedPods{res, {}, std::nullopt, 0});
               std::vector<std::string> names;
               for (const auto& kv : r.kvs) {
                 auto pod = parse_stored(kv);
                 if (!pod || !q.selects(*pod)) continue;
                 if (options.dry_run) {
                   c->add(with_rv(kv.value, kv.mod_revision));
                 } else {
                   names.push_back(kv.key.substr(kv.key.rfind('/') + 1));
                 }
               }
               c->left = names.size();
               if (names.empty()) return c->finish(store_.revision());
               for (const auto& name : names) {
                 delete_one(ns, name, options.grace_seconds, [this, c](HttpResponse&& out) {
                   if (out.status == 200) {
                     c->add(out.body);
                   } else if (out.status != 404 && !c->failure) {
                     c->failure = std::move(out);
                   }
                   if (--c->left == 0) c->finish(store_.revision());
                 });
               }
             });
}

void PodRegistry::bind_pod(RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  if (auto refused = refuse_dry_run(ctx.request)) return ctx.reply(std::move(*refused));
  std::string ns = ctx.param("ns"), error;
  auto binding = JsonValue::parse(ctx.request.body, &error);
  if (!binding || !binding->is_object())
    return ctx.reply(k8s_error(400, "BadRequest", binding ? "the body must be a Binding" : error));
  std::string name = ctx.param("name").empty()
                         ? (binding->find({"metadata", "name"}) ? binding->find({"metadata", "name"})->text() : "")
                         : ctx.param("name");
  std::string node = binding->find({"target", "name"}) ? binding->find({"target", "name"})->text() : "";
  if (node.empty()) {
    return ctx.reply(k8s_object(
        422, invalid_status_json("Binding", name, {{"target.name", "FieldValueRequired", "Required value"}})));
  }
  PodChange change = [name, node](JsonValue& pod, int64_t) -> std::optional<HttpResponse> {
    std::string bound = pod.find({"spec", "nodeName"}) ? pod.find({"spec", "nodeName"})->text() : "";
    if (!bound.empty()) {
      return k8s_error(409, "Conflict", "pod " + name + " is already assigned to node \"" + bound + "\"", "pods", name);
    }
    pod.ensure({"spec"}).set("nodeName", JsonValue::string(node));
    return std::nullopt;
  };
  update_pod(ctx.responder, ns, name, std::move(change), PodWrite{.ok_status = 201, .answer_status = true});
}

// ---- pods: read paths -------------------------------------------------------------

void PodRegistry::get_pod(RequestContext& ctx) {
  std::string name = ctx.param("name");
  Responder res = ctx.responder;
  // `kubectl get pod NAME` asks for a Table too: one row.
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  int64_t now = clock_.unix_ms();
  store_.get(pod_key(ctx.param("ns"), name), {}, [res, name, table, now](RangeResult&& r) mutable {
    if (!r.status.ok()) return res.send(store_down(r.status));
    if (r.kvs.empty()) return res.send(pod_not_found(name));
    auto pod = table.wanted ? parse_stored(r.kvs[0]) : std::nullopt;
    if (pod) {
      return res.send(k8s_object(200, pod_table({*pod}, std::to_string(r.kvs[0].mod_revision), now, table.row)));
    }
    res.send(k8s_object(200, with_rv(r.kvs[0].value, r.kvs[0].mod_revision)));
  });
}

void PodRegistry::list_pods(RequestContext& ctx, const std::string& ns) {
  std::string_view query = ctx.request.query();
  if (auto refused = refuse_bad_list_options(query)) return ctx.reply(std::move(*refused));
  std::string error;
  auto parsed = PodQuery::parse(query, &error);
  if (!parsed) return ctx.reply(k8s_error(400, "BadRequest", error));
  auto q = std::make_shared<Query>(std::move(*parsed));
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  q->table = table.wanted;
  q->row = table.row;
  std::string prefix = std::string(kPodPrefix) + (ns.empty() ? "" : ns + "/");
  if (query_flag(query, "watch")) return watch_pods(ctx, prefix, q);

  // A list can be megabytes: pipelined ones are answered one at a time, each
  // made only as fast as it is read, and its snapshot counts with the output
  // waiting for readers from before it is read (so many at once cannot take
  // the memory before the cap sees them).
  ctx.responder.answer_alone();
  ctx.responder.hold(snapshot_bytes_);
  if (!ctx.responder.connected()) return;  // the cap cut this reader: nothing to read the snapshot for
  Responder res = ctx.responder;
  int64_t now = clock_.unix_ms();
  bool all_namespaces = ns.empty();
  read_snapshot(
      prefix, [res] { return res.connected(); },
      [this, res, q, now, all_namespaces](RangeResult&& r) mutable {
        if (!r.status.ok()) return res.send(store_down(r.status));
        // The range read is the list's snapshot: its items are written from it
        // a slice at a time (PodListBody).
        auto body = std::make_shared<PodListBody>(std::move(r), q, now);
        size_t stored_bytes = body->stored_bytes();
        snapshot_bytes_ = all_namespaces ? stored_bytes : std::max(snapshot_bytes_, stored_bytes);
        auto slice = [body](std::string& out, size_t budget) { return body->slice(out, budget); };
        constexpr size_t kSlicedFrom = 256 * 1024;
        if (stored_bytes <= kSlicedFrom) {
          std::string out;
          slice(out, SIZE_MAX);
          return res.send(k8s_object(200, std::move(out)));
        }
        send_sliced(res, 200, "application/json", slice, [body] { return body->unread_bytes(); });
      });
}

// Whole-range reads copy every pod out of the store at once (the embedded
// store copies as it is asked, etcd's answer arrives whole): a few at a time,
// the rest waiting here with nothing copied yet, so that a burst of lists or
// watches cannot hold copies the output cap has not seen. A read whose reader
// left meanwhile is skipped.
void PodRegistry::read_snapshot(const std::string& prefix, std::function<bool()> wanted,
                                std::function<void(RangeResult&&)> done) {
  snapshot_queue_.push_back({prefix, std::move(wanted), std::move(done)});
  start_snapshot_reads();
}

void PodRegistry::start_snapshot_reads() {
  constexpr size_t kSnapshotsInFlight = 4;
  while (snapshots_in_flight_ < kSnapshotsInFlight && !snapshot_queue_.empty()) {
    SnapshotRead next = std::move(snapshot_queue_.front());
    snapshot_queue_.pop_front();
    if (!next.wanted()) continue;
    ++snapshots_in_flight_;
    RangeOptions all;
    all.prefix = true;
    store_.get(next.prefix, all, [this, done = std::move(next.done)](RangeResult&& r) {
      --snapshots_in_flight_;
      done(std::move(r));
      start_snapshot_reads();
    });
  }
}

// ---- events: made from the pods (see pod_events.h) --------------------------------------

void PodRegistry::list_events(RequestContext& ctx, const std::string& ns) {
  std::string_view query = ctx.request.query();
  if (auto refused = refuse_bad_list_options(query)) return ctx.reply(std::move(*refused));
  std::string error;
  std::vector<FieldRequirement> fields;
  if (auto fs = query_param(query, "fieldSelector")) {
    auto f = parse_field_selector(*fs, event_selectable_fields(), &error);
    if (!f) return ctx.reply(k8s_error(400, "BadRequest", error));
    fields = std::move(*f);
  }
  if (query_flag(query, "watch")) return watch_events(ctx, ns, std::move(fields));
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  int64_t now = clock_.unix_ms();
  RangeOptions all;
  all.prefix = true;
  Responder res = ctx.responder;
  store_.get(std::string(kPodPrefix) + (ns.empty() ? "" : ns + "/"), all,
             [res, fields = std::move(fields), table, now](RangeResult&& r) mutable {
               if (!r.status.ok()) return res.send(store_down(r.status));
               std::vector<JsonValue> events;
               for (const auto& kv : r.kvs) {
                 auto pod = parse_stored(kv);
                 if (!pod) continue;
                 for (auto& e : pod_events(*pod)) {
                   bool selected = std::all_of(fields.begin(), fields.end(), [&](const FieldRequirement& f) {
                     return (event_field(e, f.key) == f.value) != f.negate;
                   });
                   if (selected) events.push_back(std::move(e));
                 }
               }
               if (table.wanted) {
                 return res.send(k8s_object(200, event_table(events, std::to_string(r.revision), now, table.row)));
               }
               ListWriter items("EventList");
               for (const auto& e : events) items.add(e.dump(), r.revision);
               items.finish(r.revision, "");
               res.send(k8s_object(200, items.take()));
             });
}

// kubectl cordon and uncordon (and drain's cordon), kubectl taint and kubectl
// label node: a node is an agent, so its spec.unschedulable, spec.taints and
// labels are all a patch may change. They are stored, so a leader that takes
// over keeps them, and placement then passes the agent by.
void PodRegistry::patch_node(RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  if (auto refused = refuse_dry_run(ctx.request)) return ctx.reply(std::move(*refused));
  std::string name = ctx.param("name");
  auto type = patch_type(ctx.request.header("Content-Type"));
  if (!type || *type == PatchType::kApply) {
    return ctx.reply(k8s_error(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted media types include: "
                               "application/json-patch+json, application/merge-patch+json, "
                               "application/strategic-merge-patch+json"));
  }
  std::string error;
  auto patch = JsonValue::parse(ctx.request.body, &error);
  if (!patch) return ctx.reply(k8s_error(400, "BadRequest", error));
  std::optional<JsonValue> node = node_named(name);
  if (!node) return ctx.reply(node_not_found(name));
  JsonValue patched = *node;
  if (auto refused = apply_patch(patched, *patch, *type, /*status_only=*/false)) return ctx.reply(std::move(*refused));
  const JsonValue* u = patched.find({"spec", "unschedulable"});
  bool cordon = u != nullptr && u->dump() == "true";
  // What may change: spec.unschedulable (kubectl cordon, uncordon), the
  // taints (kubectl taint) and the labels (kubectl label node); the rest is the agent's.
  auto agents_part = [](JsonValue n) {
    if (JsonValue* spec = n.get("spec"); spec && spec->is_object()) {
      spec->erase("unschedulable");
      spec->erase("taints");
      if (spec->is_object() && spec->members().empty()) n.erase("spec");
    }
    if (JsonValue* meta = n.get("metadata"); meta && meta->is_object()) meta->erase("labels");
    return n;
  };
  if (!agents_part(patched).same_as(agents_part(*node))) {
    return ctx.reply(k8s_object(
        422, invalid_status_json("Node", name,
                                 {{"spec", "FieldValueForbidden",
                                   "Forbidden: a node is a uvsched agent: only spec.unschedulable (kubectl cordon, "
                                   "uncordon), spec.taints (kubectl taint) and metadata.labels (kubectl label) may "
                                   "change; its resources and status are what the agent subscribed with"}})));
  }
  const JsonValue* labels = patched.find({"metadata", "labels"});
  if (labels && !labels->is_object() && !labels->is_null()) {
    return ctx.reply(k8s_object(422, invalid_status_json("Node", name,
                                                         {{"metadata.labels", "FieldValueTypeInvalid",
                                                           "Invalid value: must be an object of strings"}})));
  }
  std::vector<FieldIssue> issues;
  validate_labels(labels, "metadata.labels", &issues);
  if (labels && labels->is_object()) {
    for (const auto& [k, v] : labels->members()) {
      if (!v.is_string())
        issues.push_back({"metadata.labels." + k, "FieldValueTypeInvalid", "Invalid value: must be a string"});
    }
  }
  Labels before = labels_of(*node), after = labels_of(patched);
  if (before[kHostnameLabel] != after[kHostnameLabel]) {
    issues.push_back({std::string("metadata.labels.") + kHostnameLabel, "FieldValueForbidden",
                      "Forbidden: it is the agent's hostname, " + name});
  }
  validate_taints(patched.find({"spec", "taints"}), "spec.taints", &issues);
  if (!issues.empty()) return ctx.reply(k8s_object(422, invalid_status_json("Node", name, issues)));
  std::vector<Taint> taints = taints_of(patched.find({"spec", "taints"}));
  bool new_taints = taints != taints_of(node->find({"spec", "taints"}));
  auto cordon_then_answer = [this, res = ctx.responder, name, cordon, taints = std::move(taints),
                             new_taints]() mutable {
    auto done = [this, res, name, cordon](WriteResult&& r) mutable {
      if (!r.status.ok()) return res.send(store_down(r.status));
      log_info(cordon ? "node_cordoned" : "node_uncordoned").kv("node", name);
      if (cordon_hook_) cordon_hook_(name, cordon);
      auto now = node_named(name);  // as it is now, cordoned or not, relabelled or not
      res.send(now ? k8s_object(200, now->dump()) : node_not_found(name));
    };
    auto cordon_it = [this, name, cordon, done = std::move(done)]() mutable {
      std::string key = kCordonPrefix + name;
      if (cordon) return store_.put(key, "{}", 0, std::move(done));
      store_.del(key, false, std::move(done));
    };
    if (!new_taints) return cordon_it();
    // The taints first: each write is whole, so a failure leaves what was there.
    auto stored = [this, res, name, taints, then = std::move(cordon_it)](WriteResult&& r) mutable {
      if (!r.status.ok()) return res.send(store_down(r.status));
      log_info("node_taints_changed").kv("node", name).kv("taints", taints_json(taints));
      if (taints_hook_) taints_hook_(name, taints);
      then();
    };
    std::string key = kNodeTaintsPrefix + name;
    if (taints.empty()) return store_.del(key, false, std::move(stored));
    store_.put(key, taints_json(taints), 0, std::move(stored));
  };
  if (before == after) return cordon_then_answer();
  store_label_edits(
      name, std::move(before), std::move(after),
      [res = ctx.responder, then = std::move(cordon_then_answer)](std::optional<HttpResponse> failure) mutable {
        if (failure) return res.send(std::move(*failure));
        then();
      });
}

void PodRegistry::store_label_edits(const std::string& node, Labels before, Labels after, LabelsStored done,
                                    int tries) {
  std::string key = kNodeLabelsPrefix + node;
  store_.get(key, {},
             [this, node, key, before = std::move(before), after = std::move(after), done = std::move(done),
              tries](RangeResult&& r) mutable {
               if (!r.status.ok()) return done(store_down(r.status));
               LabelEdits current;
               if (!r.kvs.empty()) current = parse_label_edits(r.kvs[0].value).value_or(LabelEdits{});
               LabelEdits edits = edits_between(before, after, std::move(current));
               TxnRequest t;
               // Unchanged since it was read (absent: never made), or read again.
               t.compares.push_back({.key = key,
                                     .target = Compare::Target::kModRevision,
                                     .op = Compare::Op::kEqual,
                                     .number = r.kvs.empty() ? 0 : r.kvs[0].mod_revision});
               t.success.push_back({.type = TxnOp::Type::kPut, .key = key, .value = label_edits_json(edits)});
               store_.txn(
                   std::move(t), [this, node, before = std::move(before), after = std::move(after),
                                  edits = std::move(edits), done = std::move(done), tries](TxnResult&& tr) mutable {
                     if (!tr.status.ok()) return done(store_down(tr.status));
                     if (!tr.succeeded) {
                       if (tries + 1 >= PodWriter::kAttempts) {
                         return done(k8s_error(409, "Conflict",
                                               "Operation cannot be fulfilled on nodes \"" + node +
                                                   "\": its labels kept changing while this change was made; try again",
                                               "nodes", node));
                       }
                       return store_label_edits(node, std::move(before), std::move(after), std::move(done), tries + 1);
                     }
                     log_info("node_labels_changed").kv("node", node).kv("edits", label_edits_json(edits));
                     if (node_labels_hook_) node_labels_hook_(node, std::move(edits));
                     done(std::nullopt);
                   });
             });
}

}  // namespace uvsched
