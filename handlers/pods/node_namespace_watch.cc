// Watches of nodes and namespaces (kubectl get nodes -w, get namespaces -w,
// an informer's watch after its list), which were answered with a list that
// kubectl's watch cannot decode. Namespaces are stored: watched as the
// registry's other stored kinds are (prefix_watch.h). Nodes are a view of the
// agents, made when read: each second the watch looks whether the agents
// changed (AgentHub::nodes_version), and only then reads the view again and
// sends what changed, as the kubelet's heartbeats make a node's watch tick.
#include <optional>

#include "handlers/pods/k8s_request.h"
#include "handlers/pods/pod_registry.h"
#include "handlers/pods/pod_table.h"
#include "handlers/pods/prefix_watch.h"
#include "handlers/pods/stored_object.h"
#include "reactor/url.h"

namespace uvsched {

struct PodRegistry::ViewWatch {
  ResponseStream stream;
  std::unique_ptr<Timer> timeout;
  std::unique_ptr<Timer> poll;
  TableAsk table;
  std::map<std::string, std::string> nodes;  // name -> the node as last sent
  std::optional<uint64_t> version;           // of the nodes last read (AgentHub::nodes_version)
  bool ended = false;

  void end() {
    if (ended) return;
    ended = true;
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

void PodRegistry::watch_namespaces(RequestContext& ctx) {
  watch_prefix(store_, clock_, ctx, kNamespacePrefix, [](const JsonValue& ns, int64_t now_ms, RowObject row) {
    return namespace_table({ns}, "", now_ms, row);
  });
}

void PodRegistry::watch_nodes(RequestContext& ctx) {
  TableAsk table = table_ask(ctx.request);
  if (!table.error.empty()) return ctx.reply(k8s_error(400, "BadRequest", table.error));
  auto w = std::make_shared<ViewWatch>();
  w->table = table;
  w->stream = ctx.responder.start_stream(200, "application/json");
  w->stream.on_close([w] { w->end(); });
  if (auto ms = watch_timeout_ms(ctx.request.query())) {
    w->timeout = clock_.new_timer();
    w->timeout->start(*ms, [w] { w->end(); });
  }
  // Given a resourceVersion (the list's, as kubectl and informers give it),
  // the nodes as they are now are what the client has: only changes follow.
  auto rv = query_param(ctx.request.query(), "resourceVersion");
  bool resumes = rv && !rv->empty() && *rv != "0";
  w->poll = clock_.new_timer();
  auto look = std::make_shared<std::function<void(bool)>>();
  *look = [this, w, again = std::weak_ptr(look)](bool quiet) {
    if (w->ended) return;
    // Nothing changed since the last look: nothing is read or compared (a
    // watcher of 5,000 nodes rebuilt them all each second).
    std::optional<uint64_t> version = nodes_version_ ? std::optional(nodes_version_()) : std::nullopt;
    if (version && version == w->version) {
      w->poll->start(kNodePollMs, [look = again.lock()] { (*look)(false); });
      return;
    }
    w->version = version;
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
        if (!w->stream.write(event_line(type, object))) return w->end();               // closed, or its reader cut
      }
    }
    // Only the timer's callback holds this function (and through it the
    // watch), until the watch ends and stops the timer.
    w->poll->start(kNodePollMs, [look = again.lock()] { (*look)(false); });
  };
  (*look)(resumes);
}

}  // namespace uvsched
