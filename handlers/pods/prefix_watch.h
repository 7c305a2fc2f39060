// A watch of the few objects stored under a prefix (namespaces, pod groups,
// the registry's other kinds): the current ones as ADDED (unless the client
// resumes from a resourceVersion), then the store's changes, one JSON event
// per line, until the client leaves, the store's watch fails (410 once it
// compacted past the client's revision, else 503) or timeoutSeconds passes.
// Pods have their own (pod_watch.cc): paced snapshots and selectors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "handlers/json_value.h"
#include "handlers/pods/pod_table.h"
#include "handlers/router.h"
#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

// An object as a one-row Table, for a watcher that asked for Tables (kubectl -w).
using TableRow = std::function<std::string(const JsonValue& object, int64_t now_unix_ms, RowObject row)>;

void watch_prefix(Store& store, Clock& clock, RequestContext& ctx, const std::string& prefix, TableRow table_row);

}  // namespace uvsched
