// GET /v1/status: the daemon at a glance, for the status page's Health view
// and for anyone with curl: leader or standby, the store and how long it takes
// to answer a read now, version, uptime, and the counters operators watch
// (the page turns successive readings into rates).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "handlers/ops/metrics_registry.h"
#include "handlers/router.h"
#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

struct StatusSource {
  std::string version;
  std::string store;                     // as configured: "embedded:./data", "etcd:http://..."
  std::function<std::string()> role;     // "leader", "standby"
  std::function<size_t()> pending_pods;  // waiting to be placed
  std::function<size_t()> pod_tasks;     // launched or running
  std::function<size_t()> training_jobs;
};

void add_status_routes(Router& router, Clock& clock, Store& store, const MetricsRegistry& metrics, StatusSource source);

}  // namespace uvsched
