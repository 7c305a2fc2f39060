// kubectl get events -w: events are made from the pods (pod_events.h), so
// their watch is the pods' store watch (prefix_watch.h) seen through
// pod_events. Each watcher keeps what it last sent of each event (by name),
// to send an event when it appears (ADDED), when its message or time changes
// (MODIFIED) and when its pod goes or no longer stands for it (DELETED), and
// nothing when a pod's change leaves its events as they were (a task's
// TASK_RUNNING, say). A watcher that resumes from a resourceVersion (kubectl
// lists first) is sent a pod's events again, once, the first time that pod
// changes after it: the store cannot be read at a past revision, so what the
// client already has is not known, and an event sent twice beats one lost.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "handlers/pods/pod_events.h"
#include "handlers/pods/pod_registry.h"
#include "handlers/pods/prefix_watch.h"
#include "handlers/pods/stored_object.h"

namespace uvsched {
namespace {

// Pod key -> its events as last sent to one watcher: reason -> a hash of
// what of the event counts (its pod's resourceVersion, which any change of
// the pod moves, does not). A hash, not the event: a watcher of 100k pods
// keeps this much.
using SentEvents = std::map<std::string, std::map<std::string, size_t>>;

size_t what_counts(JsonValue e) {
  if (JsonValue* involved = e.get("involvedObject")) involved->erase("resourceVersion");
  return std::hash<std::string>{}(e.dump());
}

// What a DELETED event carries of an event its pod no longer makes: enough
// for a client to know which it was (its name, namespace, pod and reason).
JsonValue gone_event(const std::string& pod_key, const std::string& reason) {
  std::string_view rest = std::string_view(pod_key).substr(std::string_view(PodRegistry::kPodPrefix).size());
  JsonValue pod = JsonValue::object();
  JsonValue& meta = pod.ensure({"metadata"});
  meta.set("namespace", JsonValue::string(std::string(rest.substr(0, rest.find('/')))));
  meta.set("name", JsonValue::string(std::string(rest.substr(rest.find('/') + 1))));
  return pod_event(pod, "", reason, "", "");
}

// The pod's events now (none when it is gone) against those last sent: what
// changed is sent. A deleted pod's events are read from what it was, so a
// watcher that resumed and never saw the pod change still hears them go.
bool send_event_changes(SentEvents& sent, const std::vector<FieldRequirement>& fields, const KeyValue& kv,
                        StoredChange change, const WatchWrite& send) {
  bool deleted = change == StoredChange::kDeleted;
  std::map<std::string, JsonValue> events;  // reason -> the event, as the pod (or what it was) makes it
  if (std::optional<JsonValue> pod = parse_stored(kv)) {
    for (JsonValue& e : pod_events(*pod)) {
      bool selected = std::all_of(fields.begin(), fields.end(), [&](const FieldRequirement& f) {
        return (event_field(e, f.key) == f.value) != f.negate;
      });
      if (selected) events.emplace(e.str("reason"), std::move(e));
    }
  }
  auto known = sent.find(kv.key);
  std::map<std::string, size_t> before;
  if (known != sent.end()) {
    before = std::move(known->second);
    sent.erase(known);
  } else if (deleted) {
    for (const auto& [reason, e] : events) before[reason] = 0;  // unknown to this watcher: sent as gone anyway
  }
  std::map<std::string, size_t> now;
  if (!deleted) {
    for (const auto& [reason, e] : events) {
      size_t hash = now[reason] = what_counts(e);
      auto was = before.find(reason);
      if (was != before.end() && was->second == hash) continue;
      if (!send(was == before.end() ? "ADDED" : "MODIFIED", e.dump(), &e)) return false;
    }
  }
  for (const auto& [reason, hash] : before) {
    if (now.count(reason)) continue;
    auto last = events.find(reason);
    JsonValue gone = last != events.end() ? std::move(last->second) : gone_event(kv.key, reason);
    if (!send("DELETED", gone.dump(), &gone)) return false;
  }
  if (!now.empty()) sent[kv.key] = std::move(now);
  return true;
}

}  // namespace

void PodRegistry::watch_events(RequestContext& ctx, const std::string& ns, std::vector<FieldRequirement> fields) {
  auto sent = std::make_shared<SentEvents>();
  auto translate = [sent, fields = std::move(fields)](const KeyValue& kv, StoredChange change, const WatchWrite& send) {
    return send_event_changes(*sent, fields, kv, change, send);
  };
  auto row = [](const JsonValue& event, int64_t now_ms, RowObject r) { return event_table({event}, "", now_ms, r); };
  watch_prefix(store_, clock_, ctx, std::string(kPodPrefix) + (ns.empty() ? "" : ns + "/"), row, translate);
}

}  // namespace uvsched
