// The pod registry's watches (GET .../pods?watch=1): the snapshot sent as
// ADDED a slice at a time as the watcher reads it, then the store's watch
// from the snapshot's revision, until the client leaves, the store's watch
// fails or timeoutSeconds passes. (PodRegistry's members, apart from its
// writes and reads.)
#include <algorithm>

#include "handlers/pods/k8s_request.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/pod_query.h"
#include "handlers/pods/pod_registry.h"
#include "handlers/pods/pod_table.h"
#include "handlers/pods/stored_object.h"
#include "reactor/log.h"
#include "reactor/url.h"

namespace uvsched {

struct PodRegistry::Watch {
  ResponseStream stream;
  Store::WatchId id = 0;
  std::shared_ptr<Query> query;
  std::unique_ptr<Timer> timeout;
  bool ended = false;
};

// The pods as they were when a watch began, sent as ADDED a slice at a time
// as the watcher reads them; the store's watch starts once they are out.
// Held only by the next slice's callback, so that it goes with it when the
// connection closes.
struct PodRegistry::WatchSnapshot {
  RangeResult range;
  size_t next = 0;
  size_t unread_bytes = 0;
};

// A watch ends once, for whichever reason comes first (timeoutSeconds, the
// store's watch failing, the client leaving): the store's watch is cancelled,
// its timer stopped and the stream ended (a no-op when the client left).
void PodRegistry::end_watch(Watch& w) {
  if (w.ended) return;
  w.ended = true;
  store_.cancel_watch(w.id);
  if (w.timeout) w.timeout->stop();
  w.stream.end();
}

// A watch: the current pods as ADDED (unless the client resumes from a
// resourceVersion), then every change from the store's watch, one JSON event
// per line, until the client leaves or timeoutSeconds passes.
void PodRegistry::watch_pods(RequestContext& ctx, const std::string& prefix, std::shared_ptr<Query> q) {
  std::string_view query = ctx.request.query();
  int64_t from = 0;
  if (auto rv = query_param(query, "resourceVersion"); rv && !rv->empty())
    from = std::strtoll(rv->c_str(), nullptr, 10);
  auto w = std::make_shared<Watch>();
  w->query = q;
  w->stream = ctx.responder.start_stream(200, "application/json");
  if (auto ms = watch_timeout_ms(query)) {
    w->timeout = clock_.new_timer();
    w->timeout->start(*ms, [this, w] { end_watch(*w); });
  }
  // kubectl -w asks for Tables: each event then carries a one-row Table.
  auto send = [this, w](std::string_view type, const std::string& object) {
    std::string body = object;
    if (w->query->table && type != "ERROR") {
      std::string error;
      auto pod = JsonValue::parse(object, &error);
      if (pod) body = pod_table({*pod}, "", clock_.unix_ms(), w->query->row);
    }
    std::string line = "{\"type\":\"" + std::string(type) + "\",\"object\":" + body + "}\n";
    return w->stream.write(line);
  };
  auto on_events = [this, w, send](const StoreStatus& st, const std::vector<WatchEvent>& events) {
    if (w->ended) return;
    if (!st.ok()) {
      int code = st.code == StoreCode::kCompacted ? 410 : 503;
      send("ERROR", k8s_status_json(code, code == 410 ? "Expired" : "ServiceUnavailable", st.message));
      return end_watch(*w);
    }
    for (const auto& e : events) {
      bool deleted = e.type == WatchEvent::Type::kDelete;
      const KeyValue& kv = deleted && e.prev_kv ? *e.prev_kv : e.kv;
      std::string object = with_rv(kv.value, e.kv.mod_revision);
      if (w->query->filters()) {
        std::string error;
        auto pod = JsonValue::parse(kv.value, &error);
        if (!pod || !w->query->selects(*pod)) continue;
      }
      std::string_view type = deleted ? "DELETED" : (e.kv.version == 1 ? "ADDED" : "MODIFIED");
      if (!send(type, object)) return;
    }
  };
  w->stream.on_close([this, w] { end_watch(*w); });
  if (from > 0) {
    w->id = store_.watch(prefix, from + 1, on_events);
    return;
  }
  w->stream.hold(snapshot_bytes_);  // as a list's, before it is read
  if (!w->stream.open()) return;
  read_snapshot(
      prefix, [w] { return !w->ended && w->stream.open(); },
      [this, w, prefix, send, on_events](RangeResult&& r) {
        if (w->ended) return;
        if (!r.status.ok()) return on_events(r.status, {});
        auto snap = std::make_shared<WatchSnapshot>();
        snap->range = std::move(r);
        for (const auto& kv : snap->range.kvs) snap->unread_bytes += kv.value.size();
        bool all_namespaces = prefix == kPodPrefix;
        snapshot_bytes_ = all_namespaces ? snap->unread_bytes : std::max(snapshot_bytes_, snap->unread_bytes);
        send_snapshot(w, snap, prefix, send, on_events);
      });
}
// One slice of a new watch's ADDED events, then the next once the watcher
// has read it; after the last, the store's watch from the snapshot's
// revision (a store that compacted past it in the meantime answers 410, and
// the client lists again, as with the API server).
// (`send` and `on_events` hold the watch: they are kept by the stream's
// callback and the store's watch, never by the watch itself.)
void PodRegistry::send_snapshot(const std::shared_ptr<Watch>& w, const std::shared_ptr<WatchSnapshot>& snap,
                                const std::string& prefix, const WatchSend& send, const WatchCallback& on_events) {
  constexpr size_t kSliceBytes = 64 * 1024;
  constexpr size_t kParsedPerSlice = 256;
  if (w->ended) return;
  size_t written = 0, parsed = 0;
  auto& kvs = snap->range.kvs;
  while (snap->next < kvs.size() && written < kSliceBytes && parsed < kParsedPerSlice) {
    const KeyValue& kv = kvs[snap->next++];
    snap->unread_bytes -= kv.value.size();
    if (w->query->filters() || w->query->table) ++parsed;
    if (w->query->filters()) {
      auto pod = parse_stored(kv);
      if (!pod || !w->query->selects(*pod)) continue;
    }
    written += kv.value.size();
    if (!send("ADDED", with_rv(kv.value, kv.mod_revision))) return;
  }
  if (snap->next < kvs.size()) {
    w->stream.hold(snap->unread_bytes);  // may cut this watcher, if it holds the most
    w->stream.when_drained(
        [this, w, snap, prefix, send, on_events] { send_snapshot(w, snap, prefix, send, on_events); });
    return;
  }
  w->stream.hold(0);
  w->id = store_.watch(prefix, snap->range.revision + 1, on_events);
}

}  // namespace uvsched
