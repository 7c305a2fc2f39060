#include "handlers/pods/pod_table.h"

#include <cctype>
#include <ctime>

#include "handlers/pods/pod_validation.h"
#include "reactor/json_writer.h"
#include "reactor/url.h"

namespace uvsched {

std::string table_age(const JsonValue& obj, int64_t now_ms) {
  const JsonValue* ts = obj.find({"metadata", "creationTimestamp"});
  if (ts == nullptr || !ts->is_string()) return "<unknown>";
  int64_t created = parse_rfc3339_ms(ts->text()).value_or(0);
  return human_age(std::max<int64_t>(0, (now_ms - created) / 1000));
}

void begin_table(JsonWriter& w, const std::vector<TableColumn>& columns) {
  w.begin_object().key("kind").value("Table").key("apiVersion").value("meta.k8s.io/v1");
  w.key("columnDefinitions").begin_array();
  for (const auto& c : columns) {
    w.begin_object().key("name").value(c.name).key("type").value(c.type).key("format").value(c.format);
    w.key("description").value("").key("priority").value(c.priority).end_object();
  }
  w.end_array().key("rows").begin_array();
}

void end_table(JsonWriter& w, const std::string& rv, const std::string& continue_token) {
  w.end_array().key("metadata").begin_object().key("resourceVersion").value(rv);
  if (!continue_token.empty()) w.key("continue").value(continue_token);
  w.end_object().end_object();
}

void write_row_object(JsonWriter& w, const JsonValue& obj, RowObject row) {
  if (row == RowObject::kNone) return;
  if (row == RowObject::kObject) {  // stored objects carry their kind and apiVersion
    w.key("object");
    obj.write(w);
    return;
  }
  w.key("object").begin_object().key("kind").value("PartialObjectMetadata").key("apiVersion").value("meta.k8s.io/v1");
  w.key("metadata");
  if (const JsonValue* m = obj.get("metadata")) {
    m->write(w);
  } else {
    w.begin_object().end_object();
  }
  w.end_object();
}

namespace {

std::string or_none(const std::string& s) { return s.empty() ? "<none>" : s; }

}  // namespace

TableAsk table_ask(const HttpRequest& request) {
  TableAsk ask;
  const std::string* accept = request.header("Accept");
  ask.wanted = accept && accept->find("as=Table") != std::string::npos;
  if (!ask.wanted) return ask;  // the API server reads includeObject for Tables only
  auto include = query_param(request.query(), "includeObject");
  if (!include || include->empty() || *include == "Metadata") return ask;
  if (*include == "Object") {
    ask.row = RowObject::kObject;
  } else if (*include == "None") {
    ask.row = RowObject::kNone;
  } else {
    ask.error =
        "includeObject: Unsupported value: \"" + *include + "\": supported values: \"Metadata\", \"None\", \"Object\"";
  }
  return ask;
}

std::string human_age(int64_t s) {
  if (s < 120) return std::to_string(s) + "s";
  if (s < 600) return std::to_string(s / 60) + "m" + (s % 60 ? std::to_string(s % 60) + "s" : "");
  if (s < 3 * 3600) return std::to_string(s / 60) + "m";
  if (s < 8 * 3600) return std::to_string(s / 3600) + "h" + (s % 3600 / 60 ? std::to_string(s % 3600 / 60) + "m" : "");
  if (s < 48 * 3600) return std::to_string(s / 3600) + "h";
  if (s < 8 * 86400)
    return std::to_string(s / 86400) + "d" + (s % 86400 / 3600 ? std::to_string(s % 86400 / 3600) + "h" : "");
  return std::to_string(s / 86400) + "d";
}

PodTableWriter::PodTableWriter(const std::string& rv, int64_t now_ms, RowObject row)
    : resource_version_(rv), now_ms_(now_ms), row_(row) {
  begin_table(w_, {{"Name", "string", "name", 0},
                   {"Ready", "string", "", 0},
                   {"Status", "string", "", 0},
                   {"Restarts", "string", "", 0},
                   {"Age", "string", "", 0},
                   {"IP", "string", "", 1},
                   {"Node", "string", "", 1},
                   {"Nominated Node", "string", "", 1},
                   {"Readiness Gates", "string", "", 1}});
}

PodSummary pod_summary(const JsonValue& pod) {
  PodSummary out;
  const JsonValue* containers = pod.find({"spec", "containers"});
  out.total = containers && containers->is_array() ? containers->items().size() : 0;
  const JsonValue* status = pod.get("status");
  std::string reason = status ? status->str("phase") : "";
  if (status && !status->str("reason").empty()) reason = status->str("reason");
  bool ready_condition = false;
  if (const JsonValue* conds = status ? status->get("conditions") : nullptr; conds && conds->is_array()) {
    for (const auto& c : conds->items()) {
      if (c.str("type") == "PodScheduled" && c.str("reason") == "SchedulingGated") reason = "SchedulingGated";
      if (c.str("type") == "Ready" && c.str("status") == "True") ready_condition = true;
    }
  }
  // kubectl walks the containers from the last to the first, so the first
  // one that says why it is not running names the pod's state.
  bool running = false;
  if (const JsonValue* statuses = status ? status->get("containerStatuses") : nullptr;
      statuses && statuses->is_array()) {
    const auto& items = statuses->items();
    for (auto cs = items.rbegin(); cs != items.rend(); ++cs) {
      if (const JsonValue* n = cs->get("restartCount")) {
        out.restarts += static_cast<size_t>(std::max<int64_t>(0, n->as_integer().value_or(0)));
      }
      const JsonValue* waiting = cs->find({"state", "waiting"});
      const JsonValue* terminated = cs->find({"state", "terminated"});
      const JsonValue* ready = cs->get("ready");
      if (waiting && !waiting->str("reason").empty()) {
        reason = waiting->str("reason");
      } else if (terminated && !terminated->str("reason").empty()) {
        reason = terminated->str("reason");
      } else if (terminated && terminated->is_object()) {
        const JsonValue* signal = terminated->get("signal");
        const JsonValue* code = terminated->get("exitCode");
        int64_t sig = signal ? signal->as_integer().value_or(0) : 0;
        reason = sig != 0 ? "Signal:" + std::to_string(sig)
                          : "ExitCode:" + std::to_string(code ? code->as_integer().value_or(0) : 0);
      } else if (ready && ready->as_bool() && cs->find({"state", "running"})) {
        running = true;
        ++out.ready;
      }
    }
  }
  if (reason == "Completed" && running) reason = ready_condition ? "Running" : "NotReady";
  if (pod.find({"metadata", "deletionTimestamp"}))
    reason = status && status->str("reason") == "NodeLost" ? "Unknown" : "Terminating";
  out.status = reason.empty() ? "Unknown" : reason;
  return out;
}

void PodTableWriter::add(const JsonValue& pod) {
  JsonWriter& w = w_;
  PodSummary summary = pod_summary(pod);
  const JsonValue* status = pod.get("status");
  const JsonValue* spec = pod.get("spec");
  w.begin_object().key("cells").begin_array();
  w.value(pod.find({"metadata", "name"}) ? pod.find({"metadata", "name"})->text() : "");
  w.value(std::to_string(summary.ready) + "/" + std::to_string(summary.total));
  w.value(summary.status);
  w.value(std::to_string(summary.restarts));
  w.value(table_age(pod, now_ms_));
  w.value(or_none(status ? status->str("podIP") : ""));
  w.value(or_none(spec ? spec->str("nodeName") : ""));
  w.value("<none>").value("<none>");
  w.end_array();
  write_row_object(w, pod, row_);
  w.end_object();
}

std::string PodTableWriter::finish(const std::string& continue_token) {
  end_table(w_, resource_version_, continue_token);
  return w_.take();
}

std::string pod_table(const std::vector<JsonValue>& pods, const std::string& rv, int64_t now_ms, RowObject row) {
  PodTableWriter t(rv, now_ms, row);
  for (const auto& pod : pods) t.add(pod);
  return t.finish();
}

std::string node_table(const std::vector<JsonValue>& nodes, const std::string& rv, int64_t now_ms, RowObject row) {
  JsonWriter w;
  // As kube's node printer: the last five only with -o wide.
  begin_table(w, {{"Name", "string", "name", 0},
                  {"Status", "string", "", 0},
                  {"Roles", "string", "", 0},
                  {"Age", "string", "", 0},
                  {"Version", "string", "", 0},
                  {"Internal-IP", "string", "", 1},
                  {"External-IP", "string", "", 1},
                  {"OS-Image", "string", "", 1},
                  {"Kernel-Version", "string", "", 1},
                  {"Container-Runtime", "string", "", 1}});
  for (const auto& node : nodes) {
    std::string ready = "Unknown";
    if (const JsonValue* conds = node.find({"status", "conditions"}); conds && conds->is_array()) {
      for (const auto& c : conds->items()) {
        if (c.str("type") == "Ready") ready = c.str("status") == "True" ? "Ready" : "NotReady";
      }
    }
    if (const JsonValue* u = node.find({"spec", "unschedulable"}); u && u->dump() == "true") {
      ready += ",SchedulingDisabled";  // as kubectl prints a cordoned node
    }
    w.begin_object().key("cells").begin_array();
    w.value(node.find({"metadata", "name"}) ? node.find({"metadata", "name"})->text() : "");
    w.value(ready).value("<none>").value(table_age(node, now_ms)).value("uvsched");
    // An agent is known by its hostname: no address of either kind, no system facts.
    std::string internal = "<none>", external = "<none>";
    if (const JsonValue* addrs = node.find({"status", "addresses"}); addrs && addrs->is_array()) {
      for (const auto& a : addrs->items()) {
        if (a.str("type") == "InternalIP" && internal == "<none>") internal = a.str("address");
        if (a.str("type") == "ExternalIP" && external == "<none>") external = a.str("address");
      }
    }
    w.value(internal).value(external).value("<unknown>").value("<unknown>").value("<unknown>");
    w.end_array();
    write_row_object(w, node, row);
    w.end_object();
  }
  end_table(w, rv);
  return w.take();
}

std::string namespace_table(const std::vector<JsonValue>& namespaces, const std::string& rv, int64_t now_ms,
                            RowObject row) {
  JsonWriter w;
  begin_table(w, {{"Name", "string", "name", 0}, {"Status", "string", "", 0}, {"Age", "string", "", 0}});
  for (const auto& ns : namespaces) {
    w.begin_object().key("cells").begin_array();
    w.value(ns.find({"metadata", "name"}) ? ns.find({"metadata", "name"})->text() : "");
    w.value("Active").value(table_age(ns, now_ms));
    w.end_array();
    write_row_object(w, ns, row);
    w.end_object();
  }
  end_table(w, rv);
  return w.take();
}

std::string event_table(const std::vector<JsonValue>& events, const std::string& rv, int64_t now_ms, RowObject row) {
  JsonWriter w;
  begin_table(w, {{"Last Seen", "string", "", 0},
                  {"Type", "string", "", 0},
                  {"Reason", "string", "", 0},
                  {"Object", "string", "", 0},
                  {"Message", "string", "", 0}});
  for (const auto& e : events) {
    int64_t last = parse_rfc3339_ms(e.str("lastTimestamp")).value_or(0);
    const JsonValue* obj = e.get("involvedObject");
    std::string kind = obj ? obj->str("kind") : "";
    for (auto& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    w.begin_object().key("cells").begin_array();
    w.value(last == 0 ? "<unknown>" : human_age(std::max<int64_t>(0, (now_ms - last) / 1000)));
    w.value(e.str("type")).value(e.str("reason")).value(kind + "/" + (obj ? obj->str("name") : ""));
    w.value(e.str("message"));
    w.end_array();
    write_row_object(w, e, row);
    w.end_object();
  }
  end_table(w, rv);
  return w.take();
}

}  // namespace uvsched
