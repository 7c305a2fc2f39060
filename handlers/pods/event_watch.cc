// kubectl get events -w: events are made from the pods (pod_events.h), so
// their watch is the pods' store watch seen through pod_events. Each watcher
// keeps what it last sent of each event (by name), to send an event when it
// appears (ADDED), when its message or time changes (MODIFIED) and when its
// pod goes or no longer stands for it (DELETED), and nothing when a pod's
// change leaves its events as they were (a task's TASK_RUNNING, say). A
// watcher that resumes from a resourceVersion (kubectl lists first) is sent a
// pod's events again, once, the first time that pod changes after it.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "handlers/pods/k8s_request.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/pod_events.h"
#include "handlers/pods/pod_registry.h"
#include "handlers/pods/stored_object.h"
#include "reactor/url.h"

namespace uvsched {
namespace {

struct EventWatch {
  ResponseStream stream;
  Store::WatchId id = 0;
  std::unique_ptr<Timer> timeout;
  bool ended = false;
  TableAsk table;
  std::vector<FieldRequirement> fields;
  // Pod key -> its events as last sent: reason -> a hash of what of the
  // event counts (its pod's resourceVersion, which any change of the pod
  // moves, does not). A hash, not the event: a watcher of 100k pods keeps
  // this much for each.
  std::map<std::string, std::map<std::string, size_t>> sent;
};

size_t what_counts(JsonValue e) {
  if (JsonValue* involved = e.get("involvedObject")) involved->erase("resourceVersion");
  return std::hash<std::string>{}(e.dump());
}

// What a DELETED event carries of an event no longer made: enough for a
// client to know which it was (its name, namespace, pod and reason).
std::string gone_event(const std::string& pod_key, const std::string& reason) {
  std::string_view rest = std::string_view(pod_key).substr(std::string_view(PodRegistry::kPodPrefix).size());
  JsonValue pod = JsonValue::object();
  JsonValue& meta = pod.ensure({"metadata"});
  meta.set("namespace", JsonValue::string(std::string(rest.substr(0, rest.find('/')))));
  meta.set("name", JsonValue::string(std::string(rest.substr(rest.find('/') + 1))));
  return pod_event(pod, "", reason, "", "").dump();
}

}  // namespace

void PodRegistry::watch_events(RequestContext& ctx, const std::string& ns, std::vector<FieldRequirement> fields) {
  std::string_view query = ctx.request.query();
  int64_t from = 0;
  if (auto rv = query_param(query, "resourceVersion"); rv && !rv->empty())
    from = std::strtoll(rv->c_str(), nullptr, 10);
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  auto w = std::make_shared<EventWatch>();
  w->table = std::move(table);
  w->fields = std::move(fields);
  w->stream = ctx.responder.start_stream(200, "application/json");
  auto end = [this](EventWatch& w) {
    if (w.ended) return;
    w.ended = true;
    if (w.id) store_.cancel_watch(w.id);
    if (w.timeout) w.timeout->stop();
    w.stream.end();
  };
  if (auto ms = watch_timeout_ms(query)) {
    w->timeout = clock_.new_timer();
    w->timeout->start(*ms, [w, end] { end(*w); });
  }
  auto send = [this, w](std::string_view type, const std::string& json, const JsonValue* event) {
    std::string body = event && w->table.wanted ? event_table({*event}, "", clock_.unix_ms(), w->table.row) : json;
    return w->stream.write({"{\"type\":\"", type, "\",\"object\":", body, "}\n"});
  };
  // The pod's events now (none when it is gone) against those last sent: what changed is sent.
  auto pod_changed = [w, send](const KeyValue& kv, bool deleted) {
    auto& before = w->sent[kv.key];
    std::map<std::string, size_t> now;
    std::map<std::string, JsonValue> objects;
    if (!deleted) {
      if (std::optional<JsonValue> pod = parse_stored(kv)) {
        for (JsonValue& e : pod_events(*pod)) {
          bool selected = std::all_of(w->fields.begin(), w->fields.end(), [&](const FieldRequirement& f) {
            return (event_field(e, f.key) == f.value) != f.negate;
          });
          if (!selected) continue;
          std::string reason = e.str("reason");
          now[reason] = what_counts(e);
          objects.emplace(reason, std::move(e));
        }
      }
    }
    for (const auto& [reason, hash] : now) {
      auto was = before.find(reason);
      if (was != before.end() && was->second == hash) continue;
      const JsonValue& e = objects.at(reason);
      if (!send(was == before.end() ? "ADDED" : "MODIFIED", e.dump(), &e)) return false;
    }
    for (const auto& [reason, hash] : before) {
      if (now.count(reason)) continue;
      std::string json = gone_event(kv.key, reason), error;
      std::optional<JsonValue> gone = JsonValue::parse(json, &error);
      if (!send("DELETED", json, gone ? &*gone : nullptr)) return false;
    }
    if (now.empty()) {
      w->sent.erase(kv.key);
    } else {
      before = std::move(now);
    }
    return true;
  };
  auto on_events = [w, send, end, pod_changed](const StoreStatus& st, const std::vector<WatchEvent>& events) {
    if (w->ended) return;
    if (!st.ok()) {
      int code = st.code == StoreCode::kCompacted ? 410 : 503;
      send("ERROR", k8s_status_json(code, code == 410 ? "Expired" : "ServiceUnavailable", st.message), nullptr);
      return end(*w);
    }
    for (const auto& e : events) {
      bool deleted = e.type == WatchEvent::Type::kDelete;
      KeyValue kv = deleted && e.prev_kv ? *e.prev_kv : e.kv;
      kv.mod_revision = e.kv.mod_revision;
      if (!pod_changed(kv, deleted)) return end(*w);
    }
  };
  w->stream.on_close([w, end] { end(*w); });
  std::string prefix = std::string(kPodPrefix) + (ns.empty() ? "" : ns + "/");
  if (from > 0) {
    // Resuming (after kubectl's list): what the client already has is not
    // known here, so a pod's events are sent again, once, when it next changes.
    w->id = store_.watch(prefix, from + 1, on_events);
    return;
  }
  RangeOptions all;
  all.prefix = true;
  store_.get(prefix, all, [this, w, prefix, on_events, pod_changed, end](RangeResult&& r) {
    if (w->ended) return;
    if (!r.status.ok()) return on_events(r.status, {});
    for (const auto& kv : r.kvs) {
      if (!pod_changed(kv, false)) return end(*w);
    }
    w->id = store_.watch(prefix, r.revision + 1, on_events);
  });
}

}  // namespace uvsched
