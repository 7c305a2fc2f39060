// Required node affinity (spec.affinity.nodeAffinity.
// requiredDuringSchedulingIgnoredDuringExecution): a pod fits an agent only
// if one of its node selector terms matches the agent; a term matches when
// every one of its expressions does (matchExpressions on the labels,
// matchFields on metadata.name), and a term with neither matches nothing, as
// kube-scheduler's NodeAffinity filter reads them. Preferences
// (preferredDuringScheduling...) weigh nothing here: first come, first
// served. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "policy/label_selector.h"

namespace uvsched {

struct NodeSelectorRequirement {
  enum class Op { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  std::string key;
  Op op = Op::kIn;
  std::vector<std::string> values;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;  // on the agent's labels
  std::vector<NodeSelectorRequirement> match_fields;       // on metadata.name, the agent's hostname
};

// No terms: no requirement, every agent matches.
bool node_affinity_matches(const std::vector<NodeSelectorTerm>& terms, const Labels& labels, std::string_view node);

}  // namespace uvsched
