// A node agent driven by a test: subscribes on the daemon's agent API, posts
// offers, reads LAUNCH/KILL/RECONCILE events from its stream and reports task
// statuses, the way a real agent would. Plus the pod and resource JSON the
// scheduling tests build.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "tests/support/raw_http.h"

namespace uvsched::test {

using namespace std::chrono_literals;

// A pod asking for `cpu` and 128Mi; extra_spec is spliced into its spec.
std::string pod_json(const std::string& name, const std::string& cpu, const std::string& extra_spec = "",
                     const std::string& restart = "Always");
// Mesos resources: cpus, mem and optional port ranges ({"begin":..,"end":..} items).
std::string resources(double cpus, double mem, const std::string& ports = "");
// The task id of a LAUNCH event line.
std::string task_id_of(const std::string& launch);
// The pod name (namespace/name) of a LAUNCH event line.
std::string task_name_of(const std::string& launch);

// The events of `type` among `events` (lines from ScriptedAgent), joined: empty when none.
std::string of_type(const std::vector<std::string>& events, const std::string& type);

class ScriptedAgent {
 public:
  ScriptedAgent(uint16_t port, std::string host) : port_(port), host_(std::move(host)) {}

  // framework_id: the one its tasks were launched for, sent in the
  // subscription (empty: none).
  bool subscribe(const std::string& labels = "{}", const std::string& framework_id = "");
  // Posts one offer; its id, or "" on failure.
  std::string offer(double cpus, double mem, const std::string& ports = "");
  // Posts `count` offers in one request; how many were accepted.
  int offer_many(int count, double cpus, double mem);
  // What the stream said up to and with its SUBSCRIBED event.
  const std::string& subscribed() const { return subscribed_; }
  // The next event line of `type` on the stream, or "" at the deadline.
  // Events of other types before it (HEARTBEATs aside) are kept in order in
  // skipped(), for a test to check.
  std::string next(const std::string& type, std::chrono::milliseconds deadline = 10s);
  // The next event line whatever its type (HEARTBEATs aside), or "" at the deadline.
  std::string next_event(std::chrono::milliseconds deadline = 10s);
  const std::vector<std::string>& skipped() const { return skipped_; }
  // Every event the daemon sent this agent before now (HEARTBEATs aside):
  // a MESSAGE is sent through the operator's endpoint as a marker, and what
  // the stream carried before it comes back. Positive proof that nothing
  // else was sent, where waiting a while would prove only that nothing came
  // in that while. Marks a failure if the marker does not come.
  std::vector<std::string> events_before_marker(std::chrono::milliseconds deadline = 10s);
  void status(const std::string& task, const std::string& state);
  // With `data` (already base64), as an agent reporting the pod's status does.
  void status(const std::string& task, const std::string& state, const std::string& data);
  void hang_up() { stream_.close(); }

 private:
  // Reads more of the stream, decodes its chunks and queues whole lines.
  bool fill(std::chrono::steady_clock::time_point until);
  void decode();

  std::string subscribed_;
  uint16_t port_;
  std::string host_;
  RawConnection stream_;
  std::string raw_;   // chunked bytes not yet decoded
  std::string text_;  // decoded, not yet a whole line
  std::deque<std::string> lines_;
  std::vector<std::string> skipped_;
  int markers_ = 0;
};

}  // namespace uvsched::test
