#include "tests/support/scripted_agent.h"

#include <gtest/gtest.h>
#include <simdjson.h>

namespace uvsched::test {

std::string pod_json(const std::string& name, const std::string& cpu, const std::string& extra_spec,
                     const std::string& restart) {
  return R"({"metadata":{"name":")" + name + R"("},"spec":{"restartPolicy":")" + restart +
         R"(","containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":")" + cpu +
         R"(","memory":"128Mi"}}}])" + extra_spec + "}}";
}

std::string resources(double cpus, double mem, const std::string& ports) {
  std::string r = R"([{"name":"cpus","type":"SCALAR","scalar":{"value":)" + std::to_string(cpus) +
                  R"(}},{"name":"mem","type":"SCALAR","scalar":{"value":)" + std::to_string(mem) + "}}";
  if (!ports.empty()) r += R"(,{"name":"ports","type":"RANGES","ranges":{"range":[)" + ports + "]}}";
  return r + "]";
}

std::string task_id_of(const std::string& launch) {
  simdjson::dom::parser p;
  return std::string(std::string_view(p.parse(launch)["task"]["task_id"]["value"]));
}

std::string task_name_of(const std::string& launch) {
  simdjson::dom::parser p;
  return std::string(std::string_view(p.parse(launch)["task"]["name"]));
}

bool ScriptedAgent::subscribe(const std::string& labels, const std::string& framework_id) {
  if (!stream_.connect(port_)) return false;
  std::string body = R"({"labels":)" + labels + R"(,"resources":)" + resources(8, 8192);
  if (!framework_id.empty()) body += R"(,"framework_id":{"value":")" + framework_id + "\"}";
  body += "}";
  std::string req = "POST /v1/agents/" + host_ + "/subscribe HTTP/1.1\r\nHost: t\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\n\r\n" + body;
  if (!stream_.send(req)) return false;
  auto head = stream_.read_until("heartbeat_interval_seconds");  // the SUBSCRIBED event, whole
  if (!head) return false;
  subscribed_ = *head;
  return true;
}

std::string ScriptedAgent::offer(double cpus, double mem, const std::string& ports) {
  auto r = http_request(port_, "POST", "/v1/agents/" + host_ + "/offers",
                        R"({"offers":[{"resources":)" + resources(cpus, mem, ports) + "}]}");
  if (!r || r->status != 200) return "";
  simdjson::dom::parser p;
  return std::string(std::string_view(p.parse(r->body)["offer_ids"].at(0)["value"]));
}

int ScriptedAgent::offer_many(int count, double cpus, double mem) {
  std::string body = R"({"offers":[)";
  for (int i = 0; i < count; ++i) body += (i ? "," : "") + std::string(R"({"resources":)") + resources(cpus, mem) + "}";
  body += "]}";
  auto r = http_request(port_, "POST", "/v1/agents/" + host_ + "/offers", body);
  if (!r || r->status != 200) return 0;
  simdjson::dom::parser p;
  simdjson::dom::array ids;
  if (p.parse(r->body)["offer_ids"].get(ids) != simdjson::SUCCESS) return 0;
  return static_cast<int>(ids.size());
}

std::string ScriptedAgent::next(const std::string& type, std::chrono::milliseconds deadline) {
  std::string marker = "\"type\":\"" + type + "\"";
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    size_t at = buffer_.find(marker);
    if (at != std::string::npos) {
      size_t start = buffer_.rfind('{', at);
      size_t end = buffer_.find('\n', at);
      std::string line = buffer_.substr(start, end - start);
      buffer_.erase(0, end);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    auto more = stream_.read_until("\n", left);
    if (!more) return "";
    buffer_ += *more;
  }
  return "";
}

void ScriptedAgent::status(const std::string& task, const std::string& state) { status(task, state, ""); }

void ScriptedAgent::status(const std::string& task, const std::string& state, const std::string& data) {
  std::string with_data = data.empty() ? "" : R"(,"data":")" + data + "\"";
  auto r = http_request(port_, "POST", "/v1/agents/" + host_ + "/status",
                        R"({"statuses":[{"task_id":{"value":")" + task + R"("},"state":")" + state + "\"" + with_data + "}]}");
  EXPECT_TRUE(r && r->status == 200);
}

}  // namespace uvsched::test
