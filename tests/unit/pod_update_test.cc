// What an update may change in a stored pod's spec, table by table.
#include <gtest/gtest.h>

#include <string>

#include "handlers/pods/pod_validation.h"
#include "tests/support/json_literal.h"

namespace uvsched {
namespace {

using test::json;

struct UpdateCase {
  const char* name;
  const char* old_spec;
  const char* new_spec;
  bool allowed;
  const char* field = "spec";     // of the first issue, when refused
  const char* message = nullptr;  // the first issue's, when given
};

const UpdateCase kUpdateCases[] = {
    {"nothing changed, keys in another order", R"({"containers":[{"name":"c","image":"a"}],"restartPolicy":"Always"})",
     R"({"restartPolicy":"Always","containers":[{"image":"a","name":"c"}]})", true},
    {"a container's image", R"({"containers":[{"name":"c","image":"a"},{"name":"d","image":"b"}]})",
     R"({"containers":[{"name":"c","image":"a2"},{"name":"d","image":"b2"}]})", true},
    {"an init container's image", R"({"initContainers":[{"name":"i","image":"a"}],"containers":[]})",
     R"({"initContainers":[{"name":"i","image":"a2"}],"containers":[]})", true},
    {"activeDeadlineSeconds set", R"({"containers":[]})", R"({"containers":[],"activeDeadlineSeconds":30})", true},
    {"activeDeadlineSeconds lowered", R"({"activeDeadlineSeconds":30})", R"({"activeDeadlineSeconds":10})", true},
    {"activeDeadlineSeconds kept", R"({"activeDeadlineSeconds":30})", R"({"activeDeadlineSeconds":30})", true},
    {"activeDeadlineSeconds raised", R"({"activeDeadlineSeconds":30})", R"({"activeDeadlineSeconds":31})", false,
     "spec.activeDeadlineSeconds", "Invalid value: 31: must be less than or equal to previous value"},
    {"activeDeadlineSeconds taken away", R"({"activeDeadlineSeconds":30})", R"({})", false,
     "spec.activeDeadlineSeconds", "Invalid value: \"null\": must not update from a positive integer to nil value"},
    {"activeDeadlineSeconds made null", R"({"activeDeadlineSeconds":30})", R"({"activeDeadlineSeconds":null})", false,
     "spec.activeDeadlineSeconds", "Invalid value: \"null\": must not update from a positive integer to nil value"},
    {"a toleration added", R"({"tolerations":[{"key":"a"}]})", R"({"tolerations":[{"key":"a"},{"key":"b"}]})", true},
    {"a scheduling gate removed before binding", R"({"schedulingGates":[{"name":"g"}]})", R"({})", true},
    {"a container's resources", R"({"containers":[{"name":"c","image":"a","resources":{"requests":{"cpu":"1"}}}]})",
     R"({"containers":[{"name":"c","image":"a","resources":{"requests":{"cpu":"2"}}}]})", false},
    {"a container added", R"({"containers":[{"name":"c","image":"a"}]})",
     R"({"containers":[{"name":"c","image":"a"},{"name":"d","image":"b"}]})", false},
    {"a toleration removed", R"({"tolerations":[{"key":"a"},{"key":"b"}]})", R"({"tolerations":[{"key":"a"}]})", false},
    {"the node", R"({"nodeName":"n1","containers":[]})", R"({"nodeName":"n2","containers":[]})", false},
    {"the node taken away (kubectl replace of a bound pod)", R"({"nodeName":"n1","containers":[]})",
     R"({"containers":[]})", false},
    {"a scheduling gate removed after binding", R"({"nodeName":"n1","schedulingGates":[{"name":"g"}]})",
     R"({"nodeName":"n1"})", false},
    {"a scheduling gate added", R"({})", R"({"schedulingGates":[{"name":"g"}]})", false},
    {"the nodeSelector", R"({"nodeSelector":{"zone":"a"}})", R"({"nodeSelector":{"zone":"b"}})", false},
};

TEST(PodUpdate, OnlyWhatKubernetesAllowsMayChange) {
  for (const UpdateCase& c : kUpdateCases) {
    SCOPED_TRACE(c.name);
    JsonValue old_pod = JsonValue::object(), next = JsonValue::object();
    old_pod.set("spec", json(c.old_spec));
    next.set("spec", json(c.new_spec));
    auto issues = validate_pod_update(old_pod, next);
    EXPECT_EQ(issues.empty(), c.allowed);
    if (!issues.empty()) {
      EXPECT_EQ(issues[0].field, c.field);
      EXPECT_EQ(issues[0].reason, c.field == std::string("spec") ? "FieldValueForbidden" : "FieldValueInvalid");
      if (c.message) {
        EXPECT_EQ(issues[0].message, c.message);
      }
    }
  }
}

}  // namespace
}  // namespace uvsched
