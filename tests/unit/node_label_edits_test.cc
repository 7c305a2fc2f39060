#include "handlers/pods/node_label_edits.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(NodeLabelEdits, AreStoredAsAnObjectOfStringsAndNulls) {
  const LabelEdits edits{{"zone", "a"}, {"disk", std::nullopt}};
  EXPECT_EQ(label_edits_json(edits), R"({"disk":null,"zone":"a"})");
  EXPECT_EQ(parse_label_edits(label_edits_json(edits)), edits);
  EXPECT_EQ(parse_label_edits("{}"), LabelEdits{});
  for (const char* bad : {"", "[]", "null", R"({"zone":1})", R"({"zone":{}})", "{"})
    EXPECT_FALSE(parse_label_edits(bad)) << bad;
}

}  // namespace
}  // namespace uvsched
