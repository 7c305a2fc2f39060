// Strategic merge patches as kubectl sends them, table by table: keyed lists
// merge by their key, other lists are replaced, directives do what the
// Kubernetes API documents.
#include "handlers/pods/strategic_merge.h"

#include <gtest/gtest.h>

#include <string>
#include "tests/support/json_literal.h"

namespace uvsched {
namespace {

using test::json;

struct MergeCase {
  const char* name;
  const char* path;
  const char* target;
  const char* patch;
  const char* want;  // nullptr: the patch must be refused
};

const MergeCase kMergeCases[] = {
    {"kubectl apply changing one container's image keeps the rest", "",
     R"({"spec":{"containers":[{"name":"c","image":"nginx:1","ports":[{"containerPort":80}]},{"name":"side","image":"busybox"}]}})",
     R"({"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"side"}],"containers":[{"image":"nginx:2","name":"c"}]}})",
     R"({"spec":{"containers":[{"name":"c","image":"nginx:2","ports":[{"containerPort":80}]},{"name":"side","image":"busybox"}]}})"},
    {"a container not there yet is added", "", R"({"spec":{"containers":[{"name":"c","image":"a"}]}})",
     R"({"spec":{"containers":[{"name":"d","image":"b"}]}})",
     R"({"spec":{"containers":[{"name":"c","image":"a"},{"name":"d","image":"b"}]}})"},
    {"$patch delete removes the element with that key", "",
     R"({"spec":{"containers":[{"name":"c","image":"a"},{"name":"d","image":"b"}]}})",
     R"({"spec":{"containers":[{"name":"c","$patch":"delete"}]}})",
     R"({"spec":{"containers":[{"name":"d","image":"b"}]}})"},
    {"a $patch replace element replaces the list", "",
     R"({"spec":{"containers":[{"name":"c","image":"a"},{"name":"d","image":"b"}]}})",
     R"({"spec":{"containers":[{"$patch":"replace"},{"name":"e","image":"x"}]}})",
     R"({"spec":{"containers":[{"name":"e","image":"x"}]}})"},
    {"env merges by name, volumeMounts by mountPath, inside a container", "",
     R"({"spec":{"containers":[{"name":"c","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"volumeMounts":[{"name":"v","mountPath":"/data"}]}]}})",
     R"({"spec":{"containers":[{"name":"c","env":[{"name":"B","value":"3"}],"volumeMounts":[{"mountPath":"/data","readOnly":true}]}]}})",
     R"({"spec":{"containers":[{"name":"c","env":[{"name":"A","value":"1"},{"name":"B","value":"3"}],"volumeMounts":[{"name":"v","mountPath":"/data","readOnly":true}]}]}})"},
    {"ports merge by containerPort, in init containers too", "",
     R"({"spec":{"initContainers":[{"name":"i","ports":[{"containerPort":80,"name":"http"},{"containerPort":443}]}]}})",
     R"({"spec":{"initContainers":[{"name":"i","ports":[{"containerPort":443,"name":"https"}]}]}})",
     R"({"spec":{"initContainers":[{"name":"i","ports":[{"containerPort":80,"name":"http"},{"containerPort":443,"name":"https"}]}]}})"},
    {"lists without a merge key are replaced whole", "",
     R"({"spec":{"containers":[{"name":"c","args":["a","b"]}],"tolerations":[{"key":"k1"}]}})",
     R"({"spec":{"containers":[{"name":"c","args":["z"]}],"tolerations":[{"key":"k2"}]}})",
     R"({"spec":{"containers":[{"name":"c","args":["z"]}],"tolerations":[{"key":"k2"}]}})"},
    {"null deletes a key; maps merge", "", R"({"metadata":{"labels":{"a":"1","b":"2"}}})",
     R"({"metadata":{"labels":{"a":null,"c":"3"}}})", R"({"metadata":{"labels":{"b":"2","c":"3"}}})"},
    {"$patch replace in a map replaces it", "", R"({"metadata":{"labels":{"a":"1","b":"2"}}})",
     R"({"metadata":{"labels":{"$patch":"replace","c":"3"}}})", R"({"metadata":{"labels":{"c":"3"}}})"},
    {"$patch delete in a map removes it", "", R"({"metadata":{"name":"p","labels":{"a":"1"}}})",
     R"({"metadata":{"labels":{"$patch":"delete"}}})", R"({"metadata":{"name":"p"}})"},
    {"finalizers merge as a set, and $deleteFromPrimitiveList takes some out", "",
     R"({"metadata":{"finalizers":["a","b"]}})",
     R"({"metadata":{"finalizers":["b","c"],"$deleteFromPrimitiveList/finalizers":["a"]}})",
     R"({"metadata":{"finalizers":["b","c"]}})"},
    {"$setElementOrder orders the merged list; elements it does not name follow", "",
     R"({"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}})",
     R"({"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"a"}]}})",
     R"({"spec":{"containers":[{"name":"c"},{"name":"a"},{"name":"b"}]}})"},
    {"$retainKeys drops the keys it does not list", "", R"({"spec":{"strategy":{"type":"A","a":1,"b":2}}})",
     R"({"spec":{"strategy":{"$retainKeys":["type","b"],"b":3}}})", R"({"spec":{"strategy":{"type":"A","b":3}}})"},
    {"the status subresource: conditions merge by type", "status",
     R"({"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False"},{"type":"Ready","status":"False"}]})",
     R"({"phase":"Running","conditions":[{"type":"Ready","status":"True"}]})",
     R"({"phase":"Running","conditions":[{"type":"PodScheduled","status":"False"},{"type":"Ready","status":"True"}]})"},
    {"a keyed element without its key is refused", "", R"({"spec":{"containers":[{"name":"c"}]}})",
     R"({"spec":{"containers":[{"image":"x"}]}})", nullptr},
    {"an unknown $patch directive is refused", "", R"({"metadata":{}})", R"({"metadata":{"$patch":"explode"}})",
     nullptr},
    {"a $setElementOrder that is not a list is refused", "", R"({"spec":{"containers":[]}})",
     R"({"spec":{"$setElementOrder/containers":"c"}})", nullptr},
};

TEST(StrategicMerge, Table) {
  for (const MergeCase& c : kMergeCases) {
    SCOPED_TRACE(c.name);
    JsonValue target = json(c.target);
    std::string error;
    bool ok = strategic_merge(target, json(c.patch), c.path, &error);
    if (c.want == nullptr) {
      EXPECT_FALSE(ok);
      EXPECT_FALSE(error.empty());
      continue;
    }
    ASSERT_TRUE(ok) << error;
    EXPECT_EQ(target.dump(), json(c.want).dump());
  }
}

}  // namespace
}  // namespace uvsched
