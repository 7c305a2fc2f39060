#include "handlers/pods/pod_query.h"

#include <algorithm>
#include <cstdlib>

#include "reactor/url.h"
#include "storage/base64.h"

namespace uvsched {

Labels labels_of(const JsonValue& obj) {
  Labels out;
  if (const JsonValue* l = obj.find({"metadata", "labels"}); l && l->is_object()) {
    for (const auto& [k, v] : l->members()) out[k] = v.text();
  }
  return out;
}

namespace {

std::string text_at(const JsonValue& pod, const char* a, const char* b) {
  const JsonValue* v = pod.find({a, b});
  return v ? v->text() : "";
}

}  // namespace

std::optional<PodQuery> PodQuery::parse(std::string_view query, std::string* error) {
  PodQuery q;
  if (auto ls = query_param(query, "labelSelector")) {
    std::string why;
    auto sel = LabelSelector::parse(*ls, &why);
    if (!sel) {
      *error = "unable to parse requirement: " + why;
      return std::nullopt;
    }
    q.labels = std::move(*sel);
  }
  if (auto fs = query_param(query, "fieldSelector")) {
    auto f = parse_field_selector(*fs, {"metadata.name", "metadata.namespace", "spec.nodeName", "status.phase"}, error);
    if (!f) return std::nullopt;
    q.fields = std::move(*f);
  }
  if (auto l = query_param(query, "limit")) q.limit = std::max<int64_t>(0, std::strtoll(l->c_str(), nullptr, 10));
  if (auto c = query_param(query, "continue"); c && !c->empty()) {
    auto key = base64_decode(*c);
    if (!key) {
      *error = "invalid continue token";
      return std::nullopt;
    }
    q.continue_after = *key;
  }
  return q;
}

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
