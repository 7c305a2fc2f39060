#include "handlers/pods/disruption_budget_objects.h"

#include <cstdlib>

#include "handlers/pods/k8s_protobuf.h"
#include "handlers/pods/label_selector_json.h"
#include "handlers/pods/pod_fields.h"
#include "handlers/pods/pod_validation.h"

namespace uvsched {
namespace {

constexpr const char* kPercentHint =
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for "
    "validation is '[0-9]+%')";

// minAvailable or maxUnavailable as stored: a whole number, or "N%".
std::optional<IntOrPercent> int_or_percent(const JsonValue* v) {
  if (!v || v->is_null()) return std::nullopt;
  if (v->type() == JsonValue::Type::kNumber) {
    auto n = v->as_integer();
    if (!n || *n < 0 || *n > INT32_MAX) return std::nullopt;
    return IntOrPercent{static_cast<int32_t>(*n), false};
  }
  if (!v->is_string()) return std::nullopt;
  const std::string& s = v->text();
  if (s.size() < 2 || s.back() != '%' || s.size() > 5) return std::nullopt;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
  }
  return IntOrPercent{static_cast<int32_t>(std::strtol(s.c_str(), nullptr, 10)), true};
}

void check_int_or_percent(const JsonValue* v, const std::string& field, std::vector<FieldIssue>& issues) {
  if (!v || v->is_null()) return;
  if (v->type() == JsonValue::Type::kNumber) {
    auto n = v->as_integer();
    if (!n) {
      issues.push_back({field, "FieldValueTypeInvalid", "Invalid value: must be an integer or a percent string"});
    } else if (*n < 0) {
      issues.push_back({field, "FieldValueInvalid",
                        "Invalid value: " + std::to_string(*n) + ": must be greater than or equal to 0"});
    }
    return;
  }
  if (!v->is_string()) {
    issues.push_back({field, "FieldValueTypeInvalid", "Invalid value: must be an integer or a percent string"});
    return;
  }
  auto parsed = int_or_percent(v);
  if (!parsed) {
    issues.push_back({field, "FieldValueInvalid", "Invalid value: \"" + v->text() + "\": " + kPercentHint});
  } else if (parsed->value > 100) {
    issues.push_back(
        {field, "FieldValueInvalid", "Invalid value: \"" + v->text() + "\": must be no greater than 100%"});
  }
}

std::vector<FieldIssue> admit_budget(JsonValue& pdb, const JsonValue* old) {
  std::vector<FieldIssue> issues;
  const JsonValue* spec = pdb.get("spec");
  if (spec && !spec->is_null() && !spec->is_object()) {
    issues.push_back({"spec", "FieldValueTypeInvalid", "Invalid value: must be an object"});
    return issues;
  }
  if (spec && spec->is_object()) {
    const JsonValue* min = spec->get("minAvailable");
    const JsonValue* max = spec->get("maxUnavailable");
    if (min && !min->is_null() && max && !max->is_null())
      issues.push_back(
          {"spec", "FieldValueInvalid", "Invalid value: minAvailable and maxUnavailable cannot be both set"});
    check_int_or_percent(min, "spec.minAvailable", issues);
    check_int_or_percent(max, "spec.maxUnavailable", issues);
    validate_label_selector(spec->get("selector"), "spec.selector", &issues);
    if (const JsonValue* p = spec->get("unhealthyPodEvictionPolicy"); p && !p->is_null()) {
      if (!p->is_string() || (p->text() != "IfHealthyBudget" && p->text() != "AlwaysAllow"))
        issues.push_back({"spec.unhealthyPodEvictionPolicy", "FieldValueNotSupported",
                          "Unsupported value: supported values: \"AlwaysAllow\", \"IfHealthyBudget\""});
    }
  }
  // The status is the controller's: a create starts from nothing, an update keeps what is stored.
  if (!old) {
    pdb.set("status", budget_status_json(BudgetStatus{}, 0, nullptr, 0));
    return issues;
  }
  if (const JsonValue* st = old->get("status")) {
    pdb.set("status", *st);
  } else {
    pdb.erase("status");
  }
  // A changed spec is a new generation, which the controller then observes.
  const JsonValue* before = old->get("spec");
  const JsonValue* after = pdb.get("spec");
  int64_t generation = 1;
  if (const JsonValue* g = old->find({"metadata", "generation"}); g && g->as_integer()) generation = *g->as_integer();
  bool changed = (before ? before->dump() : "") != (after ? after->dump() : "");
  pdb.ensure({"metadata"}).set("generation", JsonValue::integer(generation + (changed ? 1 : 0)));
  return issues;
}

std::string int_or_percent_cell(const JsonValue* v) {
  if (!v || v->is_null()) return "N/A";
  return v->is_string() ? v->text() : v->as_integer() ? std::to_string(*v->as_integer()) : "N/A";
}

}  // namespace

ObjectKind pod_disruption_budget_kind() {
  ObjectKind k;
  k.group = "policy";
  k.version = "v1";
  k.resource = "poddisruptionbudgets";
  k.kind = "PodDisruptionBudget";
  k.namespaced = true;
  k.short_names = {"pdb"};
  k.admit = admit_budget;
  k.from_protobuf = pod_disruption_budget_from_protobuf;
  k.built_in = true;
  k.columns = {
      {"Min Available", "string",
       [](const JsonValue& b) {
         return int_or_percent_cell(b.find({"spec", "minAvailable"}));
       }},
      {"Max Unavailable", "string",
       [](const JsonValue& b) {
         return int_or_percent_cell(b.find({"spec", "maxUnavailable"}));
       }},
      {"Allowed Disruptions", "integer",
       [](const JsonValue& b) {
         const JsonValue* v = b.find({"status", "disruptionsAllowed"});
         return std::to_string(v && v->as_integer() ? *v->as_integer() : 0);
       }},
  };
  return k;
}

std::optional<Budget> read_budget(const JsonValue& pdb) {
  if (!pdb.is_object()) return std::nullopt;
  Budget b;
  if (const JsonValue* n = pdb.find({"metadata", "name"}); n && n->is_string()) b.name = n->text();
  if (const JsonValue* g = pdb.find({"metadata", "generation"}); g && g->as_integer()) b.generation = *g->as_integer();
  const JsonValue* spec = pdb.get("spec");
  if (spec && spec->is_object()) {
    b.spec.min_available = int_or_percent(spec->get("minAvailable"));
    b.spec.max_unavailable = int_or_percent(spec->get("maxUnavailable"));
    b.spec.always_allow_unhealthy = spec->str("unhealthyPodEvictionPolicy") == "AlwaysAllow";
    b.selector = label_selector_of(spec->get("selector"));
  }
  if (const JsonValue* d = pdb.find({"status", "disruptedPods"}); d && d->is_object()) {
    for (const auto& [pod, at] : d->members()) {
      if (auto ms = at.is_string() ? parse_rfc3339_ms(at.text()) : std::nullopt) b.disrupted.emplace(pod, *ms);
    }
  }
  return b;
}

BudgetPodView budget_pod_view(const JsonValue& pod) {
  BudgetPodView v;
  if (const JsonValue* n = pod.find({"metadata", "name"}); n && n->is_string()) v.pod.name = n->text();
  if (const JsonValue* labels = pod.find({"metadata", "labels"}); labels && labels->is_object()) {
    for (const auto& [k, val] : labels->members()) {
      if (val.is_string()) v.labels.emplace(k, val.text());
    }
  }
  v.pod.terminating = pod.find({"metadata", "deletionTimestamp"}) != nullptr;
  std::string phase = phase_of(pod);
  v.ended = phase == "Succeeded" || phase == "Failed";
  v.pending = phase == "Pending" || phase.empty();
  // Ready as its Ready condition says; an agent that reports no conditions
  // at all has its running pods taken as ready (as kubectl's READY column
  // takes their containers).
  std::optional<bool> ready;
  if (const JsonValue* conds = pod.find({"status", "conditions"}); conds && conds->is_array()) {
    for (const auto& c : conds->items()) {
      if (c.str("type") == "Ready") ready = c.str("status") == "True";
    }
  }
  v.pod.healthy = ready.value_or(phase == "Running") && !v.ended;
  return v;
}

JsonValue budget_status_json(const BudgetStatus& status, int64_t generation, const JsonValue* old,
                             int64_t now_unix_ms) {
  JsonValue st = JsonValue::object();
  if (generation > 0) st.set("observedGeneration", JsonValue::integer(generation));
  if (!status.disrupted.empty()) {
    JsonValue d = JsonValue::object();
    for (const auto& [pod, at] : status.disrupted) d.set(pod, JsonValue::string(rfc3339(at)));
    st.set("disruptedPods", std::move(d));
  }
  st.set("disruptionsAllowed", JsonValue::integer(status.disruptions_allowed));
  st.set("currentHealthy", JsonValue::integer(status.current_healthy));
  st.set("desiredHealthy", JsonValue::integer(status.desired_healthy));
  st.set("expectedPods", JsonValue::integer(status.expected_pods));
  if (generation <= 0) return st;  // not yet observed: no condition (as a new budget has none)
  std::string cond_status = status.disruptions_allowed > 0 ? "True" : "False";
  std::string reason = !status.sync_error.empty()       ? "SyncFailed"
                       : status.disruptions_allowed > 0 ? "SufficientPods"
                                                        : "InsufficientPods";
  std::string since = rfc3339(now_unix_ms);
  if (const JsonValue* conds = old ? old->get("conditions") : nullptr; conds && conds->is_array()) {
    for (const auto& c : conds->items()) {
      if (c.str("type") == "DisruptionAllowed" && c.str("status") == cond_status && c.str("reason") == reason &&
          !c.str("lastTransitionTime").empty())
        since = c.str("lastTransitionTime");
    }
  }
  JsonValue c = JsonValue::object();
  c.set("type", JsonValue::string("DisruptionAllowed"));
  c.set("status", JsonValue::string(cond_status));
  c.set("observedGeneration", JsonValue::integer(generation));
  c.set("lastTransitionTime", JsonValue::string(since));
  c.set("reason", JsonValue::string(reason));
  c.set("message", JsonValue::string(status.sync_error));
  JsonValue conds = JsonValue::array();
  conds.push(std::move(c));
  st.set("conditions", std::move(conds));
  return st;
}

}  // namespace uvsched
