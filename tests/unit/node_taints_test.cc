// A node's taints as the store keeps them and as its spec shows them: the
// cordon's taint is spec.unschedulable's, never stored among them.
#include "handlers/pods/node_taints.h"

#include <gtest/gtest.h>

#include "tests/support/json_literal.h"

namespace uvsched {
namespace {

using test::json;

TEST(NodeTaints, AreStoredAsTheNodeShowsThemWithoutTheCordons) {
  JsonValue spec = json(R"([{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"},)"
                        R"({"key":"dedicated","value":"gpu","effect":"NoSchedule"},)"
                        R"({"key":"maintenance","effect":"NoExecute","timeAdded":"2026-12-07T00:00:00Z"}])");
  std::vector<Taint> taints = taints_of(&spec);
  ASSERT_EQ(taints.size(), 2u);
  EXPECT_EQ(taints[0], (Taint{.key = "dedicated", .value = "gpu", .effect = "NoSchedule"}));
  std::string stored = taints_json(taints);
  EXPECT_EQ(stored, R"([{"key":"dedicated","value":"gpu","effect":"NoSchedule"},)"
                    R"({"key":"maintenance","effect":"NoExecute","timeAdded":"2026-12-07T00:00:00Z"}])");
  EXPECT_EQ(parse_taints(stored), taints);
  EXPECT_EQ(parse_taints("[]"), std::vector<Taint>{});
  for (const char* bad : {"", "{}", "[1]", R"([{"key":5}])", "[", R"([{"key":"a","effect":null}])"}) {
    EXPECT_FALSE(parse_taints(bad)) << bad;
  }
  EXPECT_TRUE(taints_of(nullptr).empty());
}

}  // namespace
}  // namespace uvsched
