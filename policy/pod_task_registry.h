// The pod tasks the scheduler follows (the seed's podtask registry), one per
// pod, found by pod or by task id. A task id names its pod
// ("pod.<namespace>.<name>.<12 hex>"; namespaces have no dots), so one map
// keyed by pod serves both lookups, and a task keeps only the id's random
// part: at 100k pods, a second map or the ids themselves would cost more
// than the tasks. Agents' hostnames are interned for the same reason, and
// each task shares one heap block with its pod's key, held in a flat hash
// set of pointers (~70 B a task; a std::unordered_set added a node and a
// bucket, ~40 B more; an unordered_map<std::string, PodTask> took ~125 B in
// three allocations). The blocks never move: a PodTask* stays valid until its
// pod's task is replaced or erased.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "policy/label_sets.h"
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
  // The agent's number if any task ever named it.
  std::optional<uint32_t> agent_index(std::string_view hostname) const {
    auto it = agent_ids_.find(hostname);
    return it == agent_ids_.end() ? std::nullopt : std::optional<uint32_t>(it->second);
  }
  const std::string& agent_name(uint32_t agent) const { return agent_names_.at(agent); }
  const std::string& agent_of(const PodTask& task) const { return agent_name(task.agent); }
  const Labels& labels_of(const PodTask& task) const { return label_sets_.get(task.labels); }
  // Distinct label sets the tasks' pods have.
  size_t label_sets() const { return label_sets_.size(); }

  PodTask* by_id(std::string_view task_id);
  const PodTask* by_id(std::string_view task_id) const { return const_cast<PodTaskRegistry*>(this)->by_id(task_id); }
  PodTask* by_pod(std::string_view pod_key);
  const PodTask* by_pod(std::string_view pod_key) const { return const_cast<PodTaskRegistry*>(this)->by_pod(pod_key); }
  bool has_pod(std::string_view pod_key) const { return tasks_.find(pod_key) != tasks_.end(); }
  // Adds (or replaces) the task of `pod_key`; its serial is cut to the 48 bits an id holds.
  // `labels` are its pod's (for the inter-pod filters to count); null keeps
  // those of the task it replaces (none for a new one).
  PodTask& add(std::string_view pod_key, PodTask task, const Labels* labels = nullptr);
  void erase_pod(std::string_view pod_key);

  // Told of each change to the placed pods the inter-pod filters count: a
  // task counted on its agent (added, or moved there) or no longer counted
  // there (erased, moved away, or marked deleted: a spread counts no pod
  // being deleted), with its pod's label set. One observer; a registry made
  // anew has none.
  enum class PlacedChange : uint8_t { kCounted, kUncounted };
  using PlacedObserver = std::function<void(std::string_view pod_key, uint32_t label_set, PlacedChange)>;
  void observe_placed(PlacedObserver observer) { observer_ = std::move(observer); }
  const Labels& label_set(uint32_t set) const { return label_sets_.get(set); }
  uint64_t label_set_born(uint32_t set) const { return label_sets_.born(set); }
  size_t size() const { return tasks_.size(); }
  // What all the tasks hold, kept as they come and go (the status page asks
  // every few seconds; summing 100k tasks each time took ~5 ms of the loop).
  double cpus_held() const { return cpus_held_; }
  double mem_mib_held() const { return mem_mib_held_; }
  // The tasks on one agent (preemption weighs them), in no particular order.
  std::vector<std::pair<std::string_view, const PodTask*>> on_agent(uint32_t agent) const;

  // A task preemption may take: not being deleted, not evicted already, not
  // a pod group's member (a gang is kept whole). Its flags are set through
  // these, so the index below stays true.
  static bool is_victim(const PodTask& t) { return !t.deleted && !t.evicted && !t.grouped; }
  void mark_deleted(std::string_view pod_key, PodTask& task);  // topology spread counts it no more: told
  void mark_evicted(PodTask& task);
  // The lowest priority of any possible victim; nullopt when there is none.
  std::optional<int32_t> lowest_victim_priority() const {
    return victims_.empty() ? std::nullopt : std::optional<int32_t>(victims_.begin()->first);
  }
  // Calls fn(agent) for each agent with a possible victim below `priority`,
  // each once, those with the lowest priorities first, until fn returns
  // false. Preemption looks only at these: on a full cluster, most agents
  // have no victim left for a pod (theirs were evicted, or are its equals),
  // and walking every agent to find that out took milliseconds.
  template <typename Fn>
  void for_each_agent_with_victims_below(int32_t priority, Fn&& fn) const {
    absl::flat_hash_set<uint32_t> seen;  // (only filled when more than one priority is below)
    bool several = victims_.size() > 1 && std::next(victims_.begin())->first < priority;
    for (const auto& [p, agents] : victims_) {
      if (p >= priority) return;
      for (const auto& [agent, n] : agents) {
        if (several && !seen.insert(agent).second) continue;
        if (!fn(agent)) return;
      }
    }
  }

 private:
  // A task and its pod's key in one block.
  struct Slot {
    PodTask task;
    uint32_t key_size = 0;
    uint32_t agent_pos = 0;  // its place in by_agent_'s list for its agent (in the padding: a Slot stays 48 B)
    std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_size}; }
  };
  struct SlotFree {
    void operator()(Slot* s) const;
  };
  using SlotPtr = std::unique_ptr<Slot, SlotFree>;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const { return std::hash<std::string_view>{}(k); }
    size_t operator()(const SlotPtr& s) const { return (*this)(s->key()); }
  };
  struct Eq {
    using is_transparent = void;
    static std::string_view k(std::string_view v) { return v; }
    static std::string_view k(const SlotPtr& s) { return s->key(); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return k(a) == k(b);
    }
  };
  using Set = absl::flat_hash_set<SlotPtr, Hash, Eq>;
  static SlotPtr make_slot(std::string_view pod_key, PodTask task);
  void count_victim(const PodTask& t, int delta);

 public:
  // Iterates (pod key, task) pairs.
  class Iterator {
   public:
    explicit Iterator(Set::const_iterator it) : it_(it) {}
    std::pair<std::string_view, const PodTask&> operator*() const { return {(*it_)->key(), (*it_)->task}; }
    Iterator& operator++() {
      ++it_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return it_ == o.it_; }

   private:
    Set::const_iterator it_;
  };
  Iterator begin() const { return Iterator(tasks_.begin()); }
  Iterator end() const { return Iterator(tasks_.end()); }

 private:
  Set tasks_;  // by pod key
  // Each agent's tasks, a list each (a task knows its place, so it leaves in
  // O(1)): a hash set per agent took ~3 MB at 5,000 agents and 100k tasks.
  absl::flat_hash_map<uint32_t, std::vector<Slot*>> by_agent_;
  void link_agent(Slot* s);    // under s->task.agent
  void unlink_agent(Slot* s);  // from under s->task.agent
  // How many possible victims (is_victim) each agent has, by their priority.
  std::map<int32_t, absl::flat_hash_map<uint32_t, uint32_t>> victims_;
  double cpus_held_ = 0, mem_mib_held_ = 0;
  std::vector<std::string> agent_names_;
  absl::flat_hash_map<std::string, uint32_t, Hash, Eq> agent_ids_;  // looked up by string_view, no copy
  LabelSets label_sets_;
  PlacedObserver observer_;
  void tell(std::string_view pod_key, uint32_t set, PlacedChange change) const {
    if (observer_) observer_(pod_key, set, change);
  }
};

}  // namespace uvsched
