// The agent API's bodies, table by table: what is read, and what is refused
// with which field named.
#include "handlers/agents/agent_wire.h"

#include <gtest/gtest.h>

#include "storage/base64.h"

namespace uvsched {
namespace {

simdjson::dom::object object_of(simdjson::dom::parser& parser, const std::string& json) {
  simdjson::dom::object o;
  EXPECT_FALSE(parse_json_object(parser, json, &o)) << json;
  return o;
}

TEST(AgentWire, OffersAreReadWithTheirResources) {
  simdjson::dom::parser parser;
  std::vector<Offer> offers;
  auto body = object_of(parser, R"({"offers":[
      {"id":{"value":"o-1"},"resources":[{"name":"cpus","type":"SCALAR","scalar":{"value":2}},
                                          {"name":"mem","scalar":{"value":512.5}},
                                          {"name":"cpus","scalar":{"value":0.5}},
                                          {"name":"disk","scalar":{"value":9}},
                                          {"name":"ports","ranges":{"range":[{"begin":80,"end":81},{"begin":9000,"end":9000}]}}]},
      {"resources":[]}]})");
  ASSERT_FALSE(read_offers(body, "node-a", &offers));
  ASSERT_EQ(offers.size(), 2u);
  EXPECT_EQ(offers[0].id, "o-1");
  EXPECT_EQ(offers[0].agent, "node-a");
  EXPECT_EQ(offers[0].resources.cpus, 2.5);
  EXPECT_EQ(offers[0].resources.mem_mib, 512.5);
  ASSERT_EQ(offers[0].resources.ports.size(), 2u);
  EXPECT_EQ(offers[0].resources.ports[1].begin, 9000u);
  EXPECT_EQ(offers[1].id, "");  // the hub names it
  EXPECT_EQ(offers[1].resources.cpus, 0);
}

TEST(AgentWire, BadOffersNameTheirField) {
  struct Case {
    const char* body;
    const char* field;
    const char* says;
  } cases[] = {
      {R"({})", "offers", "offers must be an array"},
      {R"({"offers":{}})", "offers", "offers must be an array"},
      {R"({"offers":[{}]})", "offers[0].resources", "offers[0].resources is required"},
      {R"({"offers":[{"resources":[]},7]})", "offers[1].resources", "is required"},
      {R"({"offers":[{"resources":{}}]})", "offers[0].resources", "resources must be an array"},
      {R"({"offers":[{"resources":[{"name":"cpus","scalar":{"value":-1}}]}]})", "offers[0].resources",
       "resource cpus needs scalar.value >= 0"},
      {R"({"offers":[{"resources":[{"name":"mem","scalar":{"value":"64"}}]}]})", "offers[0].resources",
       "resource mem needs scalar.value >= 0"},
      {R"({"offers":[{"resources":[{"name":"mem","scalar":{"value":1e308}}]}]})", "offers[0].resources",
       "resource mem adds up to more than 1e15"},
      {R"({"offers":[{"resources":[{"name":"cpus","scalar":{"value":6e14}},{"name":"cpus","scalar":{"value":6e14}}]}]})",
       "offers[0].resources", "resource cpus adds up to more than 1e15"},
      {R"({"offers":[{"resources":[{"name":"ports"}]}]})", "offers[0].resources", "needs ranges.range"},
      {R"({"offers":[{"resources":[{"name":"ports","ranges":{"range":[{"begin":9,"end":2}]}}]}]})",
       "offers[0].resources", "0 <= begin <= end <= 65535"},
      {R"({"offers":[{"resources":[{"name":"ports","ranges":{"range":[{"begin":1,"end":70000}]}}]}]})",
       "offers[0].resources", "0 <= begin <= end <= 65535"},
  };
  simdjson::dom::parser parser;
  for (const auto& c : cases) {
    std::vector<Offer> offers;
    auto e = read_offers(object_of(parser, c.body), "a", &offers);
    ASSERT_TRUE(e) << c.body;
    EXPECT_EQ(e->field, c.field) << c.body;
    EXPECT_NE(e->message.find(c.says), std::string::npos) << c.body << ": " << e->message;
  }
}

TEST(AgentWire, StatusesAreReadAndCheckedInOrder) {
  simdjson::dom::parser parser;
  std::vector<TaskStatus> got;
  ASSERT_FALSE(read_statuses(object_of(parser, R"({"statuses":[
      {"task_id":{"value":"t1"},"state":"TASK_STARTING"},
      {"task_id":{"value":"t1"},"state":"TASK_RUNNING","data":"e30="}]})"),
                             &got));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].task_id, "t1");
  EXPECT_EQ(got[0].state, "TASK_STARTING");
  EXPECT_EQ(got[0].data, "");
  EXPECT_EQ(got[1].data, "{}");  // decoded

  struct Case {
    const char* body;
    const char* field;
  } cases[] = {
      {R"({"statuses":"x"})", "statuses"},
      {R"({"statuses":[{"state":"TASK_RUNNING"}]})", "statuses[0].task_id.value"},
      {R"({"statuses":[{"task_id":{"value":""},"state":"TASK_RUNNING"}]})", "statuses[0].task_id.value"},
      {R"({"statuses":[{"task_id":{"value":5},"state":"TASK_RUNNING"}]})", "statuses[0].task_id.value"},
      {R"({"statuses":[{"task_id":{"value":"t"},"state":"TASK_RUNNING"},{"task_id":{"value":"t"},"state":"RUNNING"}]})",
       "statuses[1].state"},
      {R"({"statuses":[{"task_id":{"value":"t"}}]})", "statuses[0].state"},
      {R"({"statuses":[{"task_id":{"value":"t"},"state":"TASK_BOGUS"}]})", "statuses[0].state"},
      {R"({"statuses":[7]})", "statuses[0].task_id.value"},
  };
  for (const auto& c : cases) {
    std::vector<TaskStatus> statuses;
    auto e = read_statuses(object_of(parser, c.body), &statuses);
    ASSERT_TRUE(e) << c.body;
    EXPECT_EQ(e->field, c.field) << c.body << ": " << e->message;
  }
}

// `data` is merged into a pod, stored and sent to every watcher: it must be
// base64 of a JSON object, and bounded in bytes, depth and values.
TEST(AgentWire, StatusDataIsAnObjectWithinLimits) {
  simdjson::dom::parser parser;
  auto body = [](const std::string& data_json) {
    return R"({"statuses":[{"task_id":{"value":"t"},"state":"TASK_RUNNING","data":")" + base64_encode(data_json) +
           R"("}]})";
  };
  StatusDataLimits limits;
  limits.max_bytes = 200;
  limits.max_depth = 3;
  limits.max_values = 10;
  std::vector<TaskStatus> got;
  ASSERT_FALSE(read_statuses(object_of(parser, body(R"({"podIP":"10.0.0.1","a":{"b":{}}})")), &got, limits));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].data, R"({"podIP":"10.0.0.1","a":{"b":{}}})");  // decoded

  struct Case {
    std::string body;
    const char* says;
  } cases[] = {
      {R"({"statuses":[{"task_id":{"value":"t"},"state":"TASK_RUNNING","data":"%%%"}]})", "must be base64"},
      {R"({"statuses":[{"task_id":{"value":"t"},"state":"TASK_RUNNING","data":7}]})", "must be a base64 string"},
      {body("[1,2]"), "of a JSON object"},
      {body("{\"a\":"), "of a JSON object"},
      {body(R"({"a":{"b":{"c":{}}}})"), "nests deeper than 3"},
      {body(R"({"a":[[[1]]]})"), "nests deeper than 3"},
      {body(R"({"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11})"), "more than 10 values"},
      {body(R"({"a":[1,2,3,4,5,6,7,8,9,10]})"), "more than 10 values"},
      {body(R"({"a":")" + std::string(200, 'x') + R"("})"), "over the limit of 200"},
  };
  for (const auto& c : cases) {
    std::vector<TaskStatus> statuses;
    auto e = read_statuses(object_of(parser, c.body), &statuses, limits);
    ASSERT_TRUE(e) << c.body;
    EXPECT_EQ(e->field, "statuses[0].data") << c.body;
    EXPECT_NE(e->message.find(c.says), std::string::npos) << c.body << ": " << e->message;
  }
  // Exactly at the limits is allowed.
  ASSERT_FALSE(read_statuses(object_of(parser, body(R"({"a":{"b":[1]},"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1})")),
                             &got, limits));
}

// A FrameworkMessage and an ExecutorLost: an executor id (Mesos' {"value"}
// or a string), base64 data, an integer status; anything else names the field.
TEST(AgentWire, MessagesAndExecutorLossesAreChecked) {
  simdjson::dom::parser parser;
  FrameworkMessage m;
  ASSERT_FALSE(read_framework_message(object_of(parser, R"({"executor_id":{"value":"ex-1"},"data":"aGk="})"), &m));
  EXPECT_EQ(m.executor_id, "ex-1");
  EXPECT_EQ(m.data, "hi");
  ASSERT_FALSE(read_framework_message(object_of(parser, R"({"executor_id":"ex-2","data":""})"), &m));
  EXPECT_EQ(m.executor_id, "ex-2");
  ExecutorLost lost;
  ASSERT_FALSE(read_executor_lost(object_of(parser, R"({"executor_id":{"value":"ex-1"},"status":137})"), &lost));
  EXPECT_EQ(lost.status, 137);
  ASSERT_FALSE(read_executor_lost(object_of(parser, R"({"executor_id":"ex-1"})"), &lost));
  struct Case {
    const char* body;
    const char* field;
  } messages[] = {
      {R"({})", "executor_id"},
      {R"({"executor_id":{"value":""},"data":"aGk="})", "executor_id"},
      {R"({"executor_id":7,"data":"aGk="})", "executor_id"},
      {R"({"executor_id":"e"})", "data"},
      {R"({"executor_id":"e","data":"%%"})", "data"},
      {R"({"executor_id":"e","data":[1]})", "data"},
  };
  for (const auto& c : messages) {
    auto e = read_framework_message(object_of(parser, c.body), &m);
    ASSERT_TRUE(e) << c.body;
    EXPECT_EQ(e->field, c.field) << c.body;
  }
  Case losses[] = {{R"({"status":1})", "executor_id"}, {R"({"executor_id":"e","status":"dead"})", "status"}};
  for (const auto& c : losses) {
    auto e = read_executor_lost(object_of(parser, c.body), &lost);
    ASSERT_TRUE(e) << c.body;
    EXPECT_EQ(e->field, c.field) << c.body;
  }
}

TEST(AgentWire, ASubscriptionHasOptionalLabelsAndResources) {
  simdjson::dom::parser parser;
  Labels labels;
  Resources total;
  ASSERT_FALSE(read_subscription(object_of(parser, "{}"), &labels, &total));
  EXPECT_TRUE(labels.empty());
  ASSERT_FALSE(read_subscription(
      object_of(parser, R"({"labels":{"zone":"a","gpu":"yes"},"resources":[{"name":"cpus","scalar":{"value":4}}]})"),
      &labels, &total));
  EXPECT_EQ(labels.at("zone"), "a");
  EXPECT_EQ(total.cpus, 4);
  ASSERT_FALSE(read_subscription(object_of(parser, R"({"labels":null,"resources":null})"), &labels, &total));

  EXPECT_EQ(read_subscription(object_of(parser, R"({"labels":["a"]})"), &labels, &total)->message,
            "labels must be an object of strings");
  EXPECT_EQ(read_subscription(object_of(parser, R"({"labels":{"n":1}})"), &labels, &total)->message,
            "label n must be a string");
  EXPECT_EQ(read_subscription(object_of(parser, R"({"resources":7})"), &labels, &total)->field, "resources");
  Resources huge;
  EXPECT_EQ(
      read_subscription(object_of(parser, R"({"resources":[{"name":"mem","scalar":{"value":1e308}}]})"), &labels, &huge)
          ->message,
      "resource mem adds up to more than 1e15");
}

}  // namespace
}  // namespace uvsched
