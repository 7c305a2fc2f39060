#include "handlers/ops/ops_routes.h"

#include "handlers/json_response.h"
#include "reactor/json_writer.h"

namespace uvsched {

void add_ops_routes(Router& router, const MetricsRegistry& metrics, const Readiness& readiness) {
  // KubeML's probes expect a bare 200 on /health.
  router.add("GET", "/health", [](RequestContext& ctx) { ctx.reply(text_response(200, "")); });
  router.add("GET", "/healthz", [](RequestContext& ctx) { ctx.reply(json_response(200, R"({"status":"alive"})")); });
  router.add("GET", "/readyz", [&readiness](RequestContext& ctx) {
    auto why = readiness.check();
    JsonWriter w;
    w.begin_object().key("status").value(why ? "not ready" : "ready");
    if (why) w.key("reason").value(*why);
    w.end_object();
    HttpResponse r = json_response(why ? 503 : 200, w.take());
    if (why) r.headers.push_back({"Retry-After", "1"});
    ctx.reply(std::move(r));
  });
  router.add("GET", "/metrics", [&metrics](RequestContext& ctx) {
    HttpResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = metrics.render();
    ctx.reply(std::move(r));
  });
}

}  // namespace uvsched
