#include "handlers/pods/node_leases.h"

#include "handlers/pods/k8s_request.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/pod_table.h"
#include "reactor/json_writer.h"

namespace uvsched {
namespace {

constexpr const char* kNodeLeaseNamespace = "kube-node-lease";

std::string lease_resource_list() {
  JsonWriter w;
  w.begin_object().key("kind").value("APIResourceList").key("apiVersion").value("v1");
  w.key("groupVersion").value(std::string(kCoordinationGroup) + "/" + kCoordinationVersion);
  w.key("resources").begin_array().begin_object();
  w.key("name").value("leases").key("singularName").value("lease").key("namespaced").value(true);
  w.key("kind").value("Lease").key("verbs").begin_array().value("get").value("list").end_array();
  w.end_object().end_array().end_object();
  return w.take();
}

std::string lease_name(const JsonValue& lease) {
  const JsonValue* n = lease.find({"metadata", "name"});
  return n && n->is_string() ? n->text() : "";
}

// As the API server prints a Lease: NAME, HOLDER, AGE.
std::string lease_table(const std::vector<JsonValue>& leases, int64_t now_ms, RowObject row) {
  JsonWriter w;
  begin_table(w, {{"Name", "string", "name", 0}, {"Holder", "string", "", 0}, {"Age", "string", "", 0}});
  for (const auto& lease : leases) {
    const JsonValue* holder = lease.find({"spec", "holderIdentity"});
    w.begin_object().key("cells").begin_array().value(lease_name(lease));
    w.value(holder && holder->is_string() ? holder->text() : "<unset>").value(table_age(lease, now_ms));
    w.end_array();
    write_row_object(w, lease, row);
    w.end_object();
  }
  end_table(w, "");
  return w.take();
}

}  // namespace

NodeLeases::NodeLeases(Clock& clock, std::function<std::vector<JsonValue>()> leases,
                       std::function<std::optional<JsonValue>(const std::string& node)> lease)
    : clock_(clock), leases_(std::move(leases)), lease_(std::move(lease)) {}

void NodeLeases::add_routes(Router& router) {
  std::string base = std::string("/apis/") + kCoordinationGroup + "/" + kCoordinationVersion;
  static const std::string resources = lease_resource_list();
  router.add("GET", base, [](RequestContext& ctx) { ctx.reply(k8s_object(200, resources)); });
  router.add("GET", base + "/leases", [this](RequestContext& ctx) { list(ctx, ""); });
  router.add("GET", base + "/namespaces/{ns}/leases", [this](RequestContext& ctx) { list(ctx, ctx.param("ns")); });
  router.add("GET", base + "/namespaces/{ns}/leases/{name}", [this](RequestContext& ctx) { get(ctx); });
}

void NodeLeases::list(RequestContext& ctx, const std::string& ns) {
  if (auto refused = refuse_bad_list_options(ctx.request.query())) return ctx.reply(std::move(*refused));
  if (query_flag(ctx.request.query(), "watch")) {
    // A renewal is no store write: there is nothing to follow but a poll.
    return ctx.reply(k8s_error(405, "MethodNotAllowed", "leases are not watched here: list or get them again"));
  }
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  std::vector<JsonValue> leases;
  if (ns.empty() || ns == kNodeLeaseNamespace) leases = leases_();
  if (table.wanted) return ctx.reply(k8s_object(200, lease_table(leases, clock_.unix_ms(), table.row)));
  JsonWriter w;
  w.begin_object().key("kind").value("LeaseList").key("apiVersion").value("coordination.k8s.io/v1");
  w.key("metadata").begin_object().end_object().key("items").begin_array();
  for (const auto& lease : leases) w.raw(lease.dump());
  w.end_array().end_object();
  ctx.reply(k8s_object(200, w.take()));
}

void NodeLeases::get(RequestContext& ctx) {
  std::string ns = ctx.param("ns"), name = ctx.param("name");
  std::optional<JsonValue> lease = ns == kNodeLeaseNamespace ? lease_(name) : std::nullopt;
  if (!lease) {
    return ctx.reply(
        k8s_error(404, "NotFound", "leases.coordination.k8s.io \"" + name + "\" not found", "leases", name));
  }
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  if (table.wanted) return ctx.reply(k8s_object(200, lease_table({*lease}, clock_.unix_ms(), table.row)));
  ctx.reply(k8s_object(200, lease->dump()));
}

}  // namespace uvsched
