// Pods each due at a time of its own on the clock, and told of when it
// comes: a pod's active deadline, the end of a NoExecute taint's toleration.
// One timer for all, armed for the earliest.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "policy/delay_queue.h"
#include "reactor/clock.h"

namespace uvsched {

class PodAlarms {
 public:
  using Due = std::function<void(const std::string& pod)>;
  PodAlarms(Clock& clock, Due due);
  // The pod ("ns/name") is due at `unix_ms` (wall clock), which replaces any
  // time it had; a time already past is due at once.
  void at_unix(const std::string& pod, int64_t unix_ms);
  // The same, `delay_ms` from now.
  void after(const std::string& pod, uint64_t delay_ms);
  // When the pod is due (monotonic), if it is waited for.
  std::optional<uint64_t> due_at(const std::string& pod) const;
  void forget(const std::string& pod);
  void clear();
  size_t size() const { return due_.size(); }

 private:
  void arm();
  void fire();

  Clock& clock_;
  Due told_;
  DelayQueue due_;  // monotonic due times
  std::unique_ptr<Timer> timer_;
};

}  // namespace uvsched
