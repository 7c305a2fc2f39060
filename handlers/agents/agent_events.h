// The scheduler's events on an agent's stream (SPEC §4), one JSON object per
// line: the ones the pod scheduler sends, LAUNCH and KILL. LAUNCH is made in
// two parts because its pod is known only once the binding is stored: the
// head when the pod is placed, the whole event from the head and the stored
// pod's text (no second encoding of the pod).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "policy/offer_registry.h"

namespace uvsched {

// `{"type":"LAUNCH","task":{...,"pod":` : everything up to the pod. The
// task's resources are its cpus and memory and, as a Mesos TaskInfo carries
// them, the host ports it takes (one single-port range each), so the agent
// knows what to offer again.
std::string launch_event_head(std::string_view task_id, std::string_view pod, std::string_view agent_id, double cpus,
                              double mem_mib, std::span<const uint32_t> host_ports = {});

// The head, then the pod's JSON text, then the closing braces.
std::string launch_event(std::string_view head, std::string_view pod_json);

// With a grace period, as Mesos' kill_policy says it: the task gets that long
// to stop (SIGTERM, then SIGKILL) before it is killed outright.
std::string kill_event(std::string_view task_id, std::optional<uint32_t> grace_seconds = std::nullopt);

// How long an agent should wait before offering declined resources again
// (Mesos' Filters.refuse_seconds default).
inline constexpr int kDeclineRefuseSeconds = 5;

// `{"type":"DECLINE","offer_ids":[{"value":...}],"filters":{"refuse_seconds":N}}`:
// the offers went unused; the agent offers those resources again after N s.
std::string decline_event(std::span<const std::string> offer_ids, int refuse_seconds = kDeclineRefuseSeconds);

// Mesos resources, `[{"name":"cpus",...},{"name":"mem",...}]` and, when
// there are any, `{"name":"ports","type":"RANGES",...}`, as a LAUNCH carries
// them and an agent offers them.
void append_resources(std::string& out, double cpus, double mem_mib, std::span<const PortRange> ports = {});

}  // namespace uvsched
