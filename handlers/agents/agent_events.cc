#include "handlers/agents/agent_events.h"

#include <vector>

#include "reactor/json_writer.h"

namespace uvsched {

// Written by hand, not with JsonWriter: the shape is fixed, and a head is
// made for every pod placed, where the writer's per-token bookkeeping showed.
std::string launch_event_head(std::string_view task_id, std::string_view pod, std::string_view agent_id, double cpus,
                              double mem_mib, std::span<const uint32_t> host_ports) {
  std::string h;
  h.reserve(320);  // the head alone: launch_event adds the pod
  h += R"({"type":"LAUNCH","task":{"task_id":{"value":)";
  append_json_string(h, task_id);
  h += R"(},"name":)";
  append_json_string(h, pod);
  h += R"(,"agent_id":{"value":)";
  append_json_string(h, agent_id);
  h += R"(},"resources":)";
  std::vector<PortRange> ports;
  ports.reserve(host_ports.size());
  for (uint32_t p : host_ports) ports.push_back({p, p});
  append_resources(h, cpus, mem_mib, ports);
  h += R"(,"pod":)";
  return h;
}

void append_resources(std::string& out, double cpus, double mem_mib, std::span<const PortRange> ports) {
  out += R"([{"name":"cpus","type":"SCALAR","scalar":{"value":)";
  append_json_number(out, cpus);
  out += R"(}},{"name":"mem","type":"SCALAR","scalar":{"value":)";
  append_json_number(out, mem_mib);
  out += "}}";
  if (!ports.empty()) {
    out += R"(,{"name":"ports","type":"RANGES","ranges":{"range":[)";
    for (size_t i = 0; i < ports.size(); ++i) {
      if (i) out += ',';
      out += R"({"begin":)" + std::to_string(ports[i].begin) + R"(,"end":)" + std::to_string(ports[i].end) + "}";
    }
    out += "]}}";
  }
  out += ']';
}

std::string launch_event(std::string_view head, std::string_view pod_json) {
  std::string m;
  m.reserve(head.size() + pod_json.size() + 2);
  return m.append(head).append(pod_json).append("}}");
}

std::string decline_event(std::span<const std::string> offer_ids, int refuse_seconds) {
  std::string m = R"({"type":"DECLINE","offer_ids":[)";
  for (size_t i = 0; i < offer_ids.size(); ++i) {
    if (i > 0) m += ',';
    m += R"({"value":)";
    append_json_string(m, offer_ids[i]);
    m += '}';
  }
  m += R"(],"filters":{"refuse_seconds":)" + std::to_string(refuse_seconds) + "}}";
  return m;
}

std::string kill_event(std::string_view task_id, std::optional<uint32_t> grace_seconds) {
  std::string m = R"({"type":"KILL","task_id":{"value":)";
  append_json_string(m, task_id);
  m += "}";
  if (grace_seconds) {
    m += R"(,"kill_policy":{"grace_period":{"nanoseconds":)" +
         std::to_string(uint64_t{*grace_seconds} * 1'000'000'000) + "}}";
  }
  m += "}";
  return m;
}

}  // namespace uvsched
