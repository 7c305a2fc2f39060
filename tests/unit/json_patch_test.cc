// RFC 6902 JSON Patch, table by table: each operation, JSON Pointer escapes,
// and the patches that must be refused.
#include "handlers/pods/json_patch.h"

#include <gtest/gtest.h>

#include <string>
#include "tests/support/json_literal.h"

namespace uvsched {
namespace {

using test::json;

struct PatchCase {
  const char* name;
  const char* doc;
  const char* patch;
  const char* want;  // nullptr: refused
};

const PatchCase kPatchCases[] = {
    {"add a member", R"({"a":1})", R"([{"op":"add","path":"/b","value":2}])", R"({"a":1,"b":2})"},
    {"add replaces a member that is there", R"({"a":1})", R"([{"op":"add","path":"/a","value":3}])", R"({"a":3})"},
    {"add inserts at an index", R"({"l":[1,3]})", R"([{"op":"add","path":"/l/1","value":2}])", R"({"l":[1,2,3]})"},
    {"add appends with -", R"({"l":[1]})", R"([{"op":"add","path":"/l/-","value":2}])", R"({"l":[1,2]})"},
    {"add at the end index", R"({"l":[1]})", R"([{"op":"add","path":"/l/1","value":2}])", R"({"l":[1,2]})"},
    {"remove a member", R"({"a":1,"b":2})", R"([{"op":"remove","path":"/a"}])", R"({"b":2})"},
    {"remove an element", R"({"l":[1,2,3]})", R"([{"op":"remove","path":"/l/1"}])", R"({"l":[1,3]})"},
    {"replace", R"({"a":{"b":1}})", R"([{"op":"replace","path":"/a/b","value":"x"}])", R"({"a":{"b":"x"}})"},
    {"move", R"({"a":{"b":1},"c":{}})", R"([{"op":"move","from":"/a/b","path":"/c/d"}])", R"({"a":{},"c":{"d":1}})"},
    {"copy", R"({"a":[1]})", R"([{"op":"copy","from":"/a","path":"/b"}])", R"({"a":[1],"b":[1]})"},
    {"test that holds, then a change", R"({"a":{"x":1,"y":2}})",
     R"([{"op":"test","path":"/a","value":{"y":2,"x":1}},{"op":"remove","path":"/a/x"}])", R"({"a":{"y":2}})"},
    {"escaped pointers: ~1 is / and ~0 is ~", R"({"labels":{"a/b":"1","c~d":"2"}})",
     R"([{"op":"remove","path":"/labels/a~1b"},{"op":"replace","path":"/labels/c~0d","value":"3"}])",
     R"({"labels":{"c~d":"3"}})"},
    {"the whole document", R"({"a":1})", R"([{"op":"replace","path":"","value":{"b":2}}])", R"({"b":2})"},
    {"an empty patch changes nothing", R"({"a":1})", R"([])", R"({"a":1})"},
    {"a test that fails", R"({"a":1})", R"([{"op":"test","path":"/a","value":2}])", nullptr},
    {"remove of what is not there", R"({"a":1})", R"([{"op":"remove","path":"/b"}])", nullptr},
    {"replace of what is not there", R"({"a":1})", R"([{"op":"replace","path":"/b","value":1}])", nullptr},
    {"add under a parent that is not there", R"({})", R"([{"op":"add","path":"/a/b","value":1}])", nullptr},
    {"an index past the end", R"({"l":[1]})", R"([{"op":"add","path":"/l/3","value":1}])", nullptr},
    {"an index with a leading zero", R"({"l":[1,2]})", R"([{"op":"remove","path":"/l/01"}])", nullptr},
    {"an unknown op", R"({})", R"([{"op":"frobnicate","path":"/a"}])", nullptr},
    {"a path that is not a pointer", R"({})", R"([{"op":"add","path":"a","value":1}])", nullptr},
    {"a bad escape", R"({})", R"([{"op":"add","path":"/a~2","value":1}])", nullptr},
    {"add without a value", R"({})", R"([{"op":"add","path":"/a"}])", nullptr},
    {"a move into its own child", R"({"a":{"b":{}}})", R"([{"op":"move","from":"/a","path":"/a/b/c"}])", nullptr},
    {"not a list", R"({})", R"({"op":"add","path":"/a","value":1})", nullptr},
};

TEST(JsonPatch, Table) {
  for (const PatchCase& c : kPatchCases) {
    SCOPED_TRACE(c.name);
    JsonValue doc = json(c.doc);
    std::string error;
    bool ok = apply_json_patch(doc, json(c.patch), &error);
    if (c.want == nullptr) {
      EXPECT_FALSE(ok);
      EXPECT_FALSE(error.empty());
      continue;
    }
    ASSERT_TRUE(ok) << error;
    EXPECT_TRUE(doc.same_as(json(c.want))) << doc.dump();
  }
}

}  // namespace
}  // namespace uvsched
