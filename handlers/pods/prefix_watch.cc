#include "handlers/pods/prefix_watch.h"

#include <cstdlib>
#include <memory>

#include "handlers/pods/k8s_request.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/stored_object.h"
#include "reactor/url.h"

namespace uvsched {

bool send_as_stored(const KeyValue& kv, StoredChange change, const WatchWrite& send) {
  std::string_view type = change == StoredChange::kDeleted                  ? "DELETED"
                          : change == StoredChange::kPut && kv.version != 1 ? "MODIFIED"
                                                                            : "ADDED";
  return send(type, with_rv(kv.value, kv.mod_revision), nullptr);
}

void watch_prefix(Store& store, Clock& clock, RequestContext& ctx, const std::string& prefix, TableRow table_row,
                  WatchTranslate translate) {
  struct Watch {
    ResponseStream stream;
    Store::WatchId id = 0;
    std::unique_ptr<Timer> timeout;
    bool ended = false;
    TableAsk table;
  };
  std::string_view query = ctx.request.query();
  int64_t from = 0;
  if (auto rv = query_param(query, "resourceVersion"); rv && !rv->empty())
    from = std::strtoll(rv->c_str(), nullptr, 10);
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  auto w = std::make_shared<Watch>();
  w->table = std::move(table);
  w->stream = ctx.responder.start_stream(200, "application/json");
  auto end = [&store](Watch& w) {
    if (w.ended) return;
    w.ended = true;
    if (w.id) store.cancel_watch(w.id);
    if (w.timeout) w.timeout->stop();
    w.stream.end();
  };
  if (auto ms = watch_timeout_ms(query)) {
    w->timeout = clock.new_timer();
    w->timeout->start(*ms, [w, end] { end(*w); });
  }
  WatchWrite send = [&clock, w, table_row = std::move(table_row)](std::string_view type, const std::string& object,
                                                                  const JsonValue* parsed) {
    std::string row;
    if (w->table.wanted && type != "ERROR") {
      std::optional<JsonValue> own;
      if (!parsed) {
        std::string error;
        own = JsonValue::parse(object, &error);
        parsed = own ? &*own : nullptr;
      }
      if (parsed) row = table_row(*parsed, clock.unix_ms(), w->table.row);
    }
    return w->stream.write({"{\"type\":\"", type, "\",\"object\":", row.empty() ? object : row, "}\n"});
  };
  auto on_events = [w, send, end, translate](const StoreStatus& st, const std::vector<WatchEvent>& events) {
    if (w->ended) return;
    if (!st.ok()) {
      int code = st.code == StoreCode::kCompacted ? 410 : 503;
      send("ERROR", k8s_status_json(code, code == 410 ? "Expired" : "ServiceUnavailable", st.message), nullptr);
      return end(*w);
    }
    for (const auto& e : events) {
      bool ok;
      if (e.type != WatchEvent::Type::kDelete) {
        ok = translate(e.kv, StoredChange::kPut, send);
      } else if (e.prev_kv) {
        KeyValue was = *e.prev_kv;  // what was deleted, at the deletion's revision
        was.mod_revision = e.kv.mod_revision;
        ok = translate(was, StoredChange::kDeleted, send);
      } else {
        ok = translate(e.kv, StoredChange::kDeleted, send);
      }
      if (!ok) return end(*w);
    }
  };
  w->stream.on_close([w, end] { end(*w); });
  if (from > 0) {
    w->id = store.watch(prefix, from + 1, on_events);
    return;
  }
  RangeOptions all;
  all.prefix = true;
  store.get(prefix, all, [&store, w, prefix, send, on_events, end, translate](RangeResult&& r) {
    if (w->ended) return;
    if (!r.status.ok()) return on_events(r.status, {});
    for (const auto& kv : r.kvs) {
      if (!translate(kv, StoredChange::kListed, send)) return end(*w);
    }
    w->id = store.watch(prefix, r.revision + 1, on_events);
  });
}

}  // namespace uvsched
