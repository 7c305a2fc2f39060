// JsonValue's edits that work on the text itself, table-tested.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "handlers/json_value.h"

namespace uvsched {
namespace {

struct Case {
  const char* name;
  std::string text;
  std::initializer_list<std::string_view> path;
  std::string value;
  std::optional<std::string> want;  // nullopt: no edit
};

TEST(JsonValueWithStringAt, Table) {
  const Case cases[] = {
      {"nested string",
       R"({"a":1,"status":{"phase":"Pending","x":[1,"phase"]}})",
       {"status", "phase"},
       "Running",
       R"({"a":1,"status":{"phase":"Running","x":[1,"phase"]}})"},
      {"whitespace around it is kept",
       "{ \"status\" : { \"phase\" : \"Pending\" ,\n \"x\":1 } }",
       {"status", "phase"},
       "Running",
       "{ \"status\" : { \"phase\" : \"Running\" ,\n \"x\":1 } }"},
      {"last member, no spaces",
       R"({"status":{"phase":"P"}})",
       {"status", "phase"},
       "Running",
       R"({"status":{"phase":"Running"}})"},
      {"members in any order",
       R"({"status":{"x":"y","phase":"P"},"metadata":{"name":"n"}})",
       {"status", "phase"},
       "Failed",
       R"({"status":{"x":"y","phase":"Failed"},"metadata":{"name":"n"}})"},
      {"a later member of the same name elsewhere is untouched",
       R"({"spec":{"phase":"keep"},"status":{"phase":"P"}})",
       {"status", "phase"},
       "Running",
       R"({"spec":{"phase":"keep"},"status":{"phase":"Running"}})"},
      {"an escaped old value", R"({"s":"a\"b\\"})", {"s"}, "c", R"({"s":"c"})"},
      {"a value that needs escaping", R"({"s":"a"})", {"s"}, "q\"\n", R"({"s":"q\"\n"})"},
      {"top-level key", R"({"s":"a","t":2})", {"s"}, "", R"({"s":"","t":2})"},
      {"missing leaf", R"({"status":{}})", {"status", "phase"}, "Running", std::nullopt},
      {"missing parent", R"({"spec":{}})", {"status", "phase"}, "Running", std::nullopt},
      {"the leaf is a number", R"({"status":{"phase":1}})", {"status", "phase"}, "Running", std::nullopt},
      {"the leaf is an object", R"({"status":{"phase":{}}})", {"status", "phase"}, "Running", std::nullopt},
      {"the leaf is null", R"({"status":{"phase":null}})", {"status", "phase"}, "Running", std::nullopt},
      {"a parent is an array", R"({"status":["phase"]})", {"status", "phase"}, "Running", std::nullopt},
      {"a top-level array", R"(["status"])", {"status"}, "Running", std::nullopt},
      {"not JSON", R"({"status":)", {"status"}, "Running", std::nullopt},
      {"empty", "", {"status"}, "Running", std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(JsonValue::with_string_at(c.text, c.path, c.value), c.want) << c.name;
  }
}

// The edit agrees with building the tree, setting the member and writing it.
TEST(JsonValueWithStringAt, MatchesATreeEditOfAWrittenPod) {
  std::string error;
  auto pod = JsonValue::parse(
      R"({"metadata":{"name":"web","annotations":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]},)"
      R"("status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True"}]}})",
      &error);
  ASSERT_TRUE(pod) << error;
  std::string text = pod->dump();
  pod->ensure({"status"}).set("phase", JsonValue::string("Running"));
  EXPECT_EQ(JsonValue::with_string_at(text, {"status", "phase"}, "Running"), pod->dump());
}

// A document past the size whose parser is kept per thread is edited alike.
TEST(JsonValueWithStringAt, ALargeDocument) {
  std::string filler(100 * 1024, 'x');
  std::string text = R"({"a":")" + filler + R"(","status":{"phase":"Pending"}})";
  EXPECT_EQ(JsonValue::with_string_at(text, {"status", "phase"}, "Running"),
            R"({"a":")" + filler + R"(","status":{"phase":"Running"}})");
  // ... and a small one after it still uses the thread's own.
  EXPECT_EQ(JsonValue::with_string_at(R"({"s":"a"})", {"s"}, "b"), R"({"s":"b"})");
}

// The object edit agrees with building the whole tree and editing it there,
// and leaves the text alone where it cannot apply.
TEST(JsonValueWithObjectAt, MatchesATreeEditOfAWrittenPod) {
  std::string error;
  auto pod = JsonValue::parse(
      R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"i"}]},)"
      R"("status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"True"}]},"after":1})",
      &error);
  ASSERT_TRUE(pod) << error;
  std::string text = pod->dump();
  auto extra = JsonValue::parse(
      R"({"conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[{"name":"c"}]})", &error);
  ASSERT_TRUE(extra) << error;
  auto edit = [&](JsonValue& st) {
    st.merge_patch(*extra);
    st.set("phase", JsonValue::string("Running"));
    return true;
  };
  auto edited = JsonValue::with_object_at(text, {"status"}, edit);
  edit(pod->ensure({"status"}));
  EXPECT_EQ(edited, pod->dump());
  // Nested, and with whitespace around it.
  EXPECT_EQ(JsonValue::with_object_at(R"({"a": {"b" : {"x":1} , "c":2}})", {"a", "b"},
                                      [](JsonValue& o) {
                                        o.set("y", JsonValue::string("z"));
                                        return true;
                                      }),
            R"({"a": {"b" : {"x":1,"y":"z"} , "c":2}})");

  auto any = [](JsonValue&) { return true; };
  EXPECT_EQ(JsonValue::with_object_at(R"({"status":"x"})", {"status"}, any), std::nullopt);    // not an object
  EXPECT_EQ(JsonValue::with_object_at(R"({"spec":{}})", {"status"}, any), std::nullopt);       // not there
  EXPECT_EQ(JsonValue::with_object_at(R"({"status":{"a":})", {"status"}, any), std::nullopt);  // not JSON
  EXPECT_EQ(JsonValue::with_object_at(R"({"status":{}})", {"status"}, [](JsonValue&) { return false; }), std::nullopt);
}

// What is read is written back as it was (in compact, canonical form): every
// kind of value, empty and nested containers, escapes.
TEST(JsonValueDump, RoundTrips) {
  const char* docs[] = {
      "{}",
      "[]",
      "null",
      R"("a\"b\\c\n\u0001")",
      R"({"a":[],"b":{},"c":[[],[{}],[1,-2,3.5,1e+21]],"d":true,"e":false,"f":null})",
      R"([{"k":"v","k2":[1,"x",{"y":null}]},"s",0,18446744073709551615,-9223372036854775808])",
      R"({"metadata":{"name":"web","labels":{"app":"w"}},"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}]}]}})",
  };
  for (const char* doc : docs) {
    std::string error;
    auto v = JsonValue::parse(doc, &error);
    ASSERT_TRUE(v) << doc << ": " << error;
    EXPECT_EQ(v->dump(), doc);
  }
}

// Written as one value among others of a JsonWriter: its commas are the writer's.
TEST(JsonValueDump, WritesAsOneValueOfAWriter) {
  std::string error;
  auto v = JsonValue::parse(R"({"x":[1,{}]})", &error);
  ASSERT_TRUE(v) << error;
  JsonWriter w;
  w.begin_array();
  v->write(w);
  w.value("s");
  v->write(w);
  w.end_array();
  w.begin_object().key("k");
  v->write(w);
  w.key("j").value(1).end_object();
  EXPECT_EQ(w.str(), R"([{"x":[1,{}]},"s",{"x":[1,{}]}]{"k":{"x":[1,{}]},"j":1})");
}
// A large patch goes through an index (linear), a small one key by key: both
// give what RFC 7386 says, key order and duplicate keys included.
TEST(JsonValueMergePatch, ALargePatchMergesAsSmallOnesDo) {
  std::string error;
  std::string base_text = R"({"keep":1,"drop":2,"nest":{"a":1,"b":2},"dup":1,"dup":2,"last":"x")";
  std::string patch_text =
      R"({"drop":null,"nest":{"b":null,"c":3},"dup":7,"absent":null,"last":null,"again":1,"again":null,"again":5)";
  for (int i = 0; i < 40; ++i) patch_text += ",\"k" + std::to_string(i) + "\":" + std::to_string(i);
  base_text += "}";
  patch_text += "}";
  auto base = JsonValue::parse(base_text, &error);
  auto patch = JsonValue::parse(patch_text, &error);
  ASSERT_TRUE(base && patch) << error;
  ASSERT_GE(patch->members().size(), 16u);  // the indexed path

  JsonValue indexed = *base;
  indexed.merge_patch(*patch);
  JsonValue one_by_one = *base;  // each member a patch of its own: the in-place path
  for (const auto& [k, v] : patch->members()) {
    JsonValue single = JsonValue::object();
    single.members().emplace_back(k, v);
    one_by_one.merge_patch(single);
  }
  EXPECT_EQ(indexed.dump(), one_by_one.dump());
  EXPECT_EQ(indexed.dump().rfind(R"({"keep":1,"nest":{"a":1,"c":3},"dup":7,"dup":2,"again":5,"k0":0,)", 0), 0u)
      << indexed.dump();
  EXPECT_NE(indexed.dump().find(R"("k39":39})"), std::string::npos) << indexed.dump();
}

}  // namespace
}  // namespace uvsched
