#include "policy/label_edits.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(LabelEdits, AreLaidOverTheAgentsOwnLabels) {
  const Labels own{{"zone", "a"}, {"disk", "ssd"}};
  EXPECT_EQ(with_edits(own, {}), own);
  EXPECT_EQ(with_edits(own, {{"zone", "b"}, {"gpu", "1"}}), (Labels{{"zone", "b"}, {"disk", "ssd"}, {"gpu", "1"}}));
  EXPECT_EQ(with_edits(own, {{"disk", std::nullopt}}), (Labels{{"zone", "a"}}));
  EXPECT_EQ(with_edits({}, {{"disk", std::nullopt}}), Labels{}) << "taking off a label it does not have";
}

TEST(LabelEdits, ComeFromWhatAPatchChanged) {
  struct Case {
    const char* name;
    Labels before, after;
    LabelEdits current, want;
  };
  const Case cases[] = {
      {"nothing changed", {{"zone", "a"}}, {{"zone", "a"}}, {}, {}},
      {"added", {{"zone", "a"}}, {{"zone", "a"}, {"gpu", "1"}}, {}, {{"gpu", "1"}}},
      {"changed", {{"zone", "a"}}, {{"zone", "b"}}, {}, {{"zone", "b"}}},
      {"taken off", {{"zone", "a"}}, {}, {}, {{"zone", std::nullopt}}},
      {"earlier edits kept",
       {{"zone", "a"}},
       {{"zone", "a"}, {"gpu", "1"}},
       {{"disk", std::nullopt}},
       {{"disk", std::nullopt}, {"gpu", "1"}}},
      {"an earlier edit undone", {{"gpu", "1"}}, {}, {{"gpu", "1"}}, {{"gpu", std::nullopt}}},
      {"a removal undone", {}, {{"disk", "ssd"}}, {{"disk", std::nullopt}}, {{"disk", "ssd"}}},
  };
  for (const Case& c : cases) EXPECT_EQ(edits_between(c.before, c.after, c.current), c.want) << c.name;
}

}  // namespace
}  // namespace uvsched
