// A watch of the objects stored under a prefix (namespaces, pod groups, the
// registry's other kinds, and the events made from the pods): the current
// ones (unless the client resumes from a resourceVersion), then the store's
// changes, one JSON event per line, until the client leaves, the store's
// watch fails (410 once it compacted past the client's revision, else 503)
// or timeoutSeconds passes. What each stored change is sent as is the
// caller's: by default the object itself; the events watch sends the events
// a pod stands for instead. Pods have their own (pod_watch.cc): paced
// snapshots and selectors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "handlers/json_value.h"
#include "handlers/pods/pod_table.h"
#include "handlers/router.h"
#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

// An object as a one-row Table, for a watcher that asked for Tables (kubectl -w).
using TableRow = std::function<std::string(const JsonValue& object, int64_t now_unix_ms, RowObject row)>;

// How a stored object came to the watch: in the listing that starts it, or
// as a change the store's watch reported.
enum class StoredChange { kListed, kPut, kDeleted };

// Writes one line to the watcher: `object` as JSON, or as a Table row when
// the watcher asked for Tables (`parsed`, when given, is `object` already
// parsed). False: the client is gone.
using WatchWrite = std::function<bool(std::string_view type, const std::string& object, const JsonValue* parsed)>;

// What a stored object is sent as. `kv.mod_revision` is the change's
// revision; a deleted object's value is what it was before. False: stop.
using WatchTranslate = std::function<bool(const KeyValue& kv, StoredChange change, const WatchWrite& send)>;

// Each object as itself: ADDED when listed or created, MODIFIED, DELETED.
bool send_as_stored(const KeyValue& kv, StoredChange change, const WatchWrite& send);

void watch_prefix(Store& store, Clock& clock, RequestContext& ctx, const std::string& prefix, TableRow table_row,
                  WatchTranslate translate = send_as_stored);

}  // namespace uvsched
