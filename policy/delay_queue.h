// Where unschedulable pods wait: ordered by due time, one entry per pod.
// Each failed attempt backs a pod off 1 s, doubling to 60 s; an offer
// listener can wake a pod early (breakout); an updated pod keeps its place
// (KeepExisting) unless told otherwise (ReplaceExisting). Pure: times are
// passed in.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace uvsched {

class PodBackoff {
 public:
  struct Settings {
    uint64_t initial_ms = 1'000;
    uint64_t max_ms = 60'000;
    uint64_t forget_after_ms = 120'000;  // an entry idle this long starts over
  };
  explicit PodBackoff(Settings s) : s_(s) {}
  PodBackoff() : PodBackoff(Settings{}) {}

  // The delay before the pod's next attempt, and counts this failure.
  uint64_t next_delay(const std::string& pod, uint64_t now);
  void reset(const std::string& pod) { entries_.erase(pod); }
  // Drops entries idle for forget_after_ms (gc). A pass walks every entry,
  // so it runs at most once a second however often it is called.
  void gc(uint64_t now);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint64_t delay = 0;
    uint64_t last = 0;
  };
  Settings s_;
  std::map<std::string, Entry> entries_;
  uint64_t next_gc_ = 0;
};

// A kubelet's back-off before it restarts a crashed container: 10 s,
// doubling to 5 min, starting over once it has not crashed for twice that.
inline constexpr PodBackoff::Settings kCrashLoopBackoff{
    .initial_ms = 10'000, .max_ms = 300'000, .forget_after_ms = 600'000};

class DelayQueue {
 public:
  enum class Mode { kKeepExisting, kReplaceExisting };
  // Queues `pod` to be due at `due`. An already queued pod keeps its time
  // (kKeepExisting) or takes the new one (kReplaceExisting).
  void add(const std::string& pod, uint64_t due, Mode mode = Mode::kKeepExisting);
  // Makes a waiting pod due now (an offer that may fit it arrived).
  bool breakout(const std::string& pod, uint64_t now);
  bool remove(const std::string& pod);
  // Pops every pod due at or before `now`, earliest first.
  std::vector<std::string> pop_due(uint64_t now);
  std::optional<uint64_t> next_due() const;
  // The first `limit` waiting pods in the order they will be tried, with
  // when each is due.
  std::vector<std::pair<std::string, uint64_t>> in_order(size_t limit) const;
  // A waiting pod's place in that order, from 1; nullopt when it is not
  // queued or more than `limit` are before it (the walk stops there).
  std::optional<size_t> position(const std::string& pod, size_t limit) const;
  bool contains(const std::string& pod) const { return due_of_.count(pod) != 0; }
  // When a waiting pod is due.
  std::optional<uint64_t> due(const std::string& pod) const {
    auto it = due_of_.find(pod);
    return it == due_of_.end() ? std::nullopt : std::optional<uint64_t>(it->second.first);
  }
  size_t size() const { return due_of_.size(); }

 private:
  std::map<std::pair<uint64_t, uint64_t>, std::string> by_due_;  // (due, seq) -> pod: FIFO among equals
  std::map<std::string, std::pair<uint64_t, uint64_t>> due_of_;
  uint64_t seq_ = 0;
};

}  // namespace uvsched
