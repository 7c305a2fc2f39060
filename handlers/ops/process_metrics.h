// The process metrics every Prometheus client library exports by default
// (Go's among them, so KubeML's and etcd's): CPU seconds, resident memory,
// open and allowed file descriptors, start time. Dashboards and alerts
// written for them (open_fds / max_fds, the usual one) work here unchanged.
#pragma once

#include <uv.h>

#include "handlers/ops/metrics_registry.h"
#include "reactor/clock.h"

namespace uvsched {

// The start time is read now, from /proc (where that fails: the clock's time
// of this call). Counting the open descriptors lists /proc/self/fd, about
// 5 ms with 9,000 open (bench/RESULTS.md): after the first (now), that runs
// on libuv's thread pool, and a scrape shows the count finished last,
// started by the scrape before.
void add_process_metrics(MetricsRegistry& registry, uv_loop_t* loop, const Clock& clock);

}  // namespace uvsched
