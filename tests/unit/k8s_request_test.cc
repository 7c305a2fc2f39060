// Query parameters as the API server reads them: booleans by apimachinery's
// conversion (not Go's ParseBool), integers by strconv.ParseInt.
#include "handlers/pods/k8s_request.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(K8sRequest, AQueryBooleanIsTrueUnlessAbsentZeroOrFalse) {
  struct Case {
    const char* query;
    bool watch;
  } cases[] = {
      {"", false},
      {"watch=true", true},
      {"watch=True", true},
      {"watch=1", true},
      {"watch", true},
      {"watch=", true},
      {"watch=yes", true},
      {"watch=0", false},
      {"watch=false", false},
      {"watch=FALSE", false},
      {"watched=1", false},
      {"limit=1&watch=t", true},
  };
  for (const Case& c : cases) EXPECT_EQ(query_flag(c.query, "watch"), c.watch) << c.query;
}

TEST(K8sRequest, IntegerListOptionsAreGoIntegers) {
  struct Case {
    const char* query;
    const char* refusal;  // the 400's message; empty when taken
  } cases[] = {
      {"limit=500", ""},
      {"limit=-1", ""},
      {"limit=%2B7&timeoutSeconds=0", ""},
      {"limit=+7", R"(strconv.ParseInt: parsing \" 7\": invalid syntax)"},  // a query's + is a space, for Go too
      {"limit=9223372036854775807", ""},
      {"labelSelector=a", ""},
      {"limit=abc", R"(strconv.ParseInt: parsing \"abc\": invalid syntax)"},
      {"limit=", R"(strconv.ParseInt: parsing \"\": invalid syntax)"},
      {"limit=1.5", R"(strconv.ParseInt: parsing \"1.5\": invalid syntax)"},
      {"limit=-", R"(strconv.ParseInt: parsing \"-\": invalid syntax)"},
      {"limit=9223372036854775808", R"(strconv.ParseInt: parsing \"9223372036854775808\": value out of range)"},
      {"timeoutSeconds=10s", R"(strconv.ParseInt: parsing \"10s\": invalid syntax)"},
  };
  for (const Case& c : cases) {
    auto refused = refuse_bad_list_options(c.query);
    if (std::string(c.refusal).empty()) {
      EXPECT_FALSE(refused) << c.query << ": " << refused->body;
      continue;
    }
    ASSERT_TRUE(refused) << c.query;
    EXPECT_EQ(refused->status, 400);
    EXPECT_NE(refused->body.find(c.refusal), std::string::npos) << refused->body;
    EXPECT_NE(refused->body.find(R"("reason":"BadRequest")"), std::string::npos) << refused->body;
  }
}

}  // namespace
}  // namespace uvsched
