#include "handlers/pods/namespace_pods.h"

#include <set>

#include "handlers/json_value.h"
#include "handlers/pods/pod_registry.h"
#include "reactor/log.h"

namespace uvsched {
namespace {

// Namespace and name of a pod's key (/registry/pods/<ns>/<name>).
std::pair<std::string, std::string> split_key(std::string_view key) {
  std::string_view rest = key.substr(std::string_view(PodRegistry::kPodPrefix).size());
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return {std::string(rest), ""};
  return {std::string(rest.substr(0, slash)), std::string(rest.substr(slash + 1))};
}

BudgetPodView view_of(const std::string& value) {
  std::string error;
  auto pod = JsonValue::parse(value, &error);
  return pod && pod->is_object() ? budget_pod_view(*pod) : BudgetPodView{};
}

}  // namespace

NamespacePods::NamespacePods(Store& store, Clock& clock, OnChange on_change)
    : store_(store), on_change_(std::move(on_change)), rewatch_(clock.new_timer()) {}

NamespacePods::~NamespacePods() { stop(); }

void NamespacePods::stop() {
  ++generation_;
  rewatch_->stop();
  if (watch_) store_.cancel_watch(watch_);
  watch_ = 0;
  namespaces_.clear();
  unread_.clear();
}

void NamespacePods::follow(const std::string& ns) {
  if (namespaces_.count(ns)) return;
  namespaces_[ns];
  // The watch first: the read, made after it, misses nothing that follows it.
  if (!watch_ && !rewatch_->active()) watch();
  read(ns);
}

void NamespacePods::unfollow(const std::string& ns) {
  namespaces_.erase(ns);
  if (namespaces_.empty()) {
    ++generation_;  // its read, if still out, is dropped
    rewatch_->stop();
    if (watch_) store_.cancel_watch(watch_);
    watch_ = 0;
  }
}

const std::map<std::string, NamespacePods::Pod>* NamespacePods::pods(const std::string& ns) const {
  auto it = namespaces_.find(ns);
  return it != namespaces_.end() && it->second.read ? &it->second.pods : nullptr;
}

void NamespacePods::watch() {
  watch_ = store_.watch(
      PodRegistry::kPodPrefix, 0,
      [this, gen = generation_](const StoreStatus& st, const std::vector<WatchEvent>& events) {
        if (gen != generation_) return;
        if (!st.ok()) {
          // Read every namespace again once watching again: what changed meanwhile is found then.
          log_warn("namespace_pods_watch_ended").kv("error", st.message).kv("then", "watch and read again in 1 s");
          watch_ = 0;
          rewatch_->start(1000, [this] {
            if (namespaces_.empty()) return;
            watch();
            unread_.clear();
            for (auto& [ns, state] : namespaces_) read(ns);
          });
          return;
        }
        std::set<std::string> changed;
        for (const auto& e : events) {
          apply(e);
          changed.insert(split_key(e.kv.key).first);
        }
        for (const auto& ns : changed) {
          if (pods(ns)) on_change_(ns);
        }
      },
      /*deleted_values=*/false);
}

void NamespacePods::apply(const WatchEvent& e) {
  auto [ns, name] = split_key(e.kv.key);
  auto it = namespaces_.find(ns);
  if (it == namespaces_.end() || name.empty()) return;
  auto& pods = it->second.pods;
  auto p = pods.find(name);
  if (p != pods.end() && p->second.revision >= e.kv.mod_revision) return;
  if (e.type == WatchEvent::Type::kDelete) {
    if (it->second.reading > 0) {
      pods[name] = Pod{e.kv.mod_revision, true, {}};
    } else {
      pods.erase(name);
    }
    return;
  }
  pods[name] = Pod{e.kv.mod_revision, false, view_of(e.kv.value)};
}

void NamespacePods::read(const std::string& ns) {
  ++namespaces_[ns].reading;
  RangeOptions all;
  all.prefix = true;
  store_.get(PodRegistry::kPodPrefix + ns + "/", all, [this, ns, gen = generation_](RangeResult&& r) {
    if (gen != generation_) return;
    auto it = namespaces_.find(ns);
    if (it == namespaces_.end()) return;  // unfollowed meanwhile
    --it->second.reading;
    if (!r.status.ok()) {
      log_warn("namespace_pods_unread").kv("namespace", ns).kv("error", r.status.message).kv("then", "retry in 1 s");
      unread_.insert(ns);
      if (!rewatch_->active()) {
        rewatch_->start(1000, [this] {
          if (!watch_ && !namespaces_.empty()) watch();
          std::set<std::string> again = std::move(unread_);
          unread_.clear();
          for (const auto& n : again) {
            if (namespaces_.count(n)) read(n);
          }
        });
      }
      return;
    }
    auto& pods = it->second.pods;
    std::set<std::string> listed;
    for (const auto& kv : r.kvs) {
      auto [key_ns, name] = split_key(kv.key);
      listed.insert(name);
      auto p = pods.find(name);
      if (p != pods.end() && p->second.revision >= kv.mod_revision) continue;  // the watch brought newer
      pods[name] = Pod{kv.mod_revision, false, view_of(kv.value)};
    }
    // Not listed: deleted by the read's revision, unless the watch saw it
    // (again) since. Deletions remembered while it was out are done with.
    for (auto p = pods.begin(); p != pods.end();) {
      bool stale = !listed.count(p->first) && p->second.revision <= r.revision;
      bool forgettable = p->second.gone && it->second.reading == 0;
      p = stale || forgettable ? pods.erase(p) : std::next(p);
    }
    it->second.read = true;
    on_change_(ns);
  });
}

}  // namespace uvsched
