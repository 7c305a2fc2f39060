#include "handlers/pods/cluster_view.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

#include "handlers/pods/pod_validation.h"
#include "reactor/json_writer.h"
#include "reactor/url.h"

namespace uvsched {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(std::string_view haystack, const std::string& lowered_needle) {
  return lower(haystack).find(lowered_needle) != std::string::npos;
}

std::optional<size_t> whole_number(const std::string& s, size_t max) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  size_t n = std::strtoul(s.c_str(), nullptr, 10);
  return n > max ? std::nullopt : std::optional<size_t>(n);
}

// A cordoned agent (kubectl cordon) is connected and takes no new pod: the operator sees which.
const char* state_of(const AgentHub& hub, const AgentHub::Agent& a) {
  if (!a.connected) return "disconnected";
  return hub.cordoned(a.hostname) ? "cordoned" : "connected";
}

bool matches(const AgentHub& hub, const AgentHub::Agent& a, const std::string& needle) {
  if (needle.empty() || contains(a.hostname, needle) || contains(state_of(hub, a), needle)) return true;
  for (const auto& [k, v] : a.labels) {
    if (contains(k + "=" + v, needle)) return true;
  }
  return false;
}

struct Held {
  double cpus = 0, mem_mib = 0;
  size_t pods = 0;
};

}  // namespace

std::optional<ClusterQuery> parse_cluster_query(std::string_view query, std::string* error, std::string* field) {
  ClusterQuery q;
  if (auto s = query_param(query, "q")) q.search = lower(*s);
  if (auto s = query_param(query, "offset")) {
    auto n = whole_number(*s, 100'000'000);
    if (!n) {
      *error = "offset must be a whole number";
      *field = "offset";
      return std::nullopt;
    }
    q.offset = *n;
  }
  if (auto s = query_param(query, "limit")) {
    auto n = whole_number(*s, ClusterQuery::kMaxLimit);
    if (!n || *n == 0) {
      *error = "limit must be a whole number from 1 to " + std::to_string(ClusterQuery::kMaxLimit);
      *field = "limit";
      return std::nullopt;
    }
    q.limit = *n;
  }
  return q;
}

std::string cluster_view_json(const AgentHub& hub, const PodTaskRegistry& tasks, size_t pending_pods,
                              const ClusterQuery& q) {
  // Totals over everything (the registry keeps what its tasks hold); what
  // each listed agent holds is asked of its index by agent for the page's agents only.
  size_t connected = 0;
  double cpus = 0, mem = 0;
  for (const auto& [host, a] : hub.agents()) {
    connected += a->connected ? 1 : 0;
    cpus += a->total.cpus;
    mem += a->total.mem_mib;
  }
  Held used{tasks.cpus_held(), tasks.mem_mib_held(), tasks.size()};
  JsonWriter w;
  w.begin_object().key("totals").begin_object();
  w.key("agents").value(static_cast<uint64_t>(hub.agents().size()));
  w.key("connected").value(static_cast<uint64_t>(connected));
  w.key("disconnected").value(static_cast<uint64_t>(hub.agents().size() - connected));
  w.key("lost").value(static_cast<uint64_t>(hub.recently_lost().size()));
  w.key("cpus").value(cpus).key("cpus_used").value(used.cpus);
  w.key("mem_mib").value(mem).key("mem_mib_used").value(used.mem_mib);
  w.key("pods").value(static_cast<uint64_t>(used.pods));
  w.key("pods_pending").value(static_cast<uint64_t>(pending_pods));
  w.end_object();

  // The listing: live agents by hostname, then the lost ones, newest first.
  std::vector<const AgentHub::Agent*> live;
  for (const AgentHub::Agent* a : hub.sorted_agents()) {
    if (matches(hub, *a, q.search)) live.push_back(a);
  }
  std::vector<const AgentHub::LostAgent*> lost;
  const auto& gone = hub.recently_lost();
  for (auto it = gone.rbegin(); it != gone.rend(); ++it) {
    if (q.search.empty() || contains(it->hostname, q.search) || contains("lost", q.search)) lost.push_back(&*it);
  }
  size_t matched = live.size() + lost.size();
  w.key("matched").value(static_cast<uint64_t>(matched));
  w.key("offset").value(static_cast<uint64_t>(q.offset)).key("limit").value(static_cast<uint64_t>(q.limit));
  w.key("agents").begin_array();
  size_t end = std::min(matched, q.offset + q.limit);
  for (size_t i = q.offset; i < end; ++i) {
    if (i >= live.size()) {
      const AgentHub::LostAgent& l = *lost[i - live.size()];
      w.begin_object().key("hostname").value(l.hostname).key("state").value("lost");
      w.key("lost_at").value(rfc3339(l.unix_ms)).end_object();
      continue;
    }
    const AgentHub::Agent& a = *live[i];
    Held held;
    std::vector<std::string_view> named;
    if (auto index = tasks.agent_index(a.hostname)) {
      for (const auto& [pod, task] : tasks.on_agent(*index)) {
        held.cpus += task->cpus;
        held.mem_mib += task->mem_mib;
        ++held.pods;
        named.push_back(pod);
      }
    }
    std::sort(named.begin(), named.end());
    if (named.size() > ClusterQuery::kPodsNamed) named.resize(ClusterQuery::kPodsNamed);
    w.begin_object().key("hostname").value(a.hostname).key("state").value(state_of(hub, a));
    w.key("labels").begin_object();
    for (const auto& [k, v] : a.labels) {
      if (k != kHostnameLabel) w.key(k).value(v);  // (the hostname, shown already)
    }
    w.end_object();
    w.key("cpus").value(a.total.cpus).key("cpus_used").value(held.cpus);
    w.key("mem_mib").value(a.total.mem_mib).key("mem_mib_used").value(held.mem_mib);
    w.key("pods").value(static_cast<uint64_t>(held.pods)).key("pod_names").begin_array();
    for (std::string_view p : named) w.value(p);
    w.end_array().end_object();
  }
  w.end_array().end_object();
  return w.take();
}

}  // namespace uvsched
