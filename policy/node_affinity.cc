#include "policy/node_affinity.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace uvsched {
namespace {

std::optional<int64_t> integer(std::string_view s) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return n;
}

// `value` is the label's (or field's), absent when the node has none.
bool holds(const NodeSelectorRequirement& r, const std::string* value) {
  using Op = NodeSelectorRequirement::Op;
  auto listed = [&] { return value && std::find(r.values.begin(), r.values.end(), *value) != r.values.end(); };
  switch (r.op) {
    case Op::kIn:
      return listed();
    case Op::kNotIn:
      return !listed();
    case Op::kExists:
      return value != nullptr;
    case Op::kDoesNotExist:
      return value == nullptr;
    case Op::kGt:
    case Op::kLt: {
      // Both sides integers (validation checks the pod's); a label that is
      // none matches neither.
      if (!value || r.values.size() != 1) return false;
      auto have = integer(*value), bound = integer(r.values[0]);
      if (!have || !bound) return false;
      return r.op == Op::kGt ? *have > *bound : *have < *bound;
    }
  }
  return false;
}

bool term_matches(const NodeSelectorTerm& t, const Labels& labels, const std::string& node) {
  if (t.match_expressions.empty() && t.match_fields.empty()) return false;
  for (const auto& r : t.match_expressions) {
    auto it = labels.find(r.key);
    if (!holds(r, it == labels.end() ? nullptr : &it->second)) return false;
  }
  for (const auto& r : t.match_fields) {
    if (!holds(r, r.key == "metadata.name" ? &node : nullptr)) return false;
  }
  return true;
}

}  // namespace

bool node_affinity_matches(const std::vector<NodeSelectorTerm>& terms, const Labels& labels, std::string_view node) {
  if (terms.empty()) return true;
  const std::string name(node);
  return std::any_of(terms.begin(), terms.end(),
                     [&](const NodeSelectorTerm& t) { return term_matches(t, labels, name); });
}

}  // namespace uvsched
