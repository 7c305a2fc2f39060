// Watches of nodes and namespaces (kubectl get nodes -w, get namespaces -w,
// an informer's watch after its list), which were answered with a list that
// kubectl's watch cannot decode. Namespaces are stored: the store's watch
// brings their changes. Nodes are a view of the agents, made when read: the
// view is read again each second and what changed is sent, as the kubelet's
// heartbeats make a node's watch tick on a cluster.
#include "handlers/pods/k8s_request.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/pod_registry.h"
#include "handlers/pods/pod_table.h"
#include "handlers/pods/stored_object.h"
#include "reactor/url.h"

namespace uvsched {

struct PodRegistry::ViewWatch {
  ResponseStream stream;
  Store::WatchId id = 0;
  std::unique_ptr<Timer> timeout;
  std::unique_ptr<Timer> poll;
  TableAsk table;
  std::map<std::string, std::string> nodes;  // name -> the node as last sent
  bool ended = false;

  void end(Store& store) {
    if (ended) return;
    ended = true;
    if (id) store.cancel_watch(id);
    if (timeout) timeout->stop();
    if (poll) poll->stop();
    stream.end();
  }
};

namespace {

constexpr uint64_t kNodePollMs = 1'000;

std::string event_line(std::string_view type, const std::string& object) {
  return "{\"type\":\"" + std::string(type) + "\",\"object\":" + object + "}\n";
}

std::string name_of(const JsonValue& obj) {
  const JsonValue* n = obj.find({"metadata", "name"});
  return n ? n->text() : "";
}

}  // namespace

std::shared_ptr<PodRegistry::ViewWatch> PodRegistry::start_view_watch(RequestContext& ctx, const TableAsk& table) {
  auto w = std::make_shared<ViewWatch>();
  w->table = table;
  w->stream = ctx.responder.start_stream(200, "application/json");
  w->stream.on_close([this, w] { w->end(store_); });
  if (auto ms = watch_timeout_ms(ctx.request.query())) {
    w->timeout = clock_.new_timer();
    w->timeout->start(*ms, [this, w] { w->end(store_); });
  }
  return w;
}

void PodRegistry::watch_namespaces(RequestContext& ctx) {
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  int64_t from = 0;
  if (auto rv = query_param(ctx.request.query(), "resourceVersion"); rv && !rv->empty()) {
    from = std::strtoll(rv->c_str(), nullptr, 10);
  }
  auto w = start_view_watch(ctx, table);
  auto send = [this, w](std::string_view type, const std::string& object) {
    if (!w->table.wanted) return w->stream.write(event_line(type, object));
    std::string error;
    auto ns = JsonValue::parse(object, &error);
    return !ns || w->stream.write(event_line(type, namespace_table({*ns}, "", clock_.unix_ms(), w->table.row)));
  };
  auto on_events = [this, w, send](const StoreStatus& st, const std::vector<WatchEvent>& events) {
    if (w->ended) return;
    if (!st.ok()) {
      int code = st.code == StoreCode::kCompacted ? 410 : 503;
      send("ERROR", k8s_status_json(code, code == 410 ? "Expired" : "ServiceUnavailable", st.message));
      return w->end(store_);
    }
    for (const auto& e : events) {
      bool deleted = e.type == WatchEvent::Type::kDelete;
      const KeyValue& kv = deleted && e.prev_kv ? *e.prev_kv : e.kv;
      std::string_view type = deleted ? "DELETED" : (e.kv.version == 1 ? "ADDED" : "MODIFIED");
      if (!send(type, with_rv(kv.value, e.kv.mod_revision))) return;
    }
  };
  if (from > 0) {
    w->id = store_.watch(kNamespacePrefix, from + 1, on_events);
    return;
  }
  // No resourceVersion: the namespaces there are now, as ADDED, then their changes.
  RangeOptions all;
  all.prefix = true;
  store_.get(kNamespacePrefix, all, [this, w, send, on_events](RangeResult&& r) {
    if (w->ended) return;
    if (!r.status.ok()) return on_events(r.status, {});
    for (const auto& kv : r.kvs) {
      if (!send("ADDED", with_rv(kv.value, kv.mod_revision))) return;
    }
    w->id = store_.watch(kNamespacePrefix, r.revision + 1, on_events);
  });
}

void PodRegistry::watch_nodes(RequestContext& ctx) {
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  auto w = start_view_watch(ctx, table);
  // Given a resourceVersion (the list's, as kubectl and informers give it),
  // the nodes as they are now are what the client has: only changes follow.
  auto rv = query_param(ctx.request.query(), "resourceVersion");
  bool resumes = rv && !rv->empty() && *rv != "0";
  w->poll = clock_.new_timer();
  auto look = std::make_shared<std::function<void(bool)>>();
  *look = [this, w, again = std::weak_ptr(look)](bool quiet) {
    if (w->ended) return;
    std::map<std::string, std::string> now;
    std::vector<std::pair<std::string_view, const JsonValue*>> changes;
    std::vector<JsonValue> nodes = nodes_ ? nodes_() : std::vector<JsonValue>{};
    for (const auto& n : nodes) {
      std::string name = name_of(n), text = n.dump();
      auto before = w->nodes.find(name);
      if (before == w->nodes.end()) {
        changes.push_back({"ADDED", &n});
      } else if (before->second != text) {
        changes.push_back({"MODIFIED", &n});
      }
      now.emplace(std::move(name), std::move(text));
    }
    std::vector<JsonValue> gone;
    for (const auto& [name, text] : w->nodes) {
      if (now.count(name)) continue;
      std::string error;
      if (auto n = JsonValue::parse(text, &error)) gone.push_back(std::move(*n));
    }
    for (const auto& n : gone) changes.push_back({"DELETED", &n});
    w->nodes = std::move(now);
    if (!quiet) {
      for (const auto& [type, n] : changes) {
        std::string object = w->table.wanted ? node_table({*n}, "", clock_.unix_ms(), w->table.row)
                                             : with_rv(n->dump(), store_.revision());  // (as a list's items)
        if (!w->stream.write(event_line(type, object))) return w->end(store_);         // closed, or its reader cut
      }
    }
    // Only the timer's callback holds this function (and through it the
    // watch), until the watch ends and stops the timer.
    w->poll->start(kNodePollMs, [look = again.lock()] { (*look)(false); });
  };
  (*look)(resumes);
}

}  // namespace uvsched
