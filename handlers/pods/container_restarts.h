// A pod's containers as they restart: uvsched runs a pod's containers as one
// Mesos task, and starts that task again (placed anew) when it fails or is
// lost, so a restart is the whole pod's. Its count lives where kubectl reads
// it, status.containerStatuses[].restartCount, the same for every container,
// and a crash-loop back-off shows there as a kubelet shows it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "handlers/json_value.h"

namespace uvsched {

// How many times the pod's task was started again: the most any container counts.
int64_t restart_count(const JsonValue& status);

// The pod's containers, its task ended and not started again yet: one status
// per container of its spec, counting `restarts`, each waiting for
// `waiting_reason` (with `message`) when one is given.
void write_restarting(JsonValue& pod, int64_t restarts, std::string_view waiting_reason, std::string_view message);

// The containers once the task runs again, after the agent's report was
// merged: its containers keep the pod's count (an agent counts from 0 for
// each task), and those still said to back off are running since `now`.
void keep_restarts(JsonValue& status, int64_t restarts, const std::string& now_rfc3339);

// A back-off as Go prints a time.Duration, as a kubelet's message says it: "10s", "1m20s", "5m0s".
std::string go_duration(uint64_t ms);

inline constexpr std::string_view kCrashLoopBackOff = "CrashLoopBackOff";

}  // namespace uvsched
