#include "handlers/pods/scheduling_objects.h"

#include "handlers/pods/k8s_status.h"

namespace uvsched {
namespace {

std::string integer_text(const JsonValue* v) {
  if (!v) return "";
  auto n = v->as_integer();
  return n ? std::to_string(*n) : "";
}

// An optional integer field at `path` of `obj`: absent, or a whole number in [min, max].
void check_integer(const JsonValue& obj, std::initializer_list<std::string_view> path, const std::string& field,
                   int64_t min, int64_t max, bool required, std::vector<FieldIssue>& issues) {
  const JsonValue* v = obj.find(path);
  if (!v || v->is_null()) {
    if (required) issues.push_back({field, "FieldValueRequired", "Required value"});
    return;
  }
  auto n = v->type() == JsonValue::Type::kNumber ? v->as_integer() : std::nullopt;
  if (!n) {
    issues.push_back({field, "FieldValueTypeInvalid", "Invalid value: must be an integer"});
  } else if (*n < min || *n > max) {
    issues.push_back({field, "FieldValueInvalid",
                      "Invalid value: " + std::to_string(*n) + ": must be from " + std::to_string(min) + " to " +
                          std::to_string(max)});
  }
}

std::vector<FieldIssue> admit_pod_group(JsonValue& g, const JsonValue* old) {
  std::vector<FieldIssue> issues;
  const JsonValue* spec = g.get("spec");
  if (!spec || !spec->is_object()) {
    issues.push_back({"spec", "FieldValueRequired", "Required value"});
    return issues;
  }
  check_integer(g, {"spec", "minMember"}, "spec.minMember", 1, 1'000'000, true, issues);
  check_integer(g, {"spec", "scheduleTimeoutSeconds"}, "spec.scheduleTimeoutSeconds", 1, 86'400 * 365, false, issues);
  if (!old) {
    // As for a custom resource with a status subresource: a create's status is not the client's to set.
    JsonValue st = JsonValue::object();
    st.set("phase", JsonValue::string("Pending"));
    g.set("status", std::move(st));
  }
  return issues;
}

// The system PriorityClasses every cluster has: the built-in objects, what
// a "system-" name must be, and what the book knows before the store is read.
struct SystemClass {
  const char* name;
  int32_t value;
  const char* description;
};
constexpr SystemClass kSystemClasses[] = {
    {"system-cluster-critical", kSystemClusterCritical,
     "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."},
    {"system-node-critical", kSystemNodeCritical,
     "Used for system critical pods that must not be moved from their current node."},
};

// Why a PriorityClass named "system-..." is not the system class of that
// name (the API server's IsKnownSystemPriorityClass); nullopt when it is.
std::optional<std::string> not_the_system_class(const std::string& name, const JsonValue& pc) {
  const SystemClass* known = nullptr;
  for (const SystemClass& c : kSystemClasses) {
    if (name == c.name) known = &c;
  }
  if (!known) return "name " + name + " is not a known system priority class";
  const JsonValue* v = pc.get("value");
  if (!v || v->as_integer() != known->value)
    return "value of " + name + " PriorityClass must be " + std::to_string(known->value);
  if (const JsonValue* gd = pc.get("globalDefault"); gd && gd->dump() == "true")
    return "globalDefault of " + name + " PriorityClass must be false";
  return std::nullopt;
}

std::vector<FieldIssue> admit_priority_class(JsonValue& pc, const JsonValue* old) {
  std::vector<FieldIssue> issues;
  std::string name = pc.find({"metadata", "name"}) ? pc.find({"metadata", "name"})->text() : "";
  // A "system-" name is one of the built-in classes, as they are (a
  // description may change); any other class's value is in the user range.
  if (name.rfind("system-", 0) == 0) {
    check_integer(pc, {"value"}, "value", -2'147'483'648LL, 2'147'483'647LL, true, issues);
    if (auto why = not_the_system_class(name, pc); why && issues.empty()) {
      issues.push_back({"metadata.name", "FieldValueForbidden",
                        "Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
                        "error: " +
                            *why});
    }
  } else {
    check_integer(pc, {"value"}, "value", -2'147'483'648LL, kHighestUserPriority, true, issues);
  }
  if (const JsonValue* gd = pc.get("globalDefault"); gd && gd->type() != JsonValue::Type::kBool && !gd->is_null())
    issues.push_back({"globalDefault", "FieldValueTypeInvalid", "Invalid value: must be a boolean"});
  const JsonValue* pp = pc.get("preemptionPolicy");
  if (!pp || pp->is_null()) {
    pc.set("preemptionPolicy", JsonValue::string("PreemptLowerPriority"));
  } else if (!pp->is_string() || (pp->text() != "Never" && pp->text() != "PreemptLowerPriority")) {
    issues.push_back({"preemptionPolicy", "FieldValueNotSupported",
                      "Unsupported value: supported values: \"Never\", \"PreemptLowerPriority\""});
  }
  if (old) {
    const JsonValue* a = old->get("value");
    const JsonValue* b = pc.get("value");
    if (a && b && a->as_integer() != b->as_integer())
      issues.push_back({"value", "FieldValueForbidden", "Forbidden: may not be changed in an update."});
    const JsonValue* was = old->get("preemptionPolicy");
    const JsonValue* now = pc.get("preemptionPolicy");
    if (was && now && was->is_string() && now->is_string() && was->text() != now->text())
      issues.push_back(
          {"preemptionPolicy", "FieldValueInvalid", "Invalid value: \"" + now->text() + "\": field is immutable"});
  }
  return issues;
}

JsonValue system_class(const std::string& name, int32_t value, const std::string& description) {
  JsonValue pc = JsonValue::object();
  pc.set("kind", JsonValue::string("PriorityClass"));
  pc.set("apiVersion", JsonValue::string("scheduling.k8s.io/v1"));
  pc.ensure({"metadata"}).set("name", JsonValue::string(name));
  pc.set("value", JsonValue::integer(value));
  pc.set("globalDefault", JsonValue::boolean(false));
  pc.set("description", JsonValue::string(description));
  pc.set("preemptionPolicy", JsonValue::string("PreemptLowerPriority"));
  return pc;
}

}  // namespace

ObjectKind pod_group_kind() {
  ObjectKind k;
  k.group = "scheduling.x-k8s.io";
  k.version = "v1alpha1";
  k.resource = "podgroups";
  k.kind = "PodGroup";
  k.namespaced = true;
  k.short_names = {"pg", "pgs"};
  k.admit = admit_pod_group;
  k.columns = {
      {"Phase", "string",
       [](const JsonValue& g) {
         return g.find({"status", "phase"}) ? g.find({"status", "phase"})->text() : "";
       }},
      {"Min Member", "integer",
       [](const JsonValue& g) {
         return integer_text(g.find({"spec", "minMember"}));
       }},
      {"Scheduled", "integer",
       [](const JsonValue& g) {
         return integer_text(g.find({"status", "scheduled"}));
       }},
      {"Running", "integer",
       [](const JsonValue& g) {
         return integer_text(g.find({"status", "running"}));
       }},
  };
  return k;
}

ObjectKind priority_class_kind() {
  ObjectKind k;
  k.group = "scheduling.k8s.io";
  k.version = "v1";
  k.resource = "priorityclasses";
  k.kind = "PriorityClass";
  k.namespaced = false;
  k.short_names = {"pc"};
  k.admit = admit_priority_class;
  k.built_in = true;
  k.columns = {
      {"Value", "integer", [](const JsonValue& pc) { return integer_text(pc.get("value")); }},
      {"Global-Default", "string",
       [](const JsonValue& pc) {
         const JsonValue* gd = pc.get("globalDefault");
         return std::string(gd && gd->as_bool() ? "true" : "false");
       }},
      {"Preemption Policy", "string", [](const JsonValue& pc) { return pc.str("preemptionPolicy"); }},
  };
  k.builtin_delete_refusal = "this is a system priority class and cannot be deleted";
  for (const SystemClass& c : kSystemClasses) k.builtins.push_back(system_class(c.name, c.value, c.description));
  return k;
}

PodGroupSpec pod_group_spec(const JsonValue& group) {
  PodGroupSpec s;
  if (const JsonValue* m = group.find({"spec", "minMember"}); m && m->as_integer()) s.min_member = *m->as_integer();
  if (const JsonValue* t = group.find({"spec", "scheduleTimeoutSeconds"}); t && t->as_integer() && *t->as_integer() > 0)
    s.timeout_s = static_cast<uint64_t>(*t->as_integer());
  return s;
}

PriorityClassInfo priority_class_info(const JsonValue& pc) {
  PriorityClassInfo i;
  if (const JsonValue* v = pc.get("value"); v && v->as_integer()) i.value = static_cast<int32_t>(*v->as_integer());
  if (const JsonValue* gd = pc.get("globalDefault"))
    i.global_default = gd->type() == JsonValue::Type::kBool && gd->as_bool();
  i.preempt_never = pc.str("preemptionPolicy") == "Never";
  return i;
}

PriorityClassBook::PriorityClassBook(Store& store, Clock& clock)
    : informer_(store, clock, priority_class_kind().prefix(), [this](const std::string& key, const std::string* value) {
        std::string name = key.substr(key.rfind('/') + 1);
        std::string error;
        std::optional<JsonValue> pc = value ? JsonValue::parse(*value, &error) : std::nullopt;
        if (pc) {
          classes_[name] = priority_class_info(*pc);
        } else {
          classes_.erase(name);
        }
      }) {
  // Known before the store is read: a pod naming one is never refused for it.
  for (const SystemClass& c : kSystemClasses) classes_[c.name] = {c.value, false, false};
  informer_.set_on_synced([this] {
    std::vector<std::function<void()>> waiting = std::move(waiting_);
    waiting_.clear();
    for (auto& cb : waiting) cb();
  });
}

std::optional<std::string> PriorityClassBook::second_default(const JsonValue& pc) const {
  if (!priority_class_info(pc).global_default) return std::nullopt;
  std::string name = pc.find({"metadata", "name"}) ? pc.find({"metadata", "name"})->text() : "";
  for (const auto& [other, info] : classes_) {
    if (info.global_default && other != name)
      return "PriorityClass " + other + " is already marked as default. Only one default can exist";
  }
  return std::nullopt;
}

void PriorityClassBook::when_loaded(std::function<void()> cb) {
  if (informer_.loaded()) return cb();
  waiting_.push_back(std::move(cb));
}

std::optional<HttpResponse> PriorityClassBook::admit(JsonValue& pod) const {
  const JsonValue* spec = pod.get("spec");
  std::string name = pod.find({"metadata", "name"}) ? pod.find({"metadata", "name"})->text() : "";
  std::string class_name = spec ? spec->str("priorityClassName") : "";
  std::optional<int64_t> given;
  if (const JsonValue* p = spec ? spec->get("priority") : nullptr; p && !p->is_null()) given = p->as_integer();
  std::optional<std::string> policy;
  if (const JsonValue* p = spec ? spec->get("preemptionPolicy") : nullptr; p && p->is_string()) policy = p->text();
  // A watch being restored leaves the classes as last read (an informer's
  // cache); only before the first read is a pod that may need one refused.
  if (!informer_.loaded() && !classes_.count(class_name)) {
    return k8s_error(503, "ServiceUnavailable", "the priority classes are not read yet; try again");
  }
  PriorityAdmission a = admit_priority(class_name, given, policy, classes_);
  if (!a.ok()) return k8s_error(403, "Forbidden", "pods \"" + name + "\" is forbidden: " + a.error, "pods", name);
  JsonValue& s = pod.ensure({"spec"});
  if (!a.class_name.empty()) s.set("priorityClassName", JsonValue::string(a.class_name));
  s.set("priority", JsonValue::integer(a.priority));
  s.set("preemptionPolicy", JsonValue::string(a.preempt_never ? "Never" : "PreemptLowerPriority"));
  return std::nullopt;
}

}  // namespace uvsched
