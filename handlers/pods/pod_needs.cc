#include "handlers/pods/pod_needs.h"

#include "policy/quantity.h"

namespace uvsched {
namespace {

// milli-units of `resource` for one container: request, else limit, else nullopt.
std::optional<int64_t> asked(const JsonValue& container, const char* resource) {
  for (const char* kind : {"requests", "limits"}) {
    const JsonValue* q = container.find({"resources", kind, resource});
    if (q == nullptr || q->is_null()) continue;
    if (auto v = parse_quantity_milli(q->text())) return v;
  }
  return std::nullopt;
}

// A node selector term's requirements. Validation refuses an operator other
// than these; one stored before it did is In of no values, which no agent matches.
void read_requirements(const JsonValue* list, std::vector<NodeSelectorRequirement>* out) {
  if (!list || !list->is_array()) return;
  using Op = NodeSelectorRequirement::Op;
  static const std::pair<const char*, Op> kOps[] = {{"In", Op::kIn},         {"NotIn", Op::kNotIn},
                                                    {"Exists", Op::kExists}, {"DoesNotExist", Op::kDoesNotExist},
                                                    {"Gt", Op::kGt},         {"Lt", Op::kLt}};
  for (const auto& r : list->items()) {
    NodeSelectorRequirement req;
    req.key = r.str("key");
    std::string op = r.str("operator");
    bool known = false;
    for (const auto& [name, value] : kOps) {
      if (op == name) {
        req.op = value;
        known = true;
        break;
      }
    }
    const JsonValue* values = r.get("values");
    if (known && values && values->is_array()) {
      for (const auto& v : values->items()) req.values.push_back(v.text());
    }
    out->push_back(std::move(req));
  }
}

}  // namespace

PodNeeds pod_needs(const JsonValue& pod) {
  PodNeeds needs;
  if (const JsonValue* containers = pod.find({"spec", "containers"}); containers && containers->is_array()) {
    for (const auto& c : containers->items()) {
      auto cpu = asked(c, "cpu");
      auto mem = asked(c, "memory");
      needs.cpus += cpu ? static_cast<double>(*cpu) / 1000.0 : kDefaultCpus;
      // Memory quantities are bytes: milli-bytes / 1000 / 2^20 is MiB.
      needs.mem_mib += mem ? static_cast<double>(*mem) / 1000.0 / (1024.0 * 1024.0) : kDefaultMemMib;
      if (const JsonValue* ports = c.get("ports"); ports && ports->is_array()) {
        for (const auto& p : ports->items()) {
          if (const JsonValue* hp = p.get("hostPort")) {
            if (auto n = hp->as_integer(); n && *n > 0) needs.host_ports.push_back(static_cast<uint32_t>(*n));
          }
        }
      }
    }
  }
  if (const JsonValue* n = pod.find({"spec", "nodeName"}); n && n->is_string()) needs.node_name = n->text();
  if (const JsonValue* sel = pod.find({"spec", "nodeSelector"}); sel && sel->is_object()) {
    for (const auto& [k, v] : sel->members()) needs.node_selector[k] = v.text();
  }
  if (const JsonValue* terms = pod.find(
          {"spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"});
      terms && terms->is_array()) {
    for (const auto& t : terms->items()) {
      NodeSelectorTerm term;
      read_requirements(t.get("matchExpressions"), &term.match_expressions);
      read_requirements(t.get("matchFields"), &term.match_fields);
      needs.node_affinity.push_back(std::move(term));
    }
  }
  if (const JsonValue* ts = pod.find({"spec", "tolerations"}); ts && ts->is_array()) {
    for (const auto& t : ts->items()) {
      if (!t.is_object()) continue;
      Toleration tol{.key = t.str("key"), .op = t.str("operator"), .value = t.str("value"), .effect = t.str("effect")};
      if (const JsonValue* s = t.get("tolerationSeconds")) tol.seconds = s->as_integer();
      needs.tolerations.push_back(std::move(tol));
    }
  }
  return needs;
}

}  // namespace uvsched
