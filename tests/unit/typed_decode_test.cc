// The typed decoder against the one schema description: wrong JSON types are
// named with Go's words, unknown and duplicate fields follow fieldValidation.
#include "handlers/pods/typed_decode.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

JsonValue parse(const std::string& text) {
  std::string error;
  auto v = JsonValue::parse(text, &error);
  EXPECT_TRUE(v) << error;
  return v ? *v : JsonValue();
}

TypedDecode decode_pod(JsonValue& pod) { return decode_typed(pod, *schema_type("io.k8s.api.core.v1.Pod")); }

TEST(TypedDecode, WrongTypesAreNamedEveryOne) {
  struct Case {
    const char* body;
    const char* field;
    const char* message;
  } cases[] = {
      {R"({"spec":{"nodeName":{}}})", "spec.nodeName",
       "json: cannot unmarshal object into Go struct field PodSpec.spec.nodeName of type string"},
      {R"({"spec":{"nodeName":true}})", "spec.nodeName",
       "json: cannot unmarshal bool into Go struct field PodSpec.spec.nodeName of type string"},
      {R"({"metadata":{"namespace":[]}})", "metadata.namespace",
       "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.namespace of type string"},
      {R"({"metadata":{"namespace":1}})", "metadata.namespace", "unmarshal number into"},
      {R"({"spec":{"nodeSelector":{"a":[]}}})", "spec.nodeSelector[a]", "unmarshal array into"},
      {R"({"spec":{"containers":{}}})", "spec.containers", "of type []Container"},
      {R"({"spec":{"containers":[{"ports":[{"containerPort":"80"}]}]}})", "spec.containers[0].ports[0].containerPort",
       "Go struct field ContainerPort.spec.containers.ports.containerPort of type int64"},
      {R"({"spec":{"containers":[{"ports":[{"containerPort":80.5}]}]}})", "spec.containers[0].ports[0].containerPort",
       "unmarshal number into"},
      {R"({"spec":{"containers":[{"resources":{"requests":{"cpu":[]}}}]}})",
       "spec.containers[0].resources.requests[cpu]", "of type resource.Quantity"},
      {R"({"spec":{"hostNetwork":"yes"}})", "spec.hostNetwork", "of type bool"},
      {R"({"spec":{"affinity":[]}})", "spec.affinity", "unmarshal array into"},
      {R"({"metadata":{"labels":{"a":1}}})", "metadata.labels[a]", "of type string"},
      {R"({"spec":{"containers":[{"args":[1]}]}})", "spec.containers[0].args[0]", "of type string"},
  };
  for (const auto& c : cases) {
    JsonValue pod = parse(c.body);
    TypedDecode d = decode_pod(pod);
    ASSERT_EQ(d.type_errors.size(), 1u) << c.body;
    EXPECT_EQ(d.type_errors[0].field, c.field) << c.body;
    EXPECT_NE(d.type_errors[0].message.find(c.message), std::string::npos)
        << c.body << ": " << d.type_errors[0].message;
    EXPECT_TRUE(d.refused(FieldValidation::kIgnore)) << c.body;
  }
  // All of them at once, each named.
  JsonValue pod = parse(R"({"metadata":{"name":5,"labels":[]},"spec":{"nodeName":1,"priority":"high"}})");
  TypedDecode d = decode_pod(pod);
  ASSERT_EQ(d.type_errors.size(), 4u);
  EXPECT_EQ(
      d.message("Pod", FieldValidation::kStrict).rfind("Pod in version \"v1\" cannot be handled as a Pod: json:", 0),
      0u);
}

TEST(TypedDecode, NullsAndFreeObjectsAndQuantitiesPass) {
  JsonValue pod = parse(R"({"metadata":{"name":"p","creationTimestamp":null,"labels":{"a":"b"}},
      "spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"cpu":1,"memory":"64Mi"}},
      "securityContext":{"anything":{"goes":[1]}},"env":[{"name":"A","value":"1"}]}],"affinity":{"x":1}},
      "status":{}})");
  TypedDecode d = decode_pod(pod);
  EXPECT_TRUE(d.type_errors.empty());
  EXPECT_TRUE(d.unknown.empty());
  EXPECT_FALSE(d.refused(FieldValidation::kStrict));
}

TEST(TypedDecode, UnknownAndDuplicateFieldsFollowFieldValidation) {
  JsonValue pod =
      parse(R"({"metadata":{"name":"a","name":"b"},"spec":{"foo":1,"containers":[{"name":"c","bar":2}]},"extra":{}})");
  TypedDecode d = decode_pod(pod);
  EXPECT_TRUE(d.type_errors.empty());
  EXPECT_EQ(d.unknown, (std::vector<std::string>{"spec.foo", "spec.containers[0].bar", "extra"}));
  EXPECT_EQ(d.duplicate, (std::vector<std::string>{"metadata.name"}));
  EXPECT_TRUE(d.refused(FieldValidation::kStrict));
  EXPECT_FALSE(d.refused(FieldValidation::kWarn));
  EXPECT_FALSE(d.refused(FieldValidation::kIgnore));
  EXPECT_EQ(
      d.message("Pod", FieldValidation::kStrict),
      "strict decoding error: unknown field \"spec.foo\", unknown field \"spec.containers[0].bar\", unknown field "
      "\"extra\", duplicate field \"metadata.name\"");
  ASSERT_EQ(d.warnings().size(), 4u);
  EXPECT_EQ(d.warnings()[0], "299 - \"unknown field \\\"spec.foo\\\"\"");
  // What is kept: the known fields, and the last of a duplicate.
  EXPECT_EQ(pod.dump(), R"({"metadata":{"name":"b"},"spec":{"containers":[{"name":"c"}]}})");

  EXPECT_EQ(parse_field_validation(""), FieldValidation::kWarn);
  EXPECT_EQ(parse_field_validation("Strict"), FieldValidation::kStrict);
  EXPECT_EQ(parse_field_validation("Ignore"), FieldValidation::kIgnore);
  EXPECT_EQ(parse_field_validation("strict"), std::nullopt);
}

// The same wrong types, as a custom resource's schema validation words them
// (the registry answers a PodGroup's with a 422), and a type of another
// version names its own in the decoder's message.
TEST(TypedDecode, WrongTypesAreAlsoWordedAsASchemaWouldWordThem) {
  JsonValue group = parse(R"({"spec":{"minMember":"3","minResources":{"cpu":[]}},"status":{"running":1.5}})");
  TypedDecode d = decode_typed(group, *schema_of_kind("scheduling.x-k8s.io", "v1alpha1", "PodGroup"));
  ASSERT_EQ(d.schema_errors.size(), 3u);
  EXPECT_EQ(d.schema_errors[0].field, "spec.minMember");
  EXPECT_EQ(d.schema_errors[0].message,
            R"(Invalid value: "string": spec.minMember in body must be of type integer: "string")");
  EXPECT_EQ(d.schema_errors[1].field, "spec.minResources[cpu]");
  EXPECT_EQ(d.schema_errors[1].message,
            R"(Invalid value: "array": spec.minResources[cpu] in body must be of type integer or string: "array")");
  EXPECT_EQ(d.schema_errors[2].message,
            R"(Invalid value: "number": status.running in body must be of type integer: "number")");
  EXPECT_EQ(d.type_errors.size(), 3u);
  EXPECT_EQ(d.message("PodGroup", FieldValidation::kWarn).substr(0, 64),
            R"(PodGroup in version "v1alpha1" cannot be handled as a PodGroup: )");
  JsonValue budget =
      parse(R"({"spec":{"minAvailable":"50%","selector":{"matchExpressions":[{"key":"a","values":"b"}]}}})");
  TypedDecode b = decode_typed(budget, *schema_of_kind("policy", "v1", "PodDisruptionBudget"));
  ASSERT_EQ(b.type_errors.size(), 1u) << "a percentage is an IntOrString";
  EXPECT_EQ(b.type_errors[0].field, "spec.selector.matchExpressions[0].values");
  EXPECT_EQ(schema_of_kind("policy", "v1", "Pod"), nullptr);
  EXPECT_EQ(schema_of_kind("", "v1", "Pod")->name, "io.k8s.api.core.v1.Pod");
}

// Every described object field refers to a described type, and every type
// is reachable: the description is whole.
TEST(ApiSchema, EveryReferenceIsDescribed) {
  for (const auto& t : api_schema()) {
    for (const auto& f : t.fields) {
      bool refers = f.kind == SchemaKind::kObject || (f.kind == SchemaKind::kArray && f.item == SchemaKind::kObject);
      if (refers) {
        EXPECT_NE(schema_type(f.ref), nullptr) << t.name << "." << f.name << " -> " << f.ref;
      } else {
        EXPECT_TRUE(f.ref.empty()) << t.name << "." << f.name;
      }
    }
  }
}

}  // namespace
}  // namespace uvsched
