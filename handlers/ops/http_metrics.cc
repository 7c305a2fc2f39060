#include "handlers/ops/http_metrics.h"

#include <string>

namespace uvsched {

HttpMetrics::HttpMetrics(MetricsRegistry& registry)
    : requests_(registry.counter("uvsched_http_requests_total", "HTTP responses by route, method and code.")),
      latency_(registry.histogram(
          "uvsched_http_request_duration_seconds", "Time from a request's last byte to its response, by route.",
          {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10})) {}

void HttpMetrics::record(const ResponseRecord& r) {
  Key key{r.label.data(), r.label.size(), r.method.data(), r.status};
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    std::string_view route = r.label.empty() ? std::string_view("unmatched") : r.label;
    std::string code = std::to_string(r.status);
    Slot slot{&requests_.series(labels({{"route", route}, {"method", r.method}, {"code", code}})),
              &latency_.series(labels({{"route", route}}))};
    it = cache_.emplace(key, slot).first;
  }
  *it->second.requests += 1;
  latency_.observe(*it->second.latency, r.seconds);
}

}  // namespace uvsched
