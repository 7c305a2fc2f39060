#include "handlers/pods/empty_services.h"

#include "handlers/pods/k8s_request.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/pod_table.h"
#include "reactor/json_writer.h"

namespace uvsched {
namespace {

constexpr const char* kNoServices =
    "uvsched runs no services (no kube-proxy, no endpoints): a pod is reached on the agent that runs it "
    "(kubectl get pod -o wide names it)";

void list_none(RequestContext& ctx) {
  if (auto refused = refuse_bad_list_options(ctx.request.query())) return ctx.reply(std::move(*refused));
  if (query_flag(ctx.request.query(), "watch")) return ctx.reply(k8s_error(405, "MethodNotAllowed", kNoServices));
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  if (table.wanted) {
    JsonWriter w;
    begin_table(w, {{"Name", "string", "name", 0},
                    {"Type", "string", "", 0},
                    {"Cluster-IP", "string", "", 0},
                    {"External-IP", "string", "", 0},
                    {"Port(s)", "string", "", 0},
                    {"Age", "string", "", 0}});
    end_table(w, "");
    return ctx.reply(k8s_object(200, w.take()));
  }
  ctx.reply(k8s_object(200, R"({"kind":"ServiceList","apiVersion":"v1","metadata":{},"items":[]})"));
}

}  // namespace

void add_empty_service_routes(Router& router) {
  router.add("GET", "/api/v1/services", list_none);
  router.add("GET", "/api/v1/namespaces/{ns}/services", list_none);
  router.add("GET", "/api/v1/namespaces/{ns}/services/{name}", [](RequestContext& ctx) {
    std::string name = ctx.param("name");
    ctx.reply(k8s_error(404, "NotFound", "services \"" + name + "\" not found", "services", name));
  });
  router.add("POST", "/api/v1/namespaces/{ns}/services",
             [](RequestContext& ctx) { ctx.reply(k8s_error(405, "MethodNotAllowed", kNoServices, "services")); });
}

}  // namespace uvsched
