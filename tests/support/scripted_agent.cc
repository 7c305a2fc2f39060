#include "tests/support/scripted_agent.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdlib>

#include "storage/base64.h"

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
  std::string req = "POST /v1/agents/" + host_ +
                    "/subscribe HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                    body;
  if (!stream_.send(req)) return false;
  auto head = stream_.read_until("heartbeat_interval_seconds");  // the SUBSCRIBED event, whole
  if (!head) return false;
  subscribed_ = *head;
  size_t head_end = head->find("\r\n\r\n");
  if (head_end == std::string::npos || head->rfind("HTTP/1.1 200", 0) != 0) return false;
  raw_ = head->substr(head_end + 4);
  decode();
  if (lines_.empty() || lines_.front().find("\"type\":\"SUBSCRIBED\"") == std::string::npos) return false;
  lines_.pop_front();
  return true;
}

namespace {

std::string type_of(const std::string& line) {
  simdjson::dom::parser p;
  std::string_view type;
  if (p.parse(line)["type"].get(type) != simdjson::SUCCESS) return "<not an event: " + line + ">";
  return std::string(type);
}

}  // namespace

std::string of_type(const std::vector<std::string>& events, const std::string& type) {
  std::string out;
  for (const auto& e : events) {
    if (type_of(e) == type) out += e + "\n";
  }
  return out;
}

void ScriptedAgent::decode() {
  size_t pos = 0;
  for (;;) {
    size_t eol = raw_.find("\r\n", pos);
    if (eol == std::string::npos) break;
    size_t size = std::strtoul(raw_.substr(pos, eol - pos).c_str(), nullptr, 16);
    if (size == 0 || raw_.size() < eol + 2 + size + 2) break;  // the last chunk, or one not whole yet
    text_.append(raw_, eol + 2, size);
    pos = eol + 2 + size + 2;
  }
  raw_.erase(0, pos);
  for (size_t nl; (nl = text_.find('\n')) != std::string::npos;) {
    lines_.push_back(text_.substr(0, nl));
    text_.erase(0, nl + 1);
  }
}

bool ScriptedAgent::fill(std::chrono::steady_clock::time_point until) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  auto more = stream_.read_until("\n", left);
  if (!more) return false;
  raw_ += *more;
  decode();
  return true;
}

std::string ScriptedAgent::next_event(std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    while (!lines_.empty()) {
      std::string line = std::move(lines_.front());
      lines_.pop_front();
      if (type_of(line) != "HEARTBEAT") return line;
    }
    if (!fill(until)) return "";
  }
}

std::string ScriptedAgent::next(const std::string& type, std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    std::string line = next_event(std::max(left, 0ms));
    if (line.empty()) return "";
    if (type_of(line) == type) return line;
    skipped_.push_back(std::move(line));
  }
}

std::vector<std::string> ScriptedAgent::events_before_marker(std::chrono::milliseconds deadline) {
  std::string data = "marker-" + std::to_string(++markers_);
  std::string b64 = base64_encode(data);
  auto r = http_request(port_, "POST", "/v1/messages/" + host_, R"({"executor_id":"marker","data":")" + b64 + R"("})");
  EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer to the marker");
  std::vector<std::string> before;
  auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    std::string line = next_event(std::max(left, 0ms));
    if (line.empty()) {
      ADD_FAILURE() << "the marker MESSAGE never came";
      return before;
    }
    if (type_of(line) == "MESSAGE" && line.find("\"" + b64 + "\"") != std::string::npos) return before;
    before.push_back(std::move(line));
  }
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

void ScriptedAgent::status(const std::string& task, const std::string& state) { status(task, state, ""); }

void ScriptedAgent::status(const std::string& task, const std::string& state, const std::string& data) {
  std::string with_data = data.empty() ? "" : R"(,"data":")" + data + "\"";
  auto r = http_request(
      port_, "POST", "/v1/agents/" + host_ + "/status",
      R"({"statuses":[{"task_id":{"value":")" + task + R"("},"state":")" + state + "\"" + with_data + "}]}");
  EXPECT_TRUE(r && r->status == 200);
}

}  // namespace uvsched::test
