#include "handlers/pods/pod_validation.h"

#include <absl/strings/ascii.h>

#include <algorithm>
#include <ctime>
#include <random>
#include <set>

#include "handlers/pods/inter_pod_validation.h"
#include "policy/quantity.h"
#include "reactor/json_writer.h"

namespace uvsched {
namespace {

bool alnum_lower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool alnum(char c) { return alnum_lower(c) || (c >= 'A' && c <= 'Z'); }

// Kubernetes' qualifiedName part and label value: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool is_qualified_name_part(std::string_view s) {
  if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// The messages are apimachinery's (util/validation), so a client sees what an
// API server would have said.
constexpr std::string_view kQualifiedNameRule =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
constexpr std::string_view kSubdomainRule =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
constexpr size_t kQualifiedNameMax = 63;
constexpr size_t kSubdomainMax = 253;
constexpr size_t kLabelValueMax = 63;
constexpr size_t kAnnotationsMaxBytes = 256 * 1024;  // keys and values together

// Kubernetes' subdomain regex, [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*,
// which limits the whole to 253 characters apart but not a part to 63 as a
// DNS label is: a pod may be named with 100 characters and no dot.
bool matches_subdomain(std::string_view s) {
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || !alnum_lower(part.front()) || !alnum_lower(part.back())) return false;
    for (char c : part) {
      if (!alnum_lower(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

void invalid(std::vector<FieldIssue>* out, const std::string& field, std::string_view value, std::string_view why) {
  out->push_back({field, "FieldValueInvalid", "Invalid value: " + quoted(value) + ": " + std::string(why)});
}

void check_quantities(const JsonValue* map, const std::string& field, std::vector<FieldIssue>* out) {
  if (map == nullptr || map->is_null()) return;
  if (!map->is_object()) {
    out->push_back({field, "FieldValueInvalid", "must be a map of resource names to quantities"});
    return;
  }
  for (const auto& [name, q] : map->members()) {
    std::string f = field + "[" + name + "]";
    std::string text = q.is_string() ? q.text() : (q.type() == JsonValue::Type::kNumber ? q.text() : "");
    if (text.empty() || !parse_quantity_milli(text)) {
      out->push_back(
          {f, "FieldValueInvalid", "Invalid value: \"" + text + "\": must be a quantity such as 500m, 2 or 128Mi"});
    }
  }
}

}  // namespace

bool is_dns1123_label(std::string_view s) {
  return s.size() <= 63 && s.find('.') == std::string_view::npos && matches_subdomain(s);
}

bool is_dns1123_subdomain(std::string_view s) { return s.size() <= kSubdomainMax && matches_subdomain(s); }

std::vector<std::string> qualified_name_errors(std::string_view s) {
  std::vector<std::string> errors;
  std::string_view name = s;
  if (size_t slash = s.find('/'); slash != std::string_view::npos) {
    if (s.find('/', slash + 1) != std::string_view::npos) {
      errors.push_back("a qualified name " + std::string(kQualifiedNameRule) +
                       " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errors;
    }
    std::string_view prefix = s.substr(0, slash);
    name = s.substr(slash + 1);
    if (prefix.empty()) {
      errors.push_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > kSubdomainMax) errors.push_back("prefix part must be no more than 253 characters");
      if (!matches_subdomain(prefix)) errors.push_back("prefix part " + std::string(kSubdomainRule));
    }
  }
  if (name.empty()) {
    errors.push_back("name part must be non-empty");
  } else if (name.size() > kQualifiedNameMax) {
    errors.push_back("name part must be no more than 63 characters");
  }
  if (!is_qualified_name_part(name)) errors.push_back("name part " + std::string(kQualifiedNameRule));
  return errors;
}

std::vector<std::string> label_value_errors(std::string_view v) {
  std::vector<std::string> errors;
  if (v.size() > kLabelValueMax) errors.push_back("must be no more than 63 characters");
  if (!v.empty() && !is_qualified_name_part(v)) {
    errors.push_back(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return errors;
}

void validate_labels(const JsonValue* labels, const std::string& field, std::vector<FieldIssue>* out) {
  if (labels == nullptr || labels->is_null()) return;
  if (!labels->is_object()) {
    out->push_back({field, "FieldValueInvalid", "must be a map of strings"});
    return;
  }
  for (const auto& [k, v] : labels->members()) {
    for (const std::string& why : qualified_name_errors(k)) invalid(out, field, k, why);
    if (!v.is_string()) {
      out->push_back({field + "[" + k + "]", "FieldValueInvalid", "must be a string"});
      continue;
    }
    for (const std::string& why : label_value_errors(v.text())) invalid(out, field, v.text(), why);
  }
}

namespace {

// validateTaintEffect: one of the three (or, for a toleration, none).
void validate_taint_effect(const JsonValue* effect, bool may_be_empty, const std::string& field,
                           std::vector<FieldIssue>* out) {
  std::string e = effect && effect->is_string() ? effect->text() : "";
  if (e.empty() && may_be_empty && (!effect || effect->is_string() || effect->is_null())) return;
  if (e.empty() && (!effect || effect->is_null() || effect->is_string())) {
    out->push_back({field, "FieldValueRequired", "Required value"});
    return;
  }
  if (e != "NoSchedule" && e != "PreferNoSchedule" && e != "NoExecute") {
    out->push_back({field, "FieldValueNotSupported",
                    "Unsupported value: " + (effect->is_string() ? "\"" + e + "\"" : effect->dump()) +
                        R"(: supported values: "NoSchedule", "PreferNoSchedule", "NoExecute")"});
  }
}

// A member that must be a string when given.
bool string_or_absent(const JsonValue& obj, const char* key, const std::string& field, std::vector<FieldIssue>* out) {
  const JsonValue* v = obj.get(key);
  if (!v || v->is_null() || v->is_string()) return true;
  out->push_back({field + "." + key, "FieldValueTypeInvalid", "Invalid value: " + v->dump() + ": must be a string"});
  return false;
}

// The objects of the list at `field`, each with its path; a list that is
// not one, or an item that is not an object, is an issue instead.
std::vector<std::pair<std::string, const JsonValue*>> list_objects(const JsonValue* list, const std::string& field,
                                                                   std::vector<FieldIssue>* out) {
  std::vector<std::pair<std::string, const JsonValue*>> objects;
  if (list == nullptr || list->is_null()) return objects;
  if (!list->is_array()) {
    out->push_back({field, "FieldValueTypeInvalid", "Invalid value: " + list->dump() + ": must be a list"});
    return objects;
  }
  for (size_t i = 0; i < list->items().size(); ++i) {
    const JsonValue& item = list->items()[i];
    std::string at = field + "[" + std::to_string(i) + "]";
    if (item.is_object()) {
      objects.emplace_back(std::move(at), &item);
    } else {
      out->push_back({at, "FieldValueTypeInvalid", "Invalid value: " + item.dump() + ": must be an object"});
    }
  }
  return objects;
}

// A label value's errors joined as the API server joins them (empty: valid).
void invalid_label_value(std::vector<FieldIssue>* out, const std::string& field, const std::string& value) {
  std::string joined;
  for (const auto& e : label_value_errors(value)) joined += (joined.empty() ? "" : ";") + e;
  if (!joined.empty()) invalid(out, field, value, joined);
}

}  // namespace

void validate_tolerations(const JsonValue* list, const std::string& field, std::vector<FieldIssue>* out) {
  for (const auto& [at, item] : list_objects(list, field, out)) {
    const JsonValue& t = *item;
    bool typed = true;
    for (const char* k : {"key", "operator", "value", "effect"}) typed = string_or_absent(t, k, at, out) && typed;
    const JsonValue* seconds = t.get("tolerationSeconds");
    if (seconds && !seconds->is_null() && !seconds->as_integer()) {
      out->push_back({at + ".tolerationSeconds", "FieldValueTypeInvalid",
                      "Invalid value: " + seconds->dump() + ": must be an integer"});
      typed = false;
    }
    if (!typed) continue;
    std::string key = t.str("key"), op = t.str("operator"), value = t.str("value"), effect = t.str("effect");
    if (!key.empty()) {
      for (const std::string& why : qualified_name_errors(key)) invalid(out, at + ".key", key, why);
    }
    if (key.empty() && op != "Exists") {
      invalid(out, at + ".operator", op,
              "operator must be Exists when `key` is empty, which means \"match all values and all keys\"");
    }
    if (seconds && !seconds->is_null() && effect != "NoExecute") {
      invalid(out, at + ".effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set");
    }
    if (op.empty() || op == "Equal") {
      invalid_label_value(out, at + ".operator", value);
    } else if (op == "Exists") {
      if (!value.empty()) invalid(out, at + ".operator", value, "value must be empty when `operator` is 'Exists'");
    } else {
      out->push_back({at + ".operator", "FieldValueNotSupported",
                      "Unsupported value: \"" + op + R"(": supported values: "Equal", "Exists")"});
    }
    if (!effect.empty()) validate_taint_effect(t.get("effect"), true, at + ".effect", out);
  }
}

void validate_taints(const JsonValue* list, const std::string& field, std::vector<FieldIssue>* out) {
  std::set<std::pair<std::string, std::string>> seen;  // (effect, key)
  for (const auto& [at, item] : list_objects(list, field, out)) {
    const JsonValue& t = *item;
    bool typed = true;
    for (const char* k : {"key", "value", "effect", "timeAdded"}) typed = string_or_absent(t, k, at, out) && typed;
    if (!typed) continue;
    std::string key = t.str("key"), value = t.str("value"), effect = t.str("effect");
    for (const std::string& why : qualified_name_errors(key)) invalid(out, at + ".key", key, why);
    invalid_label_value(out, at + ".value", value);
    validate_taint_effect(t.get("effect"), false, at + ".effect", out);
    if (const JsonValue* added = t.get("timeAdded"); added && added->is_string() && !parse_rfc3339_ms(added->text())) {
      invalid(out, at + ".timeAdded", added->text(), "must be an RFC 3339 time");
    }
    if (!seen.insert({effect, key}).second) {
      out->push_back({at, "FieldValueDuplicate",
                      "Duplicate value: \"" + key + ":" + effect + "\": taints must be unique by key and effect pair"});
    }
  }
}

std::vector<FieldIssue> validate_object_name(const JsonValue& obj) {
  std::vector<FieldIssue> out;
  const JsonValue* name = obj.find({"metadata", "name"});
  if (name == nullptr || !name->is_string() || name->text().empty()) {
    out.push_back({"metadata.name", "FieldValueRequired", "Required value: name or generateName is required"});
  } else if (!is_dns1123_subdomain(name->text())) {
    invalid(&out, "metadata.name", name->text(), kSubdomainRule);
  }
  // A prefix: it may end with the '-' the generated suffix follows.
  if (const JsonValue* g = obj.find({"metadata", "generateName"}); g && g->is_string() && !g->text().empty()) {
    std::string prefix = g->text();
    if (prefix.back() == '-') prefix.back() = 'a';
    if (!is_dns1123_subdomain(prefix)) invalid(&out, "metadata.generateName", g->text(), kSubdomainRule);
  }
  return out;
}

std::vector<FieldIssue> validate_object_meta(const JsonValue& obj) {
  std::vector<FieldIssue> out = validate_object_name(obj);
  validate_labels(obj.find({"metadata", "labels"}), "metadata.labels", &out);
  if (const JsonValue* a = obj.find({"metadata", "annotations"}); a && !a->is_null()) {
    if (!a->is_object()) {
      out.push_back({"metadata.annotations", "FieldValueInvalid", "must be a map of strings"});
    } else {
      size_t bytes = 0;
      for (const auto& [k, v] : a->members()) {
        // Kubernetes checks the key lower-cased: an annotation's key may have capitals in its prefix.
        for (const std::string& why : qualified_name_errors(absl::AsciiStrToLower(k)))
          invalid(&out, "metadata.annotations", k, why);
        bytes += k.size() + (v.is_string() ? v.text().size() : 0);
      }
      if (bytes > kAnnotationsMaxBytes) {
        out.push_back({"metadata.annotations", "FieldValueTooLong", "Too long: may not be more than 262144 bytes"});
      }
    }
  }
  if (const JsonValue* f = obj.find({"metadata", "finalizers"}); f && f->is_array()) {
    for (const JsonValue& name : f->items()) {
      if (!name.is_string()) continue;  // the typed decode speaks to the type
      for (const std::string& why : qualified_name_errors(name.text()))
        invalid(&out, "metadata.finalizers", name.text(), why);
    }
  }
  return out;
}

namespace {

size_t count_of(const JsonValue* values) { return values && values->is_array() ? values->items().size() : 0; }

// apimachinery's ValidateNodeSelectorRequirement (`numeric`: Gt and Lt
// too) and ValidateLabelSelectorRequirement, in their words.
void validate_label_requirement(const JsonValue& r, const std::string& at, std::vector<FieldIssue>* out,
                                bool numeric = true) {
  std::string op = r.str("operator");
  size_t n = count_of(r.get("values"));
  if (op == "In" || op == "NotIn") {
    if (n == 0)
      out->push_back({at + ".values", "FieldValueRequired",
                      "Required value: must be specified when `operator` is 'In' or 'NotIn'"});
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (n > 0)
      out->push_back({at + ".values", "FieldValueForbidden",
                      "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"});
  } else if (numeric && (op == "Gt" || op == "Lt")) {
    if (n != 1)
      out->push_back({at + ".values", "FieldValueRequired",
                      "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"});
  } else {
    out->push_back(
        {at + ".operator", "FieldValueInvalid", "Invalid value: \"" + op + "\": not a valid selector operator"});
  }
  for (const std::string& e : qualified_name_errors(r.str("key"))) {
    out->push_back({at + ".key", "FieldValueInvalid", "Invalid value: \"" + r.str("key") + "\": " + e});
  }
}

// validateNodeFieldSelectorRequirement: metadata.name, In or NotIn, one value.
void validate_field_requirement(const JsonValue& r, const std::string& at, std::vector<FieldIssue>* out) {
  std::string op = r.str("operator");
  if (op != "In" && op != "NotIn") {
    out->push_back(
        {at + ".operator", "FieldValueInvalid", "Invalid value: \"" + op + "\": not a valid selector operator"});
  } else if (count_of(r.get("values")) != 1) {
    out->push_back(
        {at + ".values", "FieldValueRequired",
         "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"});
  }
  if (r.str("key") != "metadata.name") {
    out->push_back(
        {at + ".key", "FieldValueInvalid", "Invalid value: \"" + r.str("key") + "\": not a valid field selector key"});
  }
}

// Each gate a qualified name, none twice; a pod bound to a node has none.
void validate_scheduling_gates(const JsonValue& spec, std::vector<FieldIssue>* out) {
  const JsonValue* gates = spec.get("schedulingGates");
  if (!gates || !gates->is_array() || gates->items().empty()) return;
  std::vector<std::string> seen;
  for (size_t i = 0; i < gates->items().size(); ++i) {
    std::string at = "spec.schedulingGates[" + std::to_string(i) + "].name";
    std::string name = gates->items()[i].is_object() ? gates->items()[i].str("name") : "";
    for (const std::string& e : qualified_name_errors(name)) {
      out->push_back({at, "FieldValueInvalid", "Invalid value: \"" + name + "\": " + e});
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
      out->push_back({at, "FieldValueDuplicate", "Duplicate value: \"" + name + "\""});
    }
    seen.push_back(name);
  }
  if (!spec.str("nodeName").empty()) {
    out->push_back({"spec.nodeName", "FieldValueForbidden",
                    "Forbidden: cannot be set until all schedulingGates have been cleared"});
  }
}

}  // namespace

void validate_node_affinity(const JsonValue* required, const std::string& at, std::vector<FieldIssue>* out) {
  if (!required || !required->is_object()) return;
  const JsonValue* terms = required->get("nodeSelectorTerms");
  if (count_of(terms) == 0) {
    out->push_back(
        {at + ".nodeSelectorTerms", "FieldValueRequired", "Required value: must have at least one node selector term"});
    return;
  }
  for (size_t i = 0; i < terms->items().size(); ++i) {
    const JsonValue& term = terms->items()[i];
    std::string t = at + ".nodeSelectorTerms[" + std::to_string(i) + "]";
    for (const char* kind : {"matchExpressions", "matchFields"}) {
      const JsonValue* list = term.get(kind);
      if (!list || !list->is_array()) continue;
      for (size_t j = 0; j < list->items().size(); ++j) {
        std::string r = t + "." + kind + "[" + std::to_string(j) + "]";
        if (std::string_view(kind) == "matchFields") {
          validate_field_requirement(list->items()[j], r, out);
        } else {
          validate_label_requirement(list->items()[j], r, out);
        }
      }
    }
  }
}

std::vector<FieldIssue> validate_pod(const JsonValue& pod) {
  std::vector<FieldIssue> out = validate_object_meta(pod);
  const JsonValue* spec = pod.get("spec");
  if (spec == nullptr || !spec->is_object()) {
    out.push_back({"spec", "FieldValueRequired", "Required value"});
    return out;
  }
  const JsonValue* containers = spec->get("containers");
  if (containers == nullptr || !containers->is_array() || containers->items().empty()) {
    out.push_back({"spec.containers", "FieldValueRequired", "Required value"});
  } else {
    std::vector<std::string> seen;
    for (size_t i = 0; i < containers->items().size(); ++i) {
      const JsonValue& c = containers->items()[i];
      std::string f = "spec.containers[" + std::to_string(i) + "]";
      std::string name = c.str("name");
      if (name.empty()) {
        out.push_back({f + ".name", "FieldValueRequired", "Required value"});
      } else if (!is_dns1123_label(name)) {
        out.push_back({f + ".name", "FieldValueInvalid", "Invalid value: \"" + name + "\": must be a DNS-1123 label"});
      } else if (std::find(seen.begin(), seen.end(), name) != seen.end()) {
        out.push_back({f + ".name", "FieldValueDuplicate", "Duplicate value: \"" + name + "\""});
      }
      seen.push_back(name);
      if (c.str("image").empty()) out.push_back({f + ".image", "FieldValueRequired", "Required value"});
      if (const JsonValue* res = c.get("resources"); res && res->is_object()) {
        check_quantities(res->get("requests"), f + ".resources.requests", &out);
        check_quantities(res->get("limits"), f + ".resources.limits", &out);
      }
      if (const JsonValue* ports = c.get("ports"); ports && ports->is_array()) {
        for (size_t p = 0; p < ports->items().size(); ++p) {
          const JsonValue& port = ports->items()[p];
          std::string pf = f + ".ports[" + std::to_string(p) + "]";
          for (const char* key : {"containerPort", "hostPort"}) {
            const JsonValue* v = port.get(key);
            if (v == nullptr || v->is_null()) continue;
            auto n = v->as_integer();
            if (!n || *n < 1 || *n > 65535) {
              out.push_back(
                  {pf + "." + key, "FieldValueInvalid", "Invalid value: must be between 1 and 65535, inclusive"});
            }
          }
        }
      }
    }
  }
  if (const JsonValue* rp = spec->get("restartPolicy"); rp && !rp->is_null()) {
    std::string v = rp->is_string() ? rp->text() : "";
    if (v != "Always" && v != "OnFailure" && v != "Never") {
      out.push_back({"spec.restartPolicy", "FieldValueNotSupported",
                     "Unsupported value: \"" + v + "\": supported values: \"Always\", \"OnFailure\", \"Never\""});
    }
  }
  if (const JsonValue* ads = spec->get("activeDeadlineSeconds"); ads && !ads->is_null()) {
    auto n = ads->as_integer();
    if (!n || *n < 1 || *n > INT32_MAX) {
      out.push_back({"spec.activeDeadlineSeconds", "FieldValueInvalid",
                     "Invalid value: " + (n ? std::to_string(*n) : ads->dump()) +
                         ": must be between 1 and 2147483647, inclusive"});
    }
  }
  validate_labels(spec->get("nodeSelector"), "spec.nodeSelector", &out);
  validate_tolerations(spec->get("tolerations"), "spec.tolerations", &out);
  validate_scheduling_gates(*spec, &out);
  validate_node_affinity(spec->find({"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"}),
                         "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution", &out);
  validate_inter_pod(*spec, &out);
  return out;
}

namespace {

// Every element of `part` is in `whole`.
bool contains_all(const JsonValue* whole, const JsonValue* part) {
  if (!part || !part->is_array()) return true;
  if (!whole || !whole->is_array()) return part->items().empty();
  for (const JsonValue& p : part->items()) {
    bool found = false;
    for (const JsonValue& w : whole->items()) found = found || w.same_as(p);
    if (!found) return false;
  }
  return true;
}

// `spec` takes `old`'s value of `key` (or loses its own when `old` has none).
void keep_old(JsonValue& spec, const JsonValue& old, std::string_view key) {
  if (const JsonValue* v = old.get(key)) {
    spec.set(key, *v);
  } else {
    spec.erase(key);
  }
}

}  // namespace

std::vector<std::string> container_images(const JsonValue& pod) {
  std::vector<std::string> images;
  for (std::string_view kind : {"initContainers", "containers"}) {
    const JsonValue* list = pod.find({"spec", kind});
    if (!list || !list->is_array()) continue;
    for (const JsonValue& c : list->items()) images.emplace_back(c.is_object() ? c.str("image") : "");
  }
  return images;
}

std::vector<FieldIssue> validate_pod_update(const JsonValue& old_pod, const JsonValue& next) {
  // As the API server does: copy into the new spec what may change, then the
  // rest must equal the old spec.
  JsonValue old = old_pod.get("spec") ? *old_pod.get("spec") : JsonValue::object();
  JsonValue spec = next.get("spec") ? *next.get("spec") : JsonValue::object();
  if (!old.is_object() || !spec.is_object()) return {};  // validate_pod speaks to a spec that is not an object
  for (std::string_view kind : {"containers", "initContainers"}) {
    const JsonValue* was = old.get(kind);
    JsonValue* now = spec.get(kind);
    if (!was || !now || !was->is_array() || !now->is_array() || was->items().size() != now->items().size()) continue;
    for (size_t i = 0; i < now->items().size(); ++i) {
      if (now->items()[i].is_object() && was->items()[i].is_object())
        keep_old(now->items()[i], was->items()[i], "image");
    }
  }
  std::vector<FieldIssue> issues;
  // A deadline may be set or lowered, never raised nor taken away (the API
  // server's checks): the deadline a running pod was given only nears.
  const JsonValue* was_ads = old.get("activeDeadlineSeconds");
  const JsonValue* now_ads = spec.get("activeDeadlineSeconds");
  std::optional<int64_t> was_n = was_ads ? was_ads->as_integer() : std::nullopt;
  std::optional<int64_t> now_n = now_ads && !now_ads->is_null() ? now_ads->as_integer() : std::nullopt;
  if (was_n && !now_n && (!now_ads || now_ads->is_null())) {
    issues.push_back({"spec.activeDeadlineSeconds", "FieldValueInvalid",
                      "Invalid value: \"null\": must not update from a positive integer to nil value"});
  } else if (was_n && now_n && *now_n > *was_n) {
    issues.push_back({"spec.activeDeadlineSeconds", "FieldValueInvalid",
                      "Invalid value: " + std::to_string(*now_n) + ": must be less than or equal to previous value"});
  }
  keep_old(spec, old, "activeDeadlineSeconds");
  if (contains_all(spec.get("tolerations"), old.get("tolerations"))) keep_old(spec, old, "tolerations");
  if (old.str("nodeName").empty() && contains_all(old.get("schedulingGates"), spec.get("schedulingGates"))) {
    keep_old(spec, old, "schedulingGates");
  }
  if (old_pod.find({"metadata", "deletionTimestamp"})) {
    const JsonValue* had = old_pod.find({"metadata", "finalizers"});
    if (!contains_all(had, next.find({"metadata", "finalizers"}))) {
      issues.push_back({"metadata.finalizers", "FieldValueForbidden",
                        "Forbidden: no new finalizers can be added if the object is being deleted"});
    }
  }
  if (spec.same_as(old)) return issues;
  issues.push_back(
      {"spec", "FieldValueForbidden",
       "Forbidden: pod updates may not change fields other than `spec.containers[*].image`, "
       "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to "
       "existing tolerations) and `spec.schedulingGates` (only removals, before the pod is scheduled)"});
  return issues;
}

void default_pod(JsonValue& pod, const std::string& ns, const std::string& uid, const std::string& now) {
  // kind, apiVersion and metadata lead, so stored pods have one shape.
  JsonValue out = JsonValue::object();
  out.set("kind", JsonValue::string("Pod"));
  out.set("apiVersion", JsonValue::string("v1"));
  JsonValue meta = pod.get("metadata") ? std::move(*pod.get("metadata")) : JsonValue::object();  // pod is remade below
  meta.erase("resourceVersion");
  meta.set("namespace", JsonValue::string(ns));
  meta.set("uid", JsonValue::string(uid));
  meta.set("creationTimestamp", JsonValue::string(now));
  out.set("metadata", std::move(meta));
  for (auto& [k, v] : pod.members()) {
    if (k != "kind" && k != "apiVersion" && k != "metadata") out.set(k, std::move(v));
  }
  JsonValue& spec = out.ensure({"spec"});
  if (spec.str("restartPolicy").empty()) spec.set("restartPolicy", JsonValue::string("Always"));
  if (spec.str("dnsPolicy").empty()) spec.set("dnsPolicy", JsonValue::string("ClusterFirst"));
  if (!spec.get("terminationGracePeriodSeconds")) spec.set("terminationGracePeriodSeconds", JsonValue::integer(30));
  if (spec.str("schedulerName").empty()) spec.set("schedulerName", JsonValue::string("uvsched"));
  JsonValue& status = out.ensure({"status"});
  if (status.str("phase").empty()) status.set("phase", JsonValue::string("Pending"));
  // As the API server's pod strategy marks a pod created with scheduling gates.
  // (`spec` is not used past here: ensuring "status" may move out's members.)
  if (const JsonValue* gates = out.find({"spec", "schedulingGates"});
      gates && gates->is_array() && !gates->items().empty()) {
    JsonValue gated = JsonValue::object();
    gated.set("type", JsonValue::string("PodScheduled"));
    gated.set("status", JsonValue::string("False"));
    gated.set("reason", JsonValue::string("SchedulingGated"));
    gated.set("message", JsonValue::string("Scheduling is blocked due to non-empty scheduling gates"));
    gated.set("lastTransitionTime", JsonValue::string(now));
    JsonValue conditions = JsonValue::array();
    conditions.push(std::move(gated));
    status.set("conditions", std::move(conditions));
  }
  pod = std::move(out);
}

std::string invalid_status_json(std::string_view kind, std::string_view name, const std::vector<FieldIssue>& issues) {
  std::string message = std::string(kind) + " \"" + std::string(name) + "\" is invalid: ";
  for (size_t i = 0; i < issues.size(); ++i) {
    if (i > 0) message += ", ";
    message += issues[i].field + ": " + issues[i].message;
  }
  JsonWriter w;
  w.begin_object().key("kind").value("Status").key("apiVersion").value("v1");
  w.key("metadata").begin_object().end_object().key("status").value("Failure");
  w.key("message").value(message).key("reason").value("Invalid");
  w.key("details").begin_object().key("name").value(name).key("kind").value(kind).key("causes").begin_array();
  for (const auto& i : issues) {
    w.begin_object()
        .key("reason")
        .value(i.reason)
        .key("message")
        .value(i.message)
        .key("field")
        .value(i.field)
        .end_object();
  }
  w.end_array().end_object().key("code").value(422).end_object();
  return w.take();
}

// A pod's create and binding stamp it several times within one second:
// gmtime and strftime run once a second, not once a stamp.
std::string rfc3339(int64_t unix_ms) {
  thread_local int64_t last_secs = -1;
  thread_local char last[32];
  int64_t secs = unix_ms / 1000;
  if (secs != last_secs) {
    time_t t = static_cast<time_t>(secs);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(last, sizeof last, "%Y-%m-%dT%H:%M:%SZ", &tm);
    last_secs = secs;
  }
  return last;
}

std::optional<int64_t> parse_rfc3339_ms(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS, then .fraction, then Z or ±HH:MM.
  auto digits = [&s](size_t at, size_t n) -> std::optional<int> {
    if (at + n > s.size()) return std::nullopt;
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  auto year = digits(0, 4), month = digits(5, 2), day = digits(8, 2);
  auto hour = digits(11, 2), minute = digits(14, 2), second = digits(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60)
    return std::nullopt;
  size_t at = 19;
  int64_t ms = 0;
  if (at < s.size() && s[at] == '.') {
    size_t start = ++at;
    int64_t scale = 100;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
      ms += (s[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == start) return std::nullopt;
  }
  int64_t offset_s = 0;
  if (at < s.size() && (s[at] == 'Z' || s[at] == 'z')) {
    ++at;
  } else if (at < s.size() && (s[at] == '+' || s[at] == '-')) {
    auto oh = digits(at + 1, 2), om = digits(at + 4, 2);
    if (!oh || !om || at + 3 >= s.size() || s[at + 3] != ':' || *oh > 23 || *om > 59) return std::nullopt;
    offset_s = (s[at] == '+' ? 1 : -1) * (*oh * 3600 + *om * 60);
    at += 6;
  } else {
    return std::nullopt;
  }
  if (at != s.size()) return std::nullopt;
  struct tm tm = {};
  tm.tm_year = *year - 1900;
  tm.tm_mon = *month - 1;
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *minute;
  tm.tm_sec = *second;
  return (static_cast<int64_t>(timegm(&tm)) - offset_s) * 1000 + ms;
}

// A version 4 UUID (RFC 4122): 122 random bits in the 8-4-4-4-12 hex form.
std::string new_uid() {
  static std::mt19937_64 rng{std::random_device{}()};
  uint64_t a = rng(), b = rng();
  a = (a & ~0xf000ULL) | 0x4000ULL;                          // version 4
  b = (b & ~0xc000000000000000ULL) | 0x8000000000000000ULL;  // variant 10
  static constexpr char kHex[] = "0123456789abcdef";
  struct Group {
    uint64_t bits;  // the group is the low 4 * digits of them
    int digits;
  } groups[] = {{a >> 32, 8}, {a >> 16, 4}, {a, 4}, {b >> 48, 4}, {b, 12}};
  std::string out;
  out.reserve(36);
  for (const Group& g : groups) {
    if (!out.empty()) out += '-';
    for (int d = g.digits - 1; d >= 0; --d) out += kHex[(g.bits >> (4 * d)) & 0xf];
  }
  return out;
}

void validate_label_selector(const JsonValue* selector, const std::string& at, std::vector<FieldIssue>* out) {
  if (!selector || selector->is_null()) return;
  if (!selector->is_object()) {
    out->push_back({at, "FieldValueTypeInvalid", "Invalid value: must be an object"});
    return;
  }
  validate_labels(selector->get("matchLabels"), at + ".matchLabels", out);
  const JsonValue* exprs = selector->get("matchExpressions");
  if (!exprs || exprs->is_null()) return;
  if (!exprs->is_array()) {
    out->push_back({at + ".matchExpressions", "FieldValueTypeInvalid", "Invalid value: must be an array"});
    return;
  }
  for (size_t i = 0; i < exprs->items().size(); ++i) {
    const JsonValue& e = exprs->items()[i];
    std::string here = at + ".matchExpressions[" + std::to_string(i) + "]";
    if (!e.is_object()) {
      out->push_back({here, "FieldValueTypeInvalid", "Invalid value: must be an object"});
      continue;
    }
    const JsonValue* values = e.get("values");
    if (values && !values->is_null() && !values->is_array()) {
      out->push_back({here + ".values", "FieldValueTypeInvalid", "Invalid value: must be an array"});
      continue;
    }
    validate_label_requirement(e, here, out, /*numeric=*/false);
    for (size_t j = 0; j < count_of(values); ++j) {
      const JsonValue& v = values->items()[j];
      std::string at_value = here + ".values[" + std::to_string(j) + "]";
      if (!v.is_string()) {
        out->push_back({at_value, "FieldValueTypeInvalid", "Invalid value: must be a string"});
        continue;
      }
      for (const auto& why : label_value_errors(v.text()))
        out->push_back({at_value, "FieldValueInvalid", "Invalid value: \"" + v.text() + "\": " + why});
    }
  }
}

}  // namespace uvsched
