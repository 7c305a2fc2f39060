// The events the scheduler writes on an agent's stream: valid JSON whatever
// the ids hold, and the same bytes the general JSON writer would give.
#include "handlers/agents/agent_events.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <limits>
#include <vector>

#include "reactor/json_writer.h"

namespace uvsched {
namespace {

// The LAUNCH event as JsonWriter writes it, token by token.
std::string written_launch(const std::string& task_id, const std::string& pod, const std::string& agent_id, double cpus,
                           double mem, const std::vector<uint32_t>& ports, const std::string& pod_json) {
  JsonWriter w;
  w.begin_object().key("type").value("LAUNCH").key("task").begin_object();
  w.key("task_id").begin_object().key("value").value(task_id).end_object();
  w.key("name").value(pod);
  w.key("agent_id").begin_object().key("value").value(agent_id).end_object();
  w.key("resources").begin_array();
  w.begin_object().key("name").value("cpus").key("type").value("SCALAR");
  w.key("scalar").begin_object().key("value").value(cpus).end_object().end_object();
  w.begin_object().key("name").value("mem").key("type").value("SCALAR");
  w.key("scalar").begin_object().key("value").value(mem).end_object().end_object();
  if (!ports.empty()) {
    w.begin_object().key("name").value("ports").key("type").value("RANGES");
    w.key("ranges").begin_object().key("range").begin_array();
    for (uint32_t p : ports)
      w.begin_object().key("begin").value(uint64_t{p}).key("end").value(uint64_t{p}).end_object();
    w.end_array().end_object().end_object();
  }
  w.end_array().key("pod").raw(pod_json).end_object().end_object();
  return w.take();
}

TEST(AgentEvents, LaunchIsWhatTheJsonWriterWrites) {
  struct Case {
    std::string task_id, pod, agent_id;
    double cpus, mem;
    std::vector<uint32_t> ports;
  } cases[] = {
      {"pod.default.web-0.00000000002a", "default/web-0", "node-1-17", 0.25, 64, {}},
      {"t\"1\\", "ns/p\n", "", 1e21, 0.1, {}},  // escapes; a number JSON must not print as a 22-digit integer
      {"t", "ns/p", "a\x01", -0.0, 1.0 / 3, {}},
      {"t", "ns/p", "a", std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), {}},
      {"t", "ns/p", "a", 1, 128, {31000}},  // a task's host ports, one single-port range each
      {"t", "ns/p", "a", 1, 128, {80, 443, 65535}},
  };
  const std::string pod = R"({"metadata":{"name":"p"},"spec":{"nodeName":"n"}})";
  for (const auto& c : cases) {
    std::string event = launch_event(launch_event_head(c.task_id, c.pod, c.agent_id, c.cpus, c.mem, c.ports), pod);
    EXPECT_EQ(event, written_launch(c.task_id, c.pod, c.agent_id, c.cpus, c.mem, c.ports, pod)) << c.task_id;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(event).get(doc), simdjson::SUCCESS) << event;
    EXPECT_EQ(std::string_view(doc["task"]["task_id"]["value"]), c.task_id);
    EXPECT_EQ(std::string_view(doc["task"]["name"]), c.pod);
    EXPECT_EQ(std::string_view(doc["task"]["agent_id"]["value"]), c.agent_id);
    EXPECT_EQ(std::string_view(doc["task"]["pod"]["spec"]["nodeName"]), "n");
    simdjson::dom::array resources = doc["task"]["resources"];
    EXPECT_EQ(resources.size(), c.ports.empty() ? 2u : 3u);
  }
}

TEST(AgentEvents, KillNamesItsTaskWhateverItHolds) {
  for (const std::string& id :
       {std::string("pod.default.web-0.00000000002a"), std::string("a\"b\\c\n"), std::string("x\0y", 3)}) {
    std::string event = kill_event(id);
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(event).get(doc), simdjson::SUCCESS) << event;
    EXPECT_EQ(std::string_view(doc["type"]), "KILL");
    EXPECT_EQ(std::string_view(doc["task_id"]["value"]), id);
    EXPECT_EQ(doc["kill_policy"].error(), simdjson::NO_SUCH_FIELD) << "no grace period given: none said";
  }
  // With a grace period, as Mesos' kill_policy says it (nanoseconds).
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(kill_event("t", 30)).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(doc["kill_policy"]["grace_period"]["nanoseconds"]), 30'000'000'000u);
  std::string none = kill_event("t", 0);
  ASSERT_EQ(parser.parse(none).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(doc["kill_policy"]["grace_period"]["nanoseconds"]), 0u) << "a forced kill says 0";
  ASSERT_EQ(parser.parse(kill_event("t", UINT32_MAX)).get(doc), simdjson::SUCCESS);
  EXPECT_EQ(uint64_t(doc["kill_policy"]["grace_period"]["nanoseconds"]), uint64_t{UINT32_MAX} * 1'000'000'000);
}

}  // namespace
}  // namespace uvsched
