// Counts every HTTP response by route, method and code, and times it.
#pragma once

#include "handlers/ops/metrics_registry.h"
#include "reactor/http_server.h"

namespace uvsched {

class HttpMetrics {
 public:
  explicit HttpMetrics(MetricsRegistry& registry);
  void record(const ResponseRecord& r);

 private:
  CounterFamily& requests_;
  HistogramFamily& latency_;
};

}  // namespace uvsched
