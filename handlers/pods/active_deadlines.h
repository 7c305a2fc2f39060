// spec.activeDeadlineSeconds, as a kubelet enforces it: a pod active longer
// than that since its status.startTime is failed (reason DeadlineExceeded),
// its task killed, whatever its restart policy. Here the scheduler does it,
// since uvsched's agents run tasks, not pods. startTime is stamped when a pod
// is first bound and kept through its restarts, so the deadline bounds all
// the time a pod is active, as it does on a kubelet.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "handlers/json_value.h"
#include "policy/delay_queue.h"
#include "reactor/clock.h"

namespace uvsched {

inline constexpr std::string_view kDeadlineExceeded = "DeadlineExceeded";
inline constexpr std::string_view kDeadlineExceededMessage =
    "Pod was active on the node longer than the specified deadline";

// When the pod's deadline passes, in Unix milliseconds: its startTime plus
// its activeDeadlineSeconds; nullopt unless it has both.
std::optional<int64_t> active_deadline_unix_ms(const JsonValue& pod);
// Stamps status.startTime unless the pod has one: the deadline counts from
// the pod's first start, not from each restart.
void stamp_start_time(JsonValue& pod, const std::string& now_rfc3339);
// The pod failed as a kubelet fails it past its deadline: phase Failed,
// the reason and message, its containers terminated and not ready.
void fail_past_deadline(JsonValue& pod, const std::string& now_rfc3339);

// The pods whose deadlines are followed, each due at its own time on the
// clock: `expired` is told of each pod as its deadline passes, once (a pod
// tracked again after that is told again when its new time comes).
class ActiveDeadlines {
 public:
  using Expired = std::function<void(const std::string& pod)>;
  ActiveDeadlines(Clock& clock, Expired expired);
  // The pod ("ns/name") is due at `deadline_unix_ms` (wall clock), which
  // replaces any time it had; a deadline already past is due at once.
  void track(const std::string& pod, int64_t deadline_unix_ms);
  void forget(const std::string& pod);
  void clear();
  size_t size() const { return due_.size(); }

 private:
  void arm();
  void fire();

  Clock& clock_;
  Expired expired_;
  DelayQueue due_;  // monotonic due times
  std::unique_ptr<Timer> timer_;
};

}  // namespace uvsched
