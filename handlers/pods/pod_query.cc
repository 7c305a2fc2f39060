#include "handlers/pods/pod_query.h"

namespace uvsched {
namespace {

Labels labels_of(const JsonValue& obj) {
  Labels out;
  if (const JsonValue* l = obj.find({"metadata", "labels"}); l && l->is_object()) {
    for (const auto& [k, v] : l->members()) out[k] = v.text();
  }
  return out;
}

std::string text_at(const JsonValue& pod, const char* a, const char* b) {
  const JsonValue* v = pod.find({a, b});
  return v ? v->text() : "";
}

}  // namespace

bool PodQuery::selects(const JsonValue& pod) const {
  if (!labels.matches(labels_of(pod))) return false;
  for (const auto& f : fields) {
    std::string have;
    if (f.key == "metadata.name") have = text_at(pod, "metadata", "name");
    if (f.key == "metadata.namespace") have = text_at(pod, "metadata", "namespace");
    if (f.key == "spec.nodeName") have = text_at(pod, "spec", "nodeName");
    if (f.key == "status.phase") have = text_at(pod, "status", "phase");
    if ((have == f.value) == f.negate) return false;
  }
  return true;
}

}  // namespace uvsched
