#include "handlers/pods/pod_needs.h"

#include "handlers/pods/label_selector_json.h"
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

// A term's selector with its matchLabelKeys (and mismatchLabelKeys) taken
// from the pod's own labels, as kube-scheduler merges them.
void read_selector(const JsonValue& term, const Labels& own, PodSelectorTerm* out) {
  std::optional<LabelSelector> sel = label_selector_of(term.get("labelSelector"));
  out->selects_none = !sel;
  if (sel) out->selector = std::move(*sel);
  for (auto [field, op] : {std::pair{"matchLabelKeys", LabelSelector::SetOp::kIn},
                           std::pair{"mismatchLabelKeys", LabelSelector::SetOp::kNotIn}}) {
    const JsonValue* keys = term.get(field);
    if (!keys || !keys->is_array()) continue;
    for (const auto& k : keys->items()) {
      auto v = own.find(k.text());
      if (v != own.end()) out->selector.require(v->first, op, {v->second});
    }
  }
}

// Required podAffinity or podAntiAffinity terms. A term's namespaces are
// those it names, else the pod's own (a namespaceSelector is not read: the
// pod's create warns of it).
std::vector<PodAffinityTerm> read_affinity_terms(const JsonValue* terms, const std::string& ns, const Labels& own) {
  std::vector<PodAffinityTerm> out;
  if (!terms || !terms->is_array()) return out;
  for (const auto& t : terms->items()) {
    if (!t.is_object()) continue;
    PodAffinityTerm term;
    read_selector(t, own, &term);
    if (const JsonValue* names = t.get("namespaces"); names && names->is_array()) {
      for (const auto& n : names->items()) term.namespaces.push_back(n.text());
    }
    if (term.namespaces.empty()) term.namespaces.push_back(ns);
    term.topology_key = t.str("topologyKey");
    out.push_back(std::move(term));
  }
  return out;
}

std::vector<SpreadConstraint> read_spread(const JsonValue* list, const std::string& ns, const Labels& own) {
  std::vector<SpreadConstraint> out;
  if (!list || !list->is_array()) return out;
  for (const auto& c : list->items()) {
    if (!c.is_object() || c.str("whenUnsatisfiable") != "DoNotSchedule") continue;  // ScheduleAnyway: a preference
    SpreadConstraint sc;
    read_selector(c, own, &sc);
    sc.namespaces.push_back(ns);
    if (const JsonValue* m = c.get("maxSkew")) sc.max_skew = static_cast<int32_t>(m->as_integer().value_or(1));
    if (const JsonValue* m = c.get("minDomains"); m && m->as_integer()) {
      sc.min_domains = static_cast<int32_t>(*m->as_integer());
    }
    sc.topology_key = c.str("topologyKey");
    sc.honor_node_affinity = c.str("nodeAffinityPolicy") != "Ignore";
    sc.honor_taints = c.str("nodeTaintsPolicy") == "Honor";
    out.push_back(std::move(sc));
  }
  return out;
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
  if (const JsonValue* labels = pod.find({"metadata", "labels"}); labels && labels->is_object()) {
    for (const auto& [k, v] : labels->members()) {
      if (v.is_string()) needs.labels.emplace(k, v.text());
    }
  }
  const JsonValue* affinity = pod.find({"spec", "affinity"});
  const JsonValue* spread = pod.find({"spec", "topologySpreadConstraints"});
  if ((affinity && (affinity->get("podAffinity") || affinity->get("podAntiAffinity"))) || spread) {
    std::string ns = "default";
    if (const JsonValue* n = pod.find({"metadata", "namespace"}); n && n->is_string() && !n->text().empty()) {
      ns = n->text();
    }
    constexpr const char* kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
    InterPodNeeds inter;
    inter.terms.affinity =
        read_affinity_terms(pod.find({"spec", "affinity", "podAffinity", kRequired}), ns, needs.labels);
    inter.terms.anti_affinity =
        read_affinity_terms(pod.find({"spec", "affinity", "podAntiAffinity", kRequired}), ns, needs.labels);
    inter.spread = read_spread(spread, ns, needs.labels);
    if (!inter.empty()) needs.inter_pod = std::make_shared<const InterPodNeeds>(std::move(inter));
  }
  return needs;
}

}  // namespace uvsched
