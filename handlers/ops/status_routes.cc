#include "handlers/ops/status_routes.h"

#include <chrono>
#include <memory>

#include "handlers/json_response.h"
#include "reactor/json_writer.h"

namespace uvsched {
namespace {

// A key no one writes: reading it costs the store one lookup and no data.
constexpr std::string_view kProbeKey = "/uvsched/status/probe";

struct Counter {
  std::string_view key, metric, label_part;
};
// What the Health view shows; each a sum of a counter's series.
constexpr Counter kCounters[] = {
    {"placements", "uvsched_pod_placements_total", "result=\"placed\""},
    {"unschedulable", "uvsched_pod_placements_total", "result=\"unschedulable\""},
    {"preemptions", "uvsched_preemptions_total", ""},
    {"ml_decisions", "uvsched_ml_decisions_total", ""},
    {"ps_call_errors", "uvsched_ps_calls_total", "result=\"error\""},
    {"http_requests", "uvsched_http_requests_total", ""},
    {"http_server_errors", "uvsched_http_requests_total", "code=\"5"},
    {"agent_refusals", "uvsched_agent_refusals_total", ""},
};

}  // namespace

void add_status_routes(Router& router, Clock& clock, Store& store, const MetricsRegistry& metrics,
                       StatusSource source) {
  uint64_t started_ms = clock.now_ms();
  auto src = std::make_shared<StatusSource>(std::move(source));
  router.add("GET", "/v1/status", [&clock, &store, &metrics, started_ms, src](RequestContext& ctx) {
    Responder res = ctx.responder;
    // Wall time, not the loop's: the loop's clock stands still within a turn,
    // and an embedded read is answered well inside one.
    auto asked = std::chrono::steady_clock::now();
    RangeOptions probe;
    probe.keys_only = true;
    store.get(std::string(kProbeKey), probe,
              [&clock, &store, &metrics, started_ms, src, asked, res](RangeResult&& r) mutable {
                double latency_ms =
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - asked).count();
                JsonWriter w;
                w.begin_object().key("version").value(src->version);
                w.key("uptime_seconds").value(static_cast<double>(clock.now_ms() - started_ms) / 1000);
                w.key("role").value(src->role());
                w.key("store").begin_object();
                std::string_view s = src->store;
                size_t colon = s.find(':');
                w.key("backend").value(s.substr(0, colon));
                w.key("address").value(colon == std::string_view::npos ? "" : s.substr(colon + 1));
                w.key("revision").value(store.revision());
                if (r.status.ok()) {
                  w.key("read_latency_ms").value(latency_ms);
                } else {
                  w.key("error").value(r.status.message);
                }
                if (auto why = store.unavailable_reason()) w.key("unavailable").value(*why);
                w.end_object();
                w.key("pods").begin_object();
                w.key("pending").value(static_cast<uint64_t>(src->pending_pods()));
                w.key("tasks").value(static_cast<uint64_t>(src->pod_tasks())).end_object();
                w.key("training_jobs").value(static_cast<uint64_t>(src->training_jobs()));
                w.key("counters").begin_object();
                for (const Counter& c : kCounters) w.key(c.key).value(metrics.counter_sum(c.metric, c.label_part));
                w.end_object().end_object();
                res.send(json_response(200, w.take()));
              });
  });
}

}  // namespace uvsched
