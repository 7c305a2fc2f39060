// Keeps the values under a key prefix as the store has them, as a
// Kubernetes informer keeps its cache: one read of them all, then the
// store's watch from that revision; a lost watch (a compacted history, a
// store that went away) reads them all again a second later. `on_change`
// hears each key that changed (null value: deleted), and `on_synced` each
// completed read of them all (what was gone meanwhile was reported first).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

class PrefixInformer {
 public:
  using OnChange = std::function<void(const std::string& key, const std::string* value)>;
  PrefixInformer(Store& store, Clock& clock, std::string prefix, OnChange on_change);
  ~PrefixInformer();
  PrefixInformer(const PrefixInformer&) = delete;
  PrefixInformer& operator=(const PrefixInformer&) = delete;

  void start();
  void stop();  // forgets nothing: start() reads again and reports the difference
  void set_on_synced(std::function<void()> cb) { on_synced_ = std::move(cb); }
  bool synced() const { return synced_; }
  // Read in full at least once: values() may be stale (a lost watch being
  // restored) but is never empty for want of a first read.
  bool loaded() const { return loaded_; }
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  void load();

  Store& store_;
  std::string prefix_;
  OnChange on_change_;
  std::function<void()> on_synced_;
  std::unique_ptr<Timer> retry_;
  std::map<std::string, std::string> values_;
  Store::WatchId watch_ = 0;
  bool watching_ = false;
  bool synced_ = false;
  bool loaded_ = false;
  uint64_t generation_ = 0;  // a read answered after stop() is dropped
};

}  // namespace uvsched
