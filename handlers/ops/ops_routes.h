// Health, readiness and metrics endpoints (SPEC §2).
#pragma once

#include "handlers/ops/metrics_registry.h"
#include "handlers/ops/readiness.h"
#include "handlers/router.h"

namespace uvsched {

void add_ops_routes(Router& router, const MetricsRegistry& metrics, const Readiness& readiness);

}  // namespace uvsched
