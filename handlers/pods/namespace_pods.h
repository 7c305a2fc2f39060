// The pods of chosen namespaces, each as a disruption budget reads it
// (BudgetPodView), kept as an informer keeps its cache: one read of the
// namespace, then the store's watch on the pods, each change parsed once.
// So a budget's status is computed again in memory when a pod changes, not
// by reading and parsing its namespace's pods from the store every time
// (thousands of pods, changing many times a second while they are placed).
// Only the namespaces followed are kept, and the pods are watched only while
// one is.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "handlers/pods/disruption_budget_objects.h"
#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

class NamespacePods {
 public:
  // A followed namespace's pods changed, or were read in full (again).
  using OnChange = std::function<void(const std::string& ns)>;

  NamespacePods(Store& store, Clock& clock, OnChange on_change);
  ~NamespacePods();
  NamespacePods(const NamespacePods&) = delete;
  NamespacePods& operator=(const NamespacePods&) = delete;

  void follow(const std::string& ns);  // read now, then kept
  void unfollow(const std::string& ns);
  void stop();  // forgets everything

  struct Pod {
    int64_t revision = 0;  // of what is known of it: a change no newer is stale
    bool gone = false;     // deleted while its namespace was being read (so that read cannot bring it back)
    BudgetPodView view;
  };
  // The namespace's pods by name (those `gone` are not there), or nullptr
  // until its first read is in.
  const std::map<std::string, Pod>* pods(const std::string& ns) const;

 private:
  struct Namespace {
    bool read = false;  // read in full at least once
    int reading = 0;    // reads out: deletions are remembered until none is
    std::map<std::string, Pod> pods;
  };
  void watch();
  void read(const std::string& ns);
  void apply(const WatchEvent& e);

  Store& store_;
  OnChange on_change_;
  std::unique_ptr<Timer> rewatch_;
  std::map<std::string, Namespace> namespaces_;
  std::set<std::string> unread_;  // whose read failed: read again with the next try
  Store::WatchId watch_ = 0;
  uint64_t generation_ = 0;  // answers for what was stopped or unfollowed are dropped
};

}  // namespace uvsched
