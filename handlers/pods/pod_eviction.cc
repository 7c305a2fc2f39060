// The Eviction API (POST /api/v1/namespaces/{ns}/pods/{name}/eviction), which
// `kubectl drain`, the official clients' create_namespaced_pod_eviction and
// tools such as the descheduler use to take a pod off its node politely. The
// pod's disruption budget is weighed first (disruption_budgets.h: a 429 when
// the eviction would break it, which kubectl drain waits out and tries
// again). As the API server does, the pod is marked first
// (DisruptionTarget=True, EvictionByEvictionAPI: a Job's podFailurePolicy
// tells an eviction from a failure by it), then deleted as a DELETE deletes
// it (its task killed, the object gone once the task is), and the answer is
// a Status: 201 Success.
#include <string>

#include "handlers/pods/k8s_request.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/pod_fields.h"
#include "handlers/pods/pod_registry.h"
#include "handlers/pods/pod_writer.h"
#include "handlers/pods/stored_object.h"
#include "reactor/url.h"

namespace uvsched {
namespace {

constexpr const char* kEvictedReason = "EvictionByEvictionAPI";
constexpr const char* kEvictedMessage = "Eviction API: evicting";

HttpResponse evicted() { return k8s_object(201, k8s_status_json(201, "", "")); }

// What is wrong with the Eviction posted for pod `name` in `ns`, or nothing.
std::optional<HttpResponse> refuse_eviction(const JsonValue& eviction, const std::string& ns, const std::string& name) {
  std::string kind = eviction.str("kind"), version = eviction.str("apiVersion");
  if (!kind.empty() && kind != "Eviction")
    return k8s_error(400, "BadRequest", "kind " + kind + " cannot be posted to pods/eviction; it takes an Eviction");
  if (!version.empty() && version != "policy/v1" && version != "policy/v1beta1")
    return k8s_error(400, "BadRequest", "no kind \"Eviction\" is registered for version \"" + version + "\"");
  const JsonValue* meta = eviction.get("metadata");
  if (meta && !meta->is_object()) return k8s_error(400, "BadRequest", "metadata must be an object");
  const JsonValue* given = meta ? meta->get("name") : nullptr;
  if (!given || !given->is_string() || given->text() != name)
    return k8s_error(400, "BadRequest", "name in URL does not match name in Eviction object", "pods", name);
  if (const JsonValue* n = meta->get("namespace"); n && (!n->is_string() || (!n->text().empty() && n->text() != ns)))
    return k8s_error(400, "BadRequest",
                     "the namespace of the provided object does not match the namespace sent on the request");
  if (const JsonValue* options = eviction.get("deleteOptions"); options && !options->is_object())
    return k8s_error(400, "BadRequest", "deleteOptions must be an object");
  return std::nullopt;
}

}  // namespace

void PodRegistry::evict_pod(RequestContext& ctx) {
  if (refuse_unless_leader(ctx)) return;
  if (auto refused = refuse_media_type(ctx.request)) return ctx.reply(std::move(*refused));
  std::string ns = ctx.param("ns"), name = ctx.param("name"), error;
  auto eviction = JsonValue::parse(ctx.request.body, &error);
  if (!eviction || !eviction->is_object())
    return ctx.reply(k8s_error(400, "BadRequest", eviction ? "the body must be an Eviction" : error));
  if (auto refused = refuse_eviction(*eviction, ns, name)) return ctx.reply(std::move(*refused));
  auto in_query = delete_options_in_query(ctx.request.query());
  if (auto* refused = std::get_if<HttpResponse>(&in_query)) return ctx.reply(std::move(*refused));
  auto asked = delete_options_in(eviction->get("deleteOptions"), std::get<DeleteOptions>(in_query));
  if (auto* refused = std::get_if<HttpResponse>(&asked)) return ctx.reply(std::move(*refused));
  const DeleteOptions& options = std::get<DeleteOptions>(asked);
  Responder res = ctx.responder;
  store_.get(pod_key(ns, name), {},
             [this, res, ns, name, dry_run = options.dry_run, grace = options.grace_seconds](RangeResult&& r) mutable {
               if (!r.status.ok()) return res.send(store_down(r.status));
               if (r.kvs.empty()) return res.send(pod_not_found(name));
               std::string error;
               auto pod = JsonValue::parse(r.kvs[0].value, &error);
               auto go = [this, res, ns, name, dry_run, grace](std::optional<HttpResponse> refusal) mutable {
                 if (refusal) return res.send(std::move(*refusal));
                 if (dry_run) return res.send(evicted());
                 mark_and_delete(res, ns, name, grace);
               };
               if (!pod || !eviction_check_) return go(std::nullopt);
               eviction_check_(ns, *pod, dry_run, std::move(go));
             });
}

void PodRegistry::mark_and_delete(Responder res, const std::string& ns, const std::string& name,
                                  std::optional<int64_t> grace) {
  PodWriter::Update u;
  u.key = pod_key(ns, name);
  u.change = [stamp = rfc3339(clock_.unix_ms())](JsonValue& pod, int64_t) {
    // A pod that ended, or is being deleted already, is not marked: it is not disrupted by this.
    if (!pod.is_object() || pod.find({"metadata", "deletionTimestamp"})) return PodWriter::Verdict::kDecline;
    if (std::string phase = phase_of(pod); phase == "Succeeded" || phase == "Failed")
      return PodWriter::Verdict::kDecline;
    set_condition(pod, "DisruptionTarget", "True", kEvictedReason, kEvictedMessage, stamp);
    return PodWriter::Verdict::kPut;
  };
  u.done = [this, res, ns, name, grace](PodWriter::Result&& r) mutable {
    using Outcome = PodWriter::Outcome;
    switch (r.outcome) {
      case Outcome::kMissing:
        return res.send(pod_not_found(name));
      case Outcome::kStoreDown:
        return res.send(store_down(r.status));
      case Outcome::kConflict:
        return res.send(k8s_error(409, "Conflict", pod_conflict_message(name), "pods", name));
      case Outcome::kUnreadable:
      case Outcome::kWritten:
      case Outcome::kDeleted:
      case Outcome::kDeclined:
        break;
    }
    delete_one(ns, name, grace, [res](HttpResponse&& deleted) mutable {
      res.send(deleted.status == 200 ? evicted() : std::move(deleted));  // (a 404, a store down: as a DELETE's)
    });
  };
  writer_.update(std::move(u));
}

}  // namespace uvsched
