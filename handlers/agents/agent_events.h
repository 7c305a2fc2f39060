// The scheduler's events on an agent's stream (SPEC §4), one JSON object per
// line: the ones the pod scheduler sends, LAUNCH and KILL. LAUNCH is made in
// two parts because its pod is known only once the binding is stored: the
// head when the pod is placed, the whole event from the head and the stored
// pod's text (no second encoding of the pod).
#pragma once

#include <string>
#include <string_view>

namespace uvsched {

// `{"type":"LAUNCH","task":{...,"pod":` : everything up to the pod.
std::string launch_event_head(std::string_view task_id, std::string_view pod, std::string_view agent_id,
                              double cpus, double mem_mib);

// The head, then the pod's JSON text, then the closing braces.
std::string launch_event(std::string_view head, std::string_view pod_json);

std::string kill_event(std::string_view task_id);

// Mesos scalar resources, `[{"name":"cpus",...},{"name":"mem",...}]`, as a
// LAUNCH carries them and an agent offers them.
void append_scalar_resources(std::string& out, double cpus, double mem_mib);

}  // namespace uvsched
