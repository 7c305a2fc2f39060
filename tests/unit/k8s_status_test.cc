// Status objects as apimachinery's constructors make them: which carry
// details, and what they hold (clients read them: `kubectl debug` reads
// .details.name of a 404 without checking that details are there).
#include "handlers/pods/k8s_status.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(K8sStatus, DetailsAreThereWhenApimachineryPutsThem) {
  struct Case {
    int code;
    const char* reason;
    const char* kind;
    const char* name;
    const char* details;  // the "details" member as written, or nullptr for none
  };
  const Case cases[] = {
      {404, "NotFound", "", "", R"("details":{})"},  // a path not served
      {404, "NotFound", "pods", "web", R"("details":{"name":"web","kind":"pods"})"},
      {409, "AlreadyExists", "", "", R"("details":{})"},
      {409, "Conflict", "pods", "", R"("details":{"kind":"pods"})"},
      {403, "Forbidden", "", "", R"("details":{})"},
      {405, "MethodNotAllowed", "", "", R"("details":{})"},
      {400, "BadRequest", "", "", nullptr},
      {413, "RequestEntityTooLarge", "", "", nullptr},
      {503, "ServiceUnavailable", "", "", nullptr},
  };
  for (const Case& c : cases) {
    std::string json = k8s_status_json(c.code, c.reason, "m", c.kind, c.name);
    if (c.details) {
      EXPECT_NE(json.find(c.details), std::string::npos) << c.reason << ": " << json;
    } else {
      EXPECT_EQ(json.find("details"), std::string::npos) << c.reason << ": " << json;
    }
    EXPECT_NE(json.find(R"("code":)" + std::to_string(c.code) + "}"), std::string::npos) << json;
  }
}

}  // namespace
}  // namespace uvsched
