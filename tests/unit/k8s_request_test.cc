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
      // resourceVersion is a revision, Go's ParseUint ("" and "0" mean any).
      {"resourceVersion=", ""},
      {"resourceVersion=0", ""},
      {"resourceVersion=18446744073709551615", ""},
      {"resourceVersion=abc",
       R"(resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax)"},
      {"resourceVersion=-1", R"(strconv.ParseUint: parsing \"-1\": invalid syntax)"},
      {"watch=1&resourceVersion=12x", R"(strconv.ParseUint: parsing \"12x\": invalid syntax)"},
      {"resourceVersion=18446744073709551616", R"(parsing \"18446744073709551616\": value out of range)"},
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

// apimachinery's ValidateListOptions, as a server without WatchList: 422
// Invalid naming each issue, one alone or [a, b] as an ErrorList prints.
TEST(K8sRequest, AWatchLastsItsTimeoutSecondsANegativeOneNone) {
  EXPECT_EQ(watch_timeout_ms(""), std::nullopt);
  EXPECT_EQ(watch_timeout_ms("timeoutSeconds=0"), std::nullopt);
  EXPECT_EQ(watch_timeout_ms("watch=1&timeoutSeconds=30"), 30'000u);
  EXPECT_EQ(watch_timeout_ms("timeoutSeconds=-5"), 0u);
  EXPECT_EQ(watch_timeout_ms("timeoutSeconds=9223372036854775807"), 365ull * 24 * 3600 * 1000) << "no overflow";
}

TEST(K8sRequest, ListOptionsAreValidatedAsTheApiServerDoes) {
  struct Case {
    const char* query;
    const char* refusal;  // in the 422's message; empty when taken
  } cases[] = {
      {"resourceVersion=5&resourceVersionMatch=NotOlderThan", ""},
      {"resourceVersion=5&resourceVersionMatch=Exact", ""},
      {"resourceVersion=0&resourceVersionMatch=NotOlderThan", ""},
      {"watch=1&resourceVersion=5", ""},
      {"resourceVersionMatch=Exact",
       R"(ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is )"
       R"(forbidden unless resourceVersion is provided)"},
      {"resourceVersion=0&resourceVersionMatch=Exact",
       R"(resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\")"},
      {"resourceVersion=5&resourceVersionMatch=Newest",
       R"(resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\")"},
      {"resourceVersion=5&resourceVersionMatch=Exact&continue=abc",
       R"(resourceVersionMatch is forbidden when continue is provided)"},
      {"resourceVersionMatch=Newest",
       R"(is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is )"
       R"(provided, resourceVersionMatch: Unsupported value: \"Newest\")"},
      {"sendInitialEvents=true", R"(sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list)"},
      {"watch=1&resourceVersionMatch=NotOlderThan",
       R"(resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided)"},
      {"watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
       R"(sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate )"},
      {"watch=1&sendInitialEvents=true",
       R"(resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan)"},
  };
  for (const Case& c : cases) {
    auto refused = refuse_bad_list_options(c.query);
    if (std::string(c.refusal).empty()) {
      EXPECT_FALSE(refused) << c.query << ": " << refused->body;
      continue;
    }
    ASSERT_TRUE(refused) << c.query;
    EXPECT_EQ(refused->status, 422) << c.query;
    EXPECT_NE(refused->body.find(c.refusal), std::string::npos) << c.query << ": " << refused->body;
    EXPECT_NE(refused->body.find(R"("reason":"Invalid")"), std::string::npos) << refused->body;
    EXPECT_NE(refused->body.find(R"("kind":"ListOptions")"), std::string::npos) << refused->body;
  }
}

TEST(K8sRequest, AWarningIsWrittenAsTheApiServerWritesOne) {
  EXPECT_EQ(k8s_warning("plain"), R"(299 - "plain")");
  EXPECT_EQ(k8s_warning(R"(a "b" \c)"), R"(299 - "a \"b\" \\c")");
}

}  // namespace
}  // namespace uvsched
