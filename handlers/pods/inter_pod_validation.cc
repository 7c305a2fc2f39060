#include "handlers/pods/inter_pod_validation.h"

#include <algorithm>
#include <set>
#include <utility>

#include "handlers/pods/pod_validation.h"

namespace uvsched {
namespace {

void required(std::vector<FieldIssue>* out, const std::string& field, const char* why = "Required value") {
  out->push_back({field, "FieldValueRequired", why});
}

void unsupported(std::vector<FieldIssue>* out, const std::string& field, const std::string& value,
                 const char* supported) {
  out->push_back(
      {field, "FieldValueNotSupported", "Unsupported value: \"" + value + "\": supported values: " + supported});
}

// A topologyKey: required, and a qualified name.
void validate_topology_key(const JsonValue& obj, const std::string& at, std::vector<FieldIssue>* out) {
  std::string key = obj.str("topologyKey");
  if (key.empty()) return required(out, at + ".topologyKey", "Required value: can not be empty");
  std::string joined;
  for (const auto& e : qualified_name_errors(key)) joined += (joined.empty() ? "" : ";") + e;
  if (!joined.empty()) {
    out->push_back({at + ".topologyKey", "FieldValueInvalid", "Invalid value: \"" + key + "\": " + joined});
  }
}

// A PodAffinityTerm (validatePodAffinityTerm).
void validate_term(const JsonValue& term, const std::string& at, std::vector<FieldIssue>* out) {
  validate_label_selector(term.get("labelSelector"), at + ".labelSelector", out);
  validate_label_selector(term.get("namespaceSelector"), at + ".namespaceSelector", out);
  if (const JsonValue* names = term.get("namespaces"); names && names->is_array()) {
    for (size_t i = 0; i < names->items().size(); ++i) {
      std::string n = names->items()[i].text();
      if (!is_dns1123_label(n)) {
        out->push_back({at + ".namespaces[" + std::to_string(i) + "]", "FieldValueInvalid",
                        "Invalid value: \"" + n +
                            "\": a lowercase RFC 1123 label must consist of lower case "
                            "alphanumeric characters or '-', and must start and end with an alphanumeric character"});
      }
    }
  }
  validate_topology_key(term, at, out);
}

void validate_pod_affinity(const JsonValue* a, const std::string& at, std::vector<FieldIssue>* out) {
  if (!a || !a->is_object()) return;
  if (const JsonValue* req = a->get("requiredDuringSchedulingIgnoredDuringExecution"); req && req->is_array()) {
    for (size_t i = 0; i < req->items().size(); ++i) {
      validate_term(req->items()[i], at + ".requiredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) + "]",
                    out);
    }
  }
  if (const JsonValue* pref = a->get("preferredDuringSchedulingIgnoredDuringExecution"); pref && pref->is_array()) {
    for (size_t i = 0; i < pref->items().size(); ++i) {
      const JsonValue& w = pref->items()[i];
      std::string f = at + ".preferredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) + "]";
      int64_t weight = w.get("weight") ? w.get("weight")->as_integer().value_or(0) : 0;
      if (weight <= 0 || weight > 100) {
        out->push_back({f + ".weight", "FieldValueInvalid",
                        "Invalid value: " + std::to_string(weight) + ": must be in the range 1-100"});
      }
      if (const JsonValue* term = w.get("podAffinityTerm"); term && term->is_object()) {
        validate_term(*term, f + ".podAffinityTerm", out);
      } else {
        required(out, f + ".podAffinityTerm.topologyKey", "Required value: can not be empty");
      }
    }
  }
}

void validate_spread(const JsonValue* list, std::vector<FieldIssue>* out) {
  if (!list || !list->is_array()) return;
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < list->items().size(); ++i) {
    const JsonValue& c = list->items()[i];
    std::string at = "spec.topologySpreadConstraints[" + std::to_string(i) + "]";
    int64_t skew = c.get("maxSkew") ? c.get("maxSkew")->as_integer().value_or(0) : 0;
    if (skew <= 0) {
      out->push_back({at + ".maxSkew", "FieldValueInvalid",
                      "Invalid value: " + std::to_string(skew) + ": must be greater than zero"});
    }
    validate_topology_key(c, at, out);
    std::string when = c.str("whenUnsatisfiable");
    if (when != "DoNotSchedule" && when != "ScheduleAnyway") {
      unsupported(out, at + ".whenUnsatisfiable", when, "\"DoNotSchedule\", \"ScheduleAnyway\"");
    }
    if (const JsonValue* m = c.get("minDomains"); m && !m->is_null()) {
      int64_t min = m->as_integer().value_or(0);
      if (min <= 0) {
        out->push_back({at + ".minDomains", "FieldValueInvalid",
                        "Invalid value: " + std::to_string(min) + ": must be greater than zero"});
      } else if (when != "DoNotSchedule") {
        out->push_back({at + ".minDomains", "FieldValueInvalid",
                        "Invalid value: " + std::to_string(min) +
                            ": can only use minDomains if whenUnsatisfiable=DoNotSchedule, not " + when});
      }
    }
    for (const char* policy : {"nodeAffinityPolicy", "nodeTaintsPolicy"}) {
      const JsonValue* p = c.get(policy);
      if (p && !p->is_null() && p->text() != "Honor" && p->text() != "Ignore") {
        unsupported(out, at + "." + policy, p->text(), "\"Honor\", \"Ignore\"");
      }
    }
    validate_label_selector(c.get("labelSelector"), at + ".labelSelector", out);
    if (!seen.insert({c.str("topologyKey"), when}).second) {
      out->push_back({at, "FieldValueDuplicate", "Duplicate value: \"{" + c.str("topologyKey") + ", " + when + "}\""});
    }
  }
}

}  // namespace

void validate_inter_pod(const JsonValue& spec, std::vector<FieldIssue>* out) {
  if (const JsonValue* affinity = spec.get("affinity"); affinity && affinity->is_object()) {
    validate_pod_affinity(affinity->get("podAffinity"), "spec.affinity.podAffinity", out);
    validate_pod_affinity(affinity->get("podAntiAffinity"), "spec.affinity.podAntiAffinity", out);
  }
  validate_spread(spec.get("topologySpreadConstraints"), out);
}

std::vector<std::string> unweighed_constraints(const JsonValue& pod) {
  std::vector<std::string> out;
  const JsonValue* affinity = pod.find({"spec", "affinity"});
  for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
    const JsonValue* a = affinity ? affinity->get(kind) : nullptr;
    if (!a || !a->is_object()) continue;
    const std::string at = "spec.affinity." + std::string(kind) + ".";
    const JsonValue* preferred = a->get("preferredDuringSchedulingIgnoredDuringExecution");
    if (preferred && preferred->is_array() && !preferred->items().empty()) {
      out.push_back(at +
                    "preferredDuringSchedulingIgnoredDuringExecution is a preference, which is not weighed: uvsched "
                    "places a pod on the first offer that fits what it requires");
    }
    const JsonValue* required = a->get("requiredDuringSchedulingIgnoredDuringExecution");
    if (!required || !required->is_array()) continue;
    for (size_t i = 0; i < required->items().size(); ++i) {
      const JsonValue* sel = required->items()[i].get("namespaceSelector");
      if (sel && !sel->is_null()) {
        out.push_back(at + "requiredDuringSchedulingIgnoredDuringExecution[" + std::to_string(i) +
                      "].namespaceSelector is not read: the term counts the pods of its namespaces (the pod's own "
                      "when it names none)");
      }
    }
  }
  if (const JsonValue* t = pod.find({"spec", "topologySpreadConstraints"}); t && t->is_array()) {
    for (size_t i = 0; i < t->items().size(); ++i) {
      if (t->items()[i].str("whenUnsatisfiable") == "ScheduleAnyway") {
        out.push_back("spec.topologySpreadConstraints[" + std::to_string(i) +
                      "] (ScheduleAnyway) is a preference, which is not weighed: uvsched places a pod on the first "
                      "offer that fits what it requires");
      }
    }
  }
  return out;
}

}  // namespace uvsched
