// Counts every HTTP response by route, method and code, and times it.
#pragma once

#include <unordered_map>

#include "handlers/ops/metrics_registry.h"
#include "reactor/http_server.h"

namespace uvsched {

class HttpMetrics {
 public:
  explicit HttpMetrics(MetricsRegistry& registry);
  void record(const ResponseRecord& r);

 private:
  // Labels and methods are long-lived strings (route patterns, llhttp's method
  // names), so their addresses key a cache of series: no label rendering and
  // no string hashing per request.
  struct Key {
    const char* route;
    size_t route_len;
    const char* method;
    int status;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.route) ^ (std::hash<const void*>()(k.method) << 1) ^
             (static_cast<size_t>(k.status) << 7) ^ k.route_len;
    }
  };
  struct Slot {
    double* requests;
    HistogramFamily::Series* latency;
  };

  CounterFamily& requests_;
  HistogramFamily& latency_;
  std::unordered_map<Key, Slot, KeyHash> cache_;
};

}  // namespace uvsched
