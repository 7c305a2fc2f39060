#include "handlers/agents/agent_wire.h"

#include "policy/pod_task.h"
#include "storage/base64.h"

namespace uvsched {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

JsonError problem(std::string message, std::string field) { return JsonError{std::move(message), std::move(field)}; }

// A string member, or "" when it is absent or not a string.
std::string_view text_at(object o, std::string_view key) {
  std::string_view s;
  if (o.at_key(key).get(s) != simdjson::SUCCESS) return {};
  return s;
}

// The body's list at `key`, which every post of its kind has.
std::optional<JsonError> list_at(object body, std::string_view key, array* out) {
  bool present = false;
  if (!read_array(body, key, key, out, &present, true)) return std::nullopt;
  return problem(std::string(key) + " must be an array", std::string(key));
}

std::optional<JsonError> read_ports(object r, std::string_view path, Resources* out) {
  array ranges;
  if (r.at_pointer("/ranges/range").get(ranges) != simdjson::SUCCESS) {
    return problem("resource ports needs ranges.range", std::string(path));
  }
  for (element range : ranges) {
    int64_t begin = -1, end = -1;
    if (range.at_key("begin").get(begin) != simdjson::SUCCESS) begin = -1;
    if (range.at_key("end").get(end) != simdjson::SUCCESS) end = -1;
    if (begin < 0 || end > 65535 || begin > end) {
      return problem("a port range needs 0 <= begin <= end <= 65535", std::string(path));
    }
    out->ports.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(end)});
  }
  return std::nullopt;
}

}  // namespace

std::optional<JsonError> read_resources(element list, std::string_view path, Resources* out) {
  array items;
  if (list.get(items) != simdjson::SUCCESS) return problem("resources must be an array", std::string(path));
  for (element item : items) {
    object r;
    if (item.get(r) != simdjson::SUCCESS) continue;  // not a resource: nothing to schedule on
    std::string_view name = text_at(r, "name");
    if (name == "cpus" || name == "mem") {
      double n = -1;
      if (r.at_pointer("/scalar/value").get(n) != simdjson::SUCCESS || !(n >= 0)) {
        return problem("resource " + std::string(name) + " needs scalar.value >= 0", std::string(path));
      }
      // A name given twice adds up, as Mesos' Resources do; the sum is bounded
      // as Mesos' fixed-point scalars are, so that a node's capacity stays a
      // number (1e308 twice is infinity, and no integer holds it as MiB).
      double& sum = name == "cpus" ? out->cpus : out->mem_mib;
      if (!(sum + n <= kMaxResourceScalar)) {
        return problem("resource " + std::string(name) + " adds up to more than 1e15", std::string(path));
      }
      sum += n;
    } else if (name == "ports") {
      if (auto e = read_ports(r, path, out)) return e;
    }
    // Other resources (disk, gpus) are accepted and not scheduled on.
  }
  return std::nullopt;
}

std::optional<JsonError> read_subscription(object body, Labels* labels, Resources* total, std::string* framework_id) {
  element fid;
  if (body.at_key("framework_id").get(fid) == simdjson::SUCCESS && !fid.is_null()) {
    std::string_view value;
    if (fid.at_pointer("/value").get(value) != simdjson::SUCCESS) {
      return problem("framework_id must be {\"value\": string}", "framework_id.value");
    }
    if (framework_id) *framework_id = std::string(value);
  }
  object l;
  bool present = false;
  if (read_object(body, "labels", "labels", &l, &present))
    return problem("labels must be an object of strings", "labels");
  if (present) {
    for (auto [k, v] : l) {
      std::string_view s;
      if (v.get(s) != simdjson::SUCCESS) return problem("label " + std::string(k) + " must be a string", "labels");
      (*labels)[std::string(k)] = std::string(s);
    }
  }
  element r;
  if (body.at_key("resources").get(r) == simdjson::SUCCESS && !r.is_null())
    return read_resources(r, "resources", total);
  return std::nullopt;
}

std::optional<JsonError> read_offers(object body, const std::string& agent, std::vector<Offer>* out) {
  array list;
  if (auto e = list_at(body, "offers", &list)) return e;
  size_t i = 0;
  for (element item : list) {
    std::string path = "offers[" + std::to_string(i++) + "].resources";
    object o;
    element res;
    if (item.get(o) != simdjson::SUCCESS || o.at_key("resources").get(res) != simdjson::SUCCESS || res.is_null()) {
      return problem(path + " is required", path);
    }
    Offer offer;
    offer.agent = agent;
    std::string_view id;
    if (o.at_pointer("/id/value").get(id) == simdjson::SUCCESS) offer.id = std::string(id);
    if (auto e = read_resources(res, path, &offer.resources)) return e;
    out->push_back(std::move(offer));
  }
  return std::nullopt;
}

namespace {

// Counts the values under `e` (members and items at every level) and checks
// its depth, without recursion deeper than the limit allows.
bool within_shape(element e, size_t depth, const StatusDataLimits& limits, size_t* values) {
  if (e.is_object()) {
    if (depth >= limits.max_depth) return false;
    for (auto field : object(e)) {
      if (++*values > limits.max_values || !within_shape(field.value, depth + 1, limits, values)) return false;
    }
  } else if (e.is_array()) {
    if (depth >= limits.max_depth) return false;
    for (element item : array(e)) {
      if (++*values > limits.max_values || !within_shape(item, depth + 1, limits, values)) return false;
    }
  }
  return true;
}

// A status's `data`: base64 of a JSON object, decoded into *json.
std::optional<JsonError> read_status_data(std::string_view text, const std::string& field,
                                          const StatusDataLimits& limits, std::string* json) {
  auto decoded = base64_decode(text);
  if (!decoded) return problem(field + " must be base64", field);
  if (decoded->size() > limits.max_bytes) {
    return problem(field + " is " + std::to_string(decoded->size()) + " bytes decoded, over the limit of " +
                       std::to_string(limits.max_bytes),
                   field);
  }
  // Its own parser: the body's parser still holds the document being read.
  static simdjson::dom::parser parser;
  element doc;
  if (parser.parse(*decoded).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
    return problem(field + " must be base64 of a JSON object", field);
  }
  size_t values = 0;
  if (!within_shape(doc, 0, limits, &values)) {
    return problem(field + " nests deeper than " + std::to_string(limits.max_depth) + " or holds more than " +
                       std::to_string(limits.max_values) + " values",
                   field);
  }
  *json = std::move(*decoded);
  return std::nullopt;
}

}  // namespace

namespace {

// An executor id as Mesos writes it ({"value": "..."}) or as a plain string.
std::optional<JsonError> read_executor_id(object body, std::string* out) {
  element e;
  std::string_view id;
  bool ok = body.at_key("executor_id").get(e) == simdjson::SUCCESS &&
            (e.get(id) == simdjson::SUCCESS || e.at_pointer("/value").get(id) == simdjson::SUCCESS);
  if (!ok || id.empty()) return problem("executor_id is required (a string, or {\"value\": string})", "executor_id");
  *out = std::string(id);
  return std::nullopt;
}

}  // namespace

std::optional<JsonError> read_framework_message(object body, FrameworkMessage* out) {
  if (auto e = read_executor_id(body, &out->executor_id)) return e;
  element data;
  std::string_view text;
  if (body.at_key("data").get(data) != simdjson::SUCCESS || data.get(text) != simdjson::SUCCESS) {
    return problem("data is required: the message, base64", "data");
  }
  constexpr size_t kMaxMessageBytes = 64 * 1024;
  auto decoded = base64_decode(text);
  if (!decoded) return problem("data must be base64", "data");
  if (decoded->size() > kMaxMessageBytes) return problem("data is over 64 KiB decoded", "data");
  out->data = std::move(*decoded);
  return std::nullopt;
}

std::optional<JsonError> read_executor_lost(object body, ExecutorLost* out) {
  if (auto e = read_executor_id(body, &out->executor_id)) return e;
  element status;
  if (body.at_key("status").get(status) == simdjson::SUCCESS && !status.is_null() &&
      status.get(out->status) != simdjson::SUCCESS) {
    return problem("status must be an integer (the executor's exit status)", "status");
  }
  return std::nullopt;
}

std::optional<JsonError> read_statuses(object body, std::vector<TaskStatus>* out, const StatusDataLimits& limits) {
  array list;
  if (auto e = list_at(body, "statuses", &list)) return e;
  size_t i = 0;
  for (element item : list) {
    std::string f = "statuses[" + std::to_string(i++) + "]";
    std::string_view id;
    if (item.at_pointer("/task_id/value").get(id) != simdjson::SUCCESS || id.empty()) {
      return problem(f + ".task_id.value is required", f + ".task_id.value");
    }
    object st = item;  // an object: it has a task_id
    TaskStatus s{std::string(id), std::string(text_at(st, "state")), {}};
    if (!is_mesos_task_state(s.state)) {
      return problem(f + ".state must be one of Mesos' task states (TASK_STAGING, TASK_STARTING, TASK_RUNNING, " +
                         "TASK_KILLING, TASK_FINISHED, TASK_FAILED, TASK_KILLED, TASK_ERROR, TASK_LOST, " +
                         "TASK_DROPPED, TASK_UNREACHABLE, TASK_GONE, TASK_GONE_BY_OPERATOR, TASK_UNKNOWN)",
                     f + ".state");
    }
    element data;
    if (st.at_key("data").get(data) == simdjson::SUCCESS && !data.is_null()) {
      std::string_view text;
      if (data.get(text) != simdjson::SUCCESS) return problem(f + ".data must be a base64 string", f + ".data");
      if (!text.empty()) {
        if (auto e = read_status_data(text, f + ".data", limits, &s.data)) return e;
      }
    }
    out->push_back(std::move(s));
  }
  return std::nullopt;
}

}  // namespace uvsched
