#include "handlers/pods/pod_events.h"

namespace uvsched {
namespace {

std::string meta_str(const JsonValue& pod, const char* key) {
  const JsonValue* v = pod.find({"metadata", key});
  return v && v->is_string() ? v->text() : "";
}

}  // namespace

JsonValue pod_event(const JsonValue& pod, const std::string& type, const std::string& reason,
                    const std::string& message, const std::string& when) {
  std::string ns = meta_str(pod, "namespace"), name = meta_str(pod, "name"), uid = meta_str(pod, "uid");
  JsonValue e = JsonValue::object();
  e.set("kind", JsonValue::string("Event"));
  e.set("apiVersion", JsonValue::string("v1"));
  JsonValue& meta = e.ensure({"metadata"});
  // Stable per pod and reason, as the name of a recorded event would be.
  meta.set("name", JsonValue::string(name + "." + reason));
  meta.set("namespace", JsonValue::string(ns));
  meta.set("uid", JsonValue::string(uid + "-" + reason));
  meta.set("creationTimestamp", JsonValue::string(when));  // (the list gives its resourceVersion)
  JsonValue& obj = e.ensure({"involvedObject"});
  obj.set("kind", JsonValue::string("Pod"));
  obj.set("namespace", JsonValue::string(ns));
  obj.set("name", JsonValue::string(name));
  obj.set("uid", JsonValue::string(uid));
  obj.set("apiVersion", JsonValue::string("v1"));
  obj.set("resourceVersion", JsonValue::string(meta_str(pod, "resourceVersion")));
  e.set("reason", JsonValue::string(reason));
  e.set("message", JsonValue::string(message));
  e.ensure({"source"}).set("component", JsonValue::string("uvsched"));
  e.set("firstTimestamp", JsonValue::string(when));
  e.set("lastTimestamp", JsonValue::string(when));
  e.set("count", JsonValue::integer(1));
  e.set("type", JsonValue::string(type));
  e.set("reportingComponent", JsonValue::string("uvsched"));
  e.set("reportingInstance", JsonValue::string(""));
  return e;
}

std::vector<JsonValue> pod_events(const JsonValue& pod) {
  std::vector<JsonValue> out;
  const JsonValue* scheduled = nullptr;
  const JsonValue* disrupted = nullptr;  // preempted
  const JsonValue* evicted = nullptr;    // by the taint manager
  if (const JsonValue* conds = pod.find({"status", "conditions"}); conds && conds->is_array()) {
    for (const JsonValue& c : conds->items()) {
      if (!c.is_object()) continue;
      if (c.str("type") == "PodScheduled") scheduled = &c;
      if (c.str("type") != "DisruptionTarget") continue;
      if (c.str("reason") == "PreemptionByScheduler") disrupted = &c;
      if (c.str("reason") == "DeletionByTaintManager") evicted = &c;
    }
  }
  std::string created = meta_str(pod, "creationTimestamp");
  std::string node = pod.find({"spec", "nodeName"}) ? pod.find({"spec", "nodeName"})->text() : "";
  if (!node.empty()) {
    std::string when = scheduled && scheduled->str("status") == "True" && !scheduled->str("lastTransitionTime").empty()
                           ? scheduled->str("lastTransitionTime")
                           : created;
    out.push_back(pod_event(
        pod, "Normal", "Scheduled",
        "Successfully assigned " + meta_str(pod, "namespace") + "/" + meta_str(pod, "name") + " to " + node, when));
  } else if (scheduled && scheduled->str("status") == "False") {
    std::string when = scheduled->str("lastTransitionTime").empty() ? created : scheduled->str("lastTransitionTime");
    std::string message = scheduled->str("message").empty() ? scheduled->str("reason") : scheduled->str("message");
    out.push_back(pod_event(pod, "Warning", "FailedScheduling", message, when));
  }
  // Preempted, as kube-scheduler records it on a victim (its message names the preemptor).
  if (disrupted)
    out.push_back(
        pod_event(pod, "Normal", "Preempted", disrupted->str("message"), disrupted->str("lastTransitionTime")));
  // Deleted by the taint manager, as it records it (the pod is gone once its task is).
  if (evicted)
    out.push_back(pod_event(pod, "Normal", "TaintManagerEviction",
                            "Marking for deletion Pod " + meta_str(pod, "namespace") + "/" + meta_str(pod, "name"),
                            evicted->str("lastTransitionTime")));
  // Failed past its activeDeadlineSeconds, as a kubelet records it (when its containers were stopped).
  if (const JsonValue* reason = pod.find({"status", "reason"}); reason && reason->text() == "DeadlineExceeded") {
    std::string when = created;
    if (const JsonValue* cs = pod.find({"status", "containerStatuses"}); cs && cs->is_array() && !cs->items().empty()) {
      const JsonValue* at = cs->items()[0].find({"state", "terminated", "finishedAt"});
      if (at && at->is_string()) when = at->text();
    }
    const JsonValue* message = pod.find({"status", "message"});
    out.push_back(pod_event(pod, "Normal", "DeadlineExceeded", message ? message->text() : "", when));
  }
  return out;
}

const std::vector<std::string>& event_selectable_fields() {
  static const std::vector<std::string> fields = {"involvedObject.kind",
                                                  "involvedObject.namespace",
                                                  "involvedObject.name",
                                                  "involvedObject.uid",
                                                  "involvedObject.apiVersion",
                                                  "involvedObject.resourceVersion",
                                                  "involvedObject.fieldPath",
                                                  "metadata.name",
                                                  "metadata.namespace",
                                                  "reason",
                                                  "reportingComponent",
                                                  "source",
                                                  "type"};
  return fields;
}

std::string event_field(const JsonValue& event, const std::string& dotted) {
  if (dotted == "source") {
    std::string component = event_field(event, "source.component");
    return component.empty() ? event.str("reportingController") : component;
  }
  const JsonValue* cur = &event;
  size_t start = 0;
  for (size_t dot = 0; cur && dot != std::string::npos; start = dot + 1) {
    dot = dotted.find('.', start);
    cur = cur->is_object() ? cur->get(std::string_view(dotted).substr(start, dot - start)) : nullptr;
  }
  return cur && cur->is_string() ? cur->text() : "";
}

}  // namespace uvsched
