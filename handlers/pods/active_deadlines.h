// spec.activeDeadlineSeconds, as a kubelet enforces it: a pod active longer
// than that since its status.startTime is failed (reason DeadlineExceeded),
// its task killed, whatever its restart policy. Here the scheduler does it,
// since uvsched's agents run tasks, not pods. startTime is stamped when a pod
// is first bound and kept through its restarts, so the deadline bounds all
// the time a pod is active, as it does on a kubelet.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "handlers/json_value.h"

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

}  // namespace uvsched
