// Every object's metadata as the API server judges it: names, label keys and
// values, annotation keys and size, finalizers; table by table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "handlers/pods/inter_pod_validation.h"
#include "handlers/pods/pod_validation.h"
#include "tests/support/json_literal.h"

namespace uvsched {
namespace {

using test::json;

struct NameCase {
  const char* text;
  bool qualified_name;  // a label or annotation key, a finalizer
  bool label_value;
  bool subdomain;  // an object's name
};

const NameCase kNameCases[] = {
    {"app", true, true, true},
    {"MyName", true, true, false},
    {"my.name_1-x", true, true, false},
    {"123-abc", true, true, true},
    {"example.com/MyName", true, false, false},
    {"app.kubernetes.io/name", true, false, false},
    {"", false, true, false},
    {"a b", false, false, false},
    {"-a", false, false, false},
    {"a-", false, false, false},
    {"_a", false, false, false},
    {"/a", false, false, false},
    {"a/", false, false, false},
    {"a/b/c", false, false, false},
    {"Example.com/a", false, false, false},  // the prefix is a lowercase subdomain
    {"ex_ample.com/a", false, false, false},
    {"a..b", true, true, false},  // '.' is a qualified name's character, an empty part is no subdomain's
    {"ü", false, false, false},
};

TEST(ObjectMeta, QualifiedNamesLabelValuesAndSubdomainsAsKubernetesReadsThem) {
  for (const NameCase& c : kNameCases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(qualified_name_errors(c.text).empty(), c.qualified_name);
    EXPECT_EQ(label_value_errors(c.text).empty(), c.label_value);
    EXPECT_EQ(is_dns1123_subdomain(c.text), c.subdomain);
  }
}

// A metav1.LabelSelector (a PodDisruptionBudget's): the node selector's
// checks of each expression, but no Gt or Lt, and every value a label value.
TEST(LabelSelectorValidation, EachFieldAsTheApiServerChecksIt) {
  std::vector<FieldIssue> issues;
  JsonValue sel = json(R"({"matchLabels":{"app":"web"},"matchExpressions":[
      {"key":"tier","operator":"In","values":["a","b"]},{"key":"x","operator":"DoesNotExist"}]})");
  validate_label_selector(&sel, "spec.selector", &issues);
  EXPECT_TRUE(issues.empty()) << issues[0].field << ": " << issues[0].message;
  sel = json(R"({"matchLabels":{"a b":"c"},"matchExpressions":[{"key":"k","operator":"Gt","values":["1"]},
      {"key":"k","operator":"In","values":[3,"bad value"]},{"key":"k","operator":"Exists","values":["x"]},
      {"key":"k","operator":"NotIn"},{"key":"k","operator":"In","values":"x"},7]})");
  validate_label_selector(&sel, "spec.selector", &issues);
  std::vector<std::string> fields;
  for (const auto& i : issues) fields.push_back(i.field + " " + i.reason);
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "spec.selector.matchLabels FieldValueInvalid",
                        "spec.selector.matchExpressions[0].operator FieldValueInvalid",
                        "spec.selector.matchExpressions[1].values[0] FieldValueTypeInvalid",
                        "spec.selector.matchExpressions[1].values[1] FieldValueInvalid",
                        "spec.selector.matchExpressions[2].values FieldValueForbidden",
                        "spec.selector.matchExpressions[3].values FieldValueRequired",
                        "spec.selector.matchExpressions[4].values FieldValueTypeInvalid",
                        "spec.selector.matchExpressions[5] FieldValueTypeInvalid",
                    }));
  issues.clear();
  JsonValue not_object = json(R"("app=web")");
  validate_label_selector(&not_object, "spec.selector", &issues);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].reason, "FieldValueTypeInvalid");
}

TEST(ObjectMeta, LengthsAreKubernetesOwn) {
  const std::string s63(63, 'a'), s64(64, 'a'), s253 = std::string(251, 'a') + ".b",
                                                s254 = std::string(252, 'a') + ".b";
  EXPECT_TRUE(qualified_name_errors(s63).empty());
  EXPECT_EQ(qualified_name_errors(s64), std::vector<std::string>{"name part must be no more than 63 characters"});
  EXPECT_TRUE(qualified_name_errors(s253 + "/" + s63).empty());
  EXPECT_EQ(qualified_name_errors(s254 + "/a"),
            std::vector<std::string>{"prefix part must be no more than 253 characters"});
  EXPECT_TRUE(label_value_errors(s63).empty());
  EXPECT_EQ(label_value_errors(s64), std::vector<std::string>{"must be no more than 63 characters"});
  // A name is a subdomain: 253 in all, and no limit of 63 on a part (a DNS label's).
  EXPECT_TRUE(is_dns1123_subdomain(std::string(100, 'a')));
  EXPECT_TRUE(is_dns1123_subdomain(s253));
  EXPECT_FALSE(is_dns1123_subdomain(s254));
  EXPECT_FALSE(is_dns1123_label(s64));
}

struct MetaCase {
  const char* name;
  const char* metadata;
  const char* field;  // the first issue's; empty when valid
  const char* message;
};

const MetaCase kMetaCases[] = {
    {"plain", R"({"name":"web","labels":{"app":"web","tier":""},"annotations":{"Example.com/Note":"x"}})", "", ""},
    {"a name of 100 characters",
     R"({"name":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})",
     "", ""},
    {"a label key with a space", R"({"name":"web","labels":{"a b":"c"}})", "metadata.labels",
     "Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
     "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
    {"a label value of 64",
     R"({"name":"web","labels":{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}})",
     "metadata.labels",
     "Invalid value: \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\": must be no more than 63 "
     "characters"},
    {"a label value that is not a string", R"({"name":"web","labels":{"a":1}})", "metadata.labels[a]",
     "must be a string"},
    {"an annotation key with two slashes", R"({"name":"web","annotations":{"a/b/c":"x"}})", "metadata.annotations",
     "Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
     "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
     "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
     "'example.com/MyName')"},
    {"a finalizer with an empty name", R"({"name":"web","finalizers":["example.com/"]})", "metadata.finalizers",
     "Invalid value: \"example.com/\": name part must be non-empty"},
    {"generateName may end with '-'", R"({"generateName":"web-","name":"web-x1z2"})", "", ""},
    {"generateName in capitals", R"({"generateName":"Web-","name":"web-x1z2"})", "metadata.generateName",
     "Invalid value: \"Web-\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
     "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
     "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
};

TEST(ObjectMeta, EachIssueInTheApiServersWords) {
  for (const MetaCase& c : kMetaCases) {
    SCOPED_TRACE(c.name);
    JsonValue obj = JsonValue::object();
    obj.set("metadata", json(c.metadata));
    auto issues = validate_object_meta(obj);
    if (std::string(c.field).empty()) {
      EXPECT_TRUE(issues.empty()) << issues[0].field << ": " << issues[0].message;
      continue;
    }
    ASSERT_FALSE(issues.empty());
    EXPECT_EQ(issues[0].field, c.field);
    EXPECT_EQ(issues[0].message, c.message);
  }
}

TEST(ObjectMeta, AnnotationsHold256KiBInAll) {
  JsonValue obj = JsonValue::object();
  JsonValue& annotations = obj.ensure({"metadata", "annotations"});
  obj.ensure({"metadata"}).set("name", JsonValue::string("web"));
  annotations.set("a", JsonValue::string(std::string(128 * 1024 - 1, 'x')));
  annotations.set("b", JsonValue::string(std::string(128 * 1024 - 1, 'x')));
  EXPECT_TRUE(validate_object_meta(obj).empty());  // exactly 262,144 bytes with the keys
  annotations.set("c", JsonValue::string(""));
  auto issues = validate_object_meta(obj);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].field, "metadata.annotations");
  EXPECT_EQ(issues[0].reason, "FieldValueTooLong");
  EXPECT_EQ(issues[0].message, "Too long: may not be more than 262144 bytes");
}

TEST(ObjectMeta, APodsNodeSelectorIsALabelMap) {
  JsonValue pod = json(R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}],)"
                       R"("nodeSelector":{"zone":"a b"}}})");
  auto issues = validate_pod(pod);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].field, "spec.nodeSelector");
  EXPECT_EQ(issues[0].message.substr(0, 22), "Invalid value: \"a b\": ");
}

TEST(ObjectMeta, AnActiveDeadlineIsBetweenOneSecondAndInt32Max) {
  for (const char* v : {"1", "2147483647", "null"}) {
    JsonValue pod = json(std::string(R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}],)") +
                         R"("activeDeadlineSeconds":)" + v + "}}");
    EXPECT_TRUE(validate_pod(pod).empty()) << v;
  }
  for (const char* v : {"0", "-1", "2147483648"}) {
    JsonValue pod = json(std::string(R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}],)") +
                         R"("activeDeadlineSeconds":)" + v + "}}");
    auto issues = validate_pod(pod);
    ASSERT_EQ(issues.size(), 1u) << v;
    EXPECT_EQ(issues[0].field, "spec.activeDeadlineSeconds");
    EXPECT_EQ(issues[0].message, std::string("Invalid value: ") + v + ": must be between 1 and 2147483647, inclusive");
  }
}

// A required node affinity is checked as the API server checks a NodeSelector.
// spec.tolerations as ValidateTolerations checks them; the issue's field
// and the start of its message.
TEST(ObjectMeta, TolerationsAreCheckedAsTheApiServerChecksThem) {
  struct Case {
    const char* tolerations;
    const char* field;  // nullptr: valid
    const char* message;
  } cases[] = {
      {R"([{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"}])", nullptr, ""},
      {R"([{"operator":"Exists"}])", nullptr, ""},
      {R"([{"key":"maintenance","operator":"Exists","effect":"NoExecute","tolerationSeconds":60}])", nullptr, ""},
      {R"([{"key":"a"}])", nullptr, ""},
      {R"([{"operator":"Equal","value":"x"}])", "spec.tolerations[0].operator",
       R"(Invalid value: "Equal": operator must be Exists when `key` is empty)"},
      {R"([{"key":"a b","operator":"Exists"}])", "spec.tolerations[0].key", R"(Invalid value: "a b": )"},
      {R"([{"key":"a","operator":"Exists","value":"x"}])", "spec.tolerations[0].operator",
       R"(Invalid value: "x": value must be empty when `operator` is 'Exists')"},
      {R"([{"key":"a","operator":"In"}])", "spec.tolerations[0].operator",
       R"(Unsupported value: "In": supported values: "Equal", "Exists")"},
      {R"([{"key":"a","operator":"Exists","effect":"NoRun"}])", "spec.tolerations[0].effect",
       R"(Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute")"},
      {R"([{"key":"a","operator":"Exists","effect":"NoSchedule","tolerationSeconds":5}])", "spec.tolerations[0].effect",
       R"(Invalid value: "NoSchedule": effect must be 'NoExecute' when)"},
      {R"([{"key":"a","value":"-bad-"}])", "spec.tolerations[0].operator", R"(Invalid value: "-bad-": )"},
      {R"([{"key":5}])", "spec.tolerations[0].key", "Invalid value: 5: must be a string"},
      {R"([{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":"60"}])",
       "spec.tolerations[0].tolerationSeconds", R"(Invalid value: "60": must be an integer)"},
      {R"([7])", "spec.tolerations[0]", "Invalid value: 7: must be an object"},
      {R"({"key":"a"})", "spec.tolerations", "Invalid value: "},
  };
  for (const auto& c : cases) {
    JsonValue pod = json(R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}]}})");
    pod.ensure({"spec"}).set("tolerations", json(c.tolerations));
    auto issues = validate_pod(pod);
    if (!c.field) {
      EXPECT_TRUE(issues.empty()) << c.tolerations << ": " << (issues.empty() ? "" : issues[0].message);
      continue;
    }
    ASSERT_FALSE(issues.empty()) << c.tolerations;
    EXPECT_EQ(issues[0].field, c.field) << c.tolerations;
    EXPECT_EQ(issues[0].message.rfind(c.message, 0), 0u) << c.tolerations << ": " << issues[0].message;
  }
}

// A node's spec.taints as validateNodeTaints checks them.
TEST(ObjectMeta, NodeTaintsAreCheckedAsTheApiServerChecksThem) {
  struct Case {
    const char* taints;
    const char* field;  // nullptr: valid
    const char* message;
  } cases[] = {
      {R"([{"key":"dedicated","value":"gpu","effect":"NoSchedule"},{"key":"dedicated","effect":"NoExecute",)"
       R"("timeAdded":"2026-12-07T00:00:00Z"}])",
       nullptr, ""},
      {R"([{"key":"dedicated","effect":"NoSchedule"},{"key":"dedicated","value":"x","effect":"NoSchedule"}])",
       "spec.taints[1]", R"(Duplicate value: "dedicated:NoSchedule": taints must be unique by key and effect pair)"},
      {R"([{"key":"dedicated"}])", "spec.taints[0].effect", "Required value"},
      {R"([{"key":"dedicated","effect":"Sometimes"}])", "spec.taints[0].effect", R"(Unsupported value: "Sometimes")"},
      {R"([{"effect":"NoSchedule"}])", "spec.taints[0].key", R"(Invalid value: "": )"},
      {R"([{"key":"a","value":"b c","effect":"NoSchedule"}])", "spec.taints[0].value", R"(Invalid value: "b c": )"},
      {R"([{"key":"a","effect":"NoExecute","timeAdded":"soon"}])", "spec.taints[0].timeAdded",
       R"(Invalid value: "soon": must be an RFC 3339 time)"},
      {R"([{"key":"a","effect":1}])", "spec.taints[0].effect", "Invalid value: 1: must be a string"},
  };
  for (const auto& c : cases) {
    std::vector<FieldIssue> issues;
    JsonValue taints = json(c.taints);
    validate_taints(&taints, "spec.taints", &issues);
    if (!c.field) {
      EXPECT_TRUE(issues.empty()) << c.taints << ": " << (issues.empty() ? "" : issues[0].message);
      continue;
    }
    ASSERT_FALSE(issues.empty()) << c.taints;
    EXPECT_EQ(issues[0].field, c.field) << c.taints;
    EXPECT_EQ(issues[0].message.rfind(c.message, 0), 0u) << c.taints << ": " << issues[0].message;
  }
}

TEST(ObjectMeta, ARequiredNodeAffinityIsCheckedAsTheApiServerChecksIt) {
  const std::string at = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  struct Case {
    const char* required;
    std::string field;  // of the one issue, or "" for none
    const char* message;
  };
  const Case cases[] = {
      {R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]})", "", ""},
      {R"({"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"NotIn","values":["n"]}]}]})", "",
       ""},
      {R"({"nodeSelectorTerms":[]})", at + ".nodeSelectorTerms",
       "Required value: must have at least one node selector term"},
      {R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In"}]}]})",
       at + ".nodeSelectorTerms[0].matchExpressions[0].values",
       "Required value: must be specified when `operator` is 'In' or 'NotIn'"},
      {R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"Exists","values":["a"]}]}]})",
       at + ".nodeSelectorTerms[0].matchExpressions[0].values",
       "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"},
      {R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"cores","operator":"Gt","values":["1","2"]}]}]})",
       at + ".nodeSelectorTerms[0].matchExpressions[0].values",
       "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"},
      {R"({"nodeSelectorTerms":[{},{"matchExpressions":[{"key":"zone","operator":"Near","values":["a"]}]}]})",
       at + ".nodeSelectorTerms[1].matchExpressions[0].operator",
       "Invalid value: \"Near\": not a valid selector operator"},
      {R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"a b","operator":"Exists"}]}]})",
       at + ".nodeSelectorTerms[0].matchExpressions[0].key", "Invalid value: \"a b\": "},
      {R"({"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["a","b"]}]}]})",
       at + ".nodeSelectorTerms[0].matchFields[0].values",
       "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"},
      {R"({"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.uid","operator":"In","values":["a"]}]}]})",
       at + ".nodeSelectorTerms[0].matchFields[0].key",
       "Invalid value: \"metadata.uid\": not a valid field selector key"},
  };
  for (const Case& c : cases) {
    JsonValue pod = json(R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}]}})");
    pod.ensure({"spec", "affinity", "nodeAffinity"})
        .set("requiredDuringSchedulingIgnoredDuringExecution", json(c.required));
    auto issues = validate_pod(pod);
    if (c.field.empty()) {
      EXPECT_TRUE(issues.empty()) << c.required << ": " << (issues.empty() ? "" : issues[0].message);
      continue;
    }
    ASSERT_EQ(issues.size(), 1u) << c.required;
    EXPECT_EQ(issues[0].field, c.field) << c.required;
    EXPECT_EQ(issues[0].message.substr(0, std::string_view(c.message).size()), c.message) << c.required;
  }
}

// Inter-pod terms and spread constraints are checked as the API server
// checks them (placement weighs them: a maxSkew of 0 would hold a pod back
// for good); the issues' fields and the starts of their messages.
TEST(ObjectMeta, InterPodConstraintsAreCheckedAsTheApiServerChecksThem) {
  JsonValue pod = json(
      R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}],"affinity":{)"
      R"("podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{}},)"
      R"({"topologyKey":"bad key","namespaces":["Upper"]}]},)"
      R"("podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":0,)"
      R"("podAffinityTerm":{"topologyKey":"zone","labelSelector":{"matchExpressions":[{"key":"a","operator":"Maybe"}]}}}]}},)"
      R"("topologySpreadConstraints":[{"maxSkew":0,"topologyKey":"zone","whenUnsatisfiable":"Never"},)"
      R"({"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway","minDomains":2},)"
      R"({"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway","nodeTaintsPolicy":"Sometimes"},)"
      R"({"maxSkew":1,"whenUnsatisfiable":"DoNotSchedule","minDomains":0}]}})");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
       "Invalid value: 0: must be in the range 1-100"},
      {"spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector."
       "matchExpressions[0].operator",
       ""},
      {"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
       "Required value: can not be empty"},
      {"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[1].namespaces[0]",
       "Invalid value: \"Upper\""},
      {"spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[1].topologyKey",
       "Invalid value: \"bad key\""},
      {"spec.topologySpreadConstraints[0].maxSkew", "Invalid value: 0: must be greater than zero"},
      {"spec.topologySpreadConstraints[0].whenUnsatisfiable", "Unsupported value: \"Never\""},
      {"spec.topologySpreadConstraints[1].minDomains",
       "Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"},
      {"spec.topologySpreadConstraints[2].nodeTaintsPolicy", "Unsupported value: \"Sometimes\""},
      {"spec.topologySpreadConstraints[2]", "Duplicate value: \"{zone, ScheduleAnyway}\""},
      {"spec.topologySpreadConstraints[3].topologyKey", "Required value: can not be empty"},
      {"spec.topologySpreadConstraints[3].minDomains", "Invalid value: 0: must be greater than zero"},
  };
  auto issues = validate_pod(pod);
  ASSERT_EQ(issues.size(), expected.size());
  for (const auto& [field, start] : expected) {
    auto it = std::find_if(issues.begin(), issues.end(), [&](const FieldIssue& i) { return i.field == field; });
    ASSERT_NE(it, issues.end()) << field;
    EXPECT_EQ(it->message.rfind(start, 0), 0u) << field << ": " << it->message;
  }
}

// What uvsched does not weigh is said, field by field, not silently dropped.
TEST(ObjectMeta, ConstraintsNotWeighedAreWarnedOf) {
  JsonValue pod =
      json(R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}],)"
           R"("affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[)"
           R"({"labelSelector":{"matchLabels":{"app":"web"}},"topologyKey":"kubernetes.io/hostname"},)"
           R"({"labelSelector":{},"namespaceSelector":{},"topologyKey":"zone"}]},)"
           R"("podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"podAffinityTerm":{}}]}},)"
           R"("topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule"},)"
           R"({"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"ScheduleAnyway"}]}})");
  auto warnings = unweighed_constraints(pod);
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_EQ(warnings[0].rfind("spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution is a "
                              "preference, which is not weighed",
                              0),
            0u)
      << warnings[0];
  EXPECT_EQ(warnings[1].rfind("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[1]."
                              "namespaceSelector is not read",
                              0),
            0u)
      << warnings[1];
  EXPECT_EQ(warnings[2].rfind("spec.topologySpreadConstraints[1] (ScheduleAnyway) is a preference", 0), 0u)
      << warnings[2];
  // What is weighed is not warned of: required terms, DoNotSchedule spread, node affinity.
  EXPECT_TRUE(unweighed_constraints(json(R"({"spec":{"affinity":{"nodeAffinity":{},"podAntiAffinity":{)"
                                         R"("requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"z"}]}},)"
                                         R"("topologySpreadConstraints":[{"whenUnsatisfiable":"DoNotSchedule"}]}})"))
                  .empty());
}

// Scheduling gates: qualified names, none twice, none on a pod given a node;
// a gated pod is created marked as the API server marks it.
TEST(ObjectMeta, SchedulingGatesAreCheckedAndMarkThePod) {
  struct Case {
    const char* spec_extra;
    const char* field;  // of the one issue, or "" for none
    const char* message;
  };
  const Case cases[] = {
      {R"("schedulingGates":[{"name":"example.com/quota"}])", "", ""},
      {R"("schedulingGates":[])", "", ""},
      {R"("schedulingGates":[{"name":"a b"}])", "spec.schedulingGates[0].name", "Invalid value: \"a b\": "},
      {R"("schedulingGates":[{"name":"q"},{"name":"q"}])", "spec.schedulingGates[1].name", "Duplicate value: \"q\""},
      {R"("schedulingGates":[{"name":"q"}],"nodeName":"edge-1")", "spec.nodeName",
       "Forbidden: cannot be set until all schedulingGates have been cleared"},
  };
  for (const Case& c : cases) {
    JsonValue pod = json(std::string(R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}],)") +
                         c.spec_extra + "}}");
    auto issues = validate_pod(pod);
    if (std::string_view(c.field).empty()) {
      EXPECT_TRUE(issues.empty()) << c.spec_extra << ": " << (issues.empty() ? "" : issues[0].message);
      continue;
    }
    ASSERT_EQ(issues.size(), 1u) << c.spec_extra;
    EXPECT_EQ(issues[0].field, c.field) << c.spec_extra;
    EXPECT_EQ(issues[0].message.substr(0, std::string_view(c.message).size()), c.message) << c.spec_extra;
  }
  JsonValue gated = json(R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}],)"
                         R"("schedulingGates":[{"name":"q"}]}})");
  default_pod(gated, "default", "u", "2026-12-06T00:00:00Z");
  EXPECT_EQ(gated.find({"status", "conditions"})->dump(),
            R"([{"type":"PodScheduled","status":"False","reason":"SchedulingGated",)"
            R"("message":"Scheduling is blocked due to non-empty scheduling gates",)"
            R"("lastTransitionTime":"2026-12-06T00:00:00Z"}])");
  JsonValue plain = json(R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}]}})");
  default_pod(plain, "default", "u", "2026-12-06T00:00:00Z");
  EXPECT_EQ(plain.find({"status", "conditions"}), nullptr);
}

TEST(ObjectMeta, TheInvalidStatusNamesTheKind) {
  JsonValue status = json(invalid_status_json("Namespace", "x", {{"metadata.labels", "FieldValueInvalid", "m"}}));
  EXPECT_EQ(status.find({"details", "kind"})->text(), "Namespace");
  EXPECT_EQ(status.str("message"), "Namespace \"x\" is invalid: metadata.labels: m");
}

}  // namespace
}  // namespace uvsched
