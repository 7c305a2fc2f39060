#include "policy/node_affinity.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

NodeSelectorTerm labels_term(std::vector<NodeSelectorRequirement> r) { return {std::move(r), {}}; }

TEST(NodeAffinity, TermsAreOredAndExpressionsAnded) {
  using Op = NodeSelectorRequirement::Op;  // (in here: a unity build joins this file with others that have an Op)
  const Labels node{{"zone", "a"}, {"disk", "ssd"}, {"cores", "16"}, {"gen", "x"}};
  struct Case {
    const char* name;
    std::vector<NodeSelectorTerm> terms;
    bool matches;
  };
  const Case cases[] = {
      {"no affinity", {}, true},
      {"In", {labels_term({{"zone", Op::kIn, {"b", "a"}}})}, true},
      {"In, not listed", {labels_term({{"zone", Op::kIn, {"b"}}})}, false},
      {"In, no such label", {labels_term({{"rack", Op::kIn, {"1"}}})}, false},
      {"NotIn", {labels_term({{"zone", Op::kNotIn, {"b"}}})}, true},
      {"NotIn, no such label", {labels_term({{"rack", Op::kNotIn, {"1"}}})}, true},
      {"NotIn, listed", {labels_term({{"zone", Op::kNotIn, {"a"}}})}, false},
      {"Exists", {labels_term({{"disk", Op::kExists, {}}})}, true},
      {"DoesNotExist", {labels_term({{"disk", Op::kDoesNotExist, {}}})}, false},
      {"Gt", {labels_term({{"cores", Op::kGt, {"8"}}})}, true},
      {"Gt, equal", {labels_term({{"cores", Op::kGt, {"16"}}})}, false},
      {"Lt", {labels_term({{"cores", Op::kLt, {"32"}}})}, true},
      {"Gt, label not an integer", {labels_term({{"gen", Op::kGt, {"1"}}})}, false},
      {"every expression of a term", {labels_term({{"zone", Op::kIn, {"a"}}, {"disk", Op::kIn, {"hdd"}}})}, false},
      {"any term", {labels_term({{"zone", Op::kIn, {"b"}}}), labels_term({{"disk", Op::kIn, {"ssd"}}})}, true},
      {"an empty term matches nothing", {NodeSelectorTerm{}}, false},
      {"matchFields on the name", {NodeSelectorTerm{{}, {{"metadata.name", Op::kIn, {"edge-1"}}}}}, true},
      {"matchFields, another name", {NodeSelectorTerm{{}, {{"metadata.name", Op::kIn, {"edge-2"}}}}}, false},
      {"matchFields and expressions",
       {NodeSelectorTerm{{{"zone", Op::kIn, {"a"}}}, {{"metadata.name", Op::kNotIn, {"edge-1"}}}}},
       false},
  };
  for (const Case& c : cases) EXPECT_EQ(node_affinity_matches(c.terms, node, "edge-1"), c.matches) << c.name;
}

}  // namespace
}  // namespace uvsched
