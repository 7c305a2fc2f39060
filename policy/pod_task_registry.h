// The pod tasks the scheduler follows (the seed's podtask registry), one per
// pod, found by pod or by task id. A task id names its pod
// ("pod.<namespace>.<name>.<12 hex>"; namespaces have no dots), so one map
// keyed by pod serves both lookups, and a task keeps only the id's random
// part: at 100k pods, a second map or the ids themselves would cost more
// than the tasks. Agents' hostnames are interned for the same reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "policy/pod_task.h"

namespace uvsched {

class PodTaskRegistry {
 public:
  // The id of a task of pod "ns/name" whose random part is `serial` (48 bits kept).
  static std::string make_id(std::string_view pod_key, uint64_t serial);
  // The pod ("ns/name") an id names; nullopt for ids not made by make_id.
  static std::optional<std::string> pod_of(std::string_view task_id);
  // The random part of an id made by make_id; nullopt otherwise.
  static std::optional<uint64_t> serial_of(std::string_view task_id);
  static std::string id_of(std::string_view pod_key, const PodTask& task) { return make_id(pod_key, task.serial); }

  uint32_t intern_agent(std::string_view hostname);
  const std::string& agent_name(uint32_t agent) const { return agent_names_.at(agent); }
  const std::string& agent_of(const PodTask& task) const { return agent_name(task.agent); }

  PodTask* by_id(std::string_view task_id);
  PodTask* by_pod(const std::string& pod_key);
  bool has_pod(const std::string& pod_key) const { return tasks_.count(pod_key) != 0; }
  // Adds (or replaces) the task of `pod_key`; its serial is cut to the 48 bits an id holds.
  PodTask& add(const std::string& pod_key, PodTask task);
  void erase_pod(const std::string& pod_key) { tasks_.erase(pod_key); }
  size_t size() const { return tasks_.size(); }

  auto begin() const { return tasks_.begin(); }
  auto end() const { return tasks_.end(); }

 private:
  std::unordered_map<std::string, PodTask> tasks_;  // pod key -> its task
  std::vector<std::string> agent_names_;
  std::unordered_map<std::string, uint32_t> agent_ids_;
};

}  // namespace uvsched
