#include "storage/prefix_informer.h"

#include <set>

#include "reactor/log.h"

namespace uvsched {

PrefixInformer::PrefixInformer(Store& store, Clock& clock, std::string prefix, OnChange on_change)
    : store_(store), prefix_(std::move(prefix)), on_change_(std::move(on_change)), retry_(clock.new_timer()) {}

PrefixInformer::~PrefixInformer() { stop(); }

void PrefixInformer::start() {
  stop();
  load();
}

void PrefixInformer::stop() {
  ++generation_;
  retry_->stop();
  if (watching_) store_.cancel_watch(watch_);
  watching_ = false;
  synced_ = false;
}

void PrefixInformer::load() {
  RangeOptions all;
  all.prefix = true;
  store_.get(prefix_, all, [this, gen = generation_](RangeResult&& r) {
    if (gen != generation_) return;
    if (!r.status.ok()) {
      log_warn("informer_load_failed").kv("prefix", prefix_).kv("error", r.status.message);
      retry_->start(1000, [this] { load(); });
      return;
    }
    std::set<std::string> listed;
    for (auto& kv : r.kvs) {
      listed.insert(kv.key);
      auto it = values_.find(kv.key);
      if (it != values_.end() && it->second == kv.value) continue;
      values_[kv.key] = kv.value;
      on_change_(kv.key, &values_[kv.key]);
    }
    for (auto it = values_.begin(); it != values_.end();) {
      if (listed.count(it->first)) {
        ++it;
        continue;
      }
      std::string key = it->first;
      it = values_.erase(it);
      on_change_(key, nullptr);
    }
    watch_ = store_.watch(
        prefix_, r.revision + 1, [this, gen](const StoreStatus& st, const std::vector<WatchEvent>& events) {
          if (gen != generation_) return;
          if (!st.ok()) {
            log_warn("informer_watch_ended").kv("prefix", prefix_).kv("error", st.message).kv("then", "reload");
            watching_ = false;
            synced_ = false;
            retry_->start(1000, [this] { load(); });
            return;
          }
          for (const auto& e : events) {
            if (e.type == WatchEvent::Type::kDelete) {
              if (values_.erase(e.kv.key)) on_change_(e.kv.key, nullptr);
            } else {
              values_[e.kv.key] = e.kv.value;
              on_change_(e.kv.key, &values_[e.kv.key]);
            }
          }
        });
    watching_ = true;
    synced_ = loaded_ = true;
    if (on_synced_) on_synced_();
  });
}

}  // namespace uvsched
