// The pod tasks the scheduler follows (the seed's podtask registry), one per
// pod, found by pod or by task id. A task id names its pod
// ("pod.<namespace>.<name>.<12 hex>"; namespaces have no dots), so one map
// keyed by pod serves both lookups: at 100k pods a second map from ids to
// pods would cost more than the tasks themselves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "policy/pod_task.h"

namespace uvsched {

class PodTaskRegistry {
 public:
  // A fresh id for a task of pod "ns/name"; `random` supplies its 48-bit suffix.
  static std::string make_id(std::string_view pod_key, uint64_t random);
  // The pod ("ns/name") an id names; nullopt for ids not made by make_id.
  static std::optional<std::string> pod_of(std::string_view task_id);

  PodTask* by_id(std::string_view task_id);
  PodTask* by_pod(const std::string& pod_key);
  bool has_pod(const std::string& pod_key) const { return tasks_.count(pod_key) != 0; }
  // Adds (or replaces) the task of task.pod_key.
  PodTask& add(PodTask task);
  void erase_pod(const std::string& pod_key) { tasks_.erase(pod_key); }
  size_t size() const { return tasks_.size(); }

  auto begin() const { return tasks_.begin(); }
  auto end() const { return tasks_.end(); }

 private:
  std::unordered_map<std::string, PodTask> tasks_;  // pod key -> its task
};

}  // namespace uvsched
