#include "handlers/json_body.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(JsonBody, RejectsWhatIsNotAnObjectWithAClearMessage) {
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  struct Case {
    std::string body, says;
  } cases[] = {
      {"", "empty"},
      {"{", "malformed JSON"},
      {"[1,2]", "must be a JSON object"},
      {"\"str\"", "must be a JSON object"},
      {"{\"a\":1} trailing", "malformed JSON"},
      {std::string(5000, '[') + std::string(5000, ']'), "malformed JSON"},  // deeper than simdjson's 1024 levels
      {"{\"a\":\"\xff\xfe\"}", "malformed JSON"},                           // not UTF-8
  };
  for (const auto& c : cases) {
    auto err = parse_json_object(parser, c.body, &obj);
    ASSERT_TRUE(err) << c.body.substr(0, 40);
    EXPECT_NE(err->message.find(c.says), std::string::npos) << err->message;
  }
  EXPECT_FALSE(parse_json_object(parser, R"({"ok":true})", &obj));
}

TEST(JsonBody, FieldReadersNameTheFieldOnAWrongType) {
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  ASSERT_FALSE(parse_json_object(
      parser, R"({"s":"x","i":3,"f":3.0,"half":2.5,"b":true,"n":null,"o":{"k":-1},"wrong":"7","a":[1,2]})", &obj));
  std::string s;
  int64_t i = 0;
  double d = 0;
  bool b = false;
  EXPECT_FALSE(read_string(obj, "s", "s", &s));
  EXPECT_EQ(s, "x");
  EXPECT_FALSE(read_int(obj, "i", "i", &i));
  EXPECT_EQ(i, 3);
  EXPECT_FALSE(read_int(obj, "f", "f", &i));
  EXPECT_EQ(i, 3);
  EXPECT_FALSE(read_number(obj, "i", "i", &d));
  EXPECT_EQ(d, 3.0);
  EXPECT_FALSE(read_bool(obj, "b", "b", &b));
  EXPECT_TRUE(b);
  int64_t untouched = 42;
  EXPECT_FALSE(read_int(obj, "n", "n", &untouched));  // null reads as absent
  EXPECT_FALSE(read_int(obj, "absent", "absent", &untouched));
  EXPECT_EQ(untouched, 42);

  auto half = read_int(obj, "half", "batch_size", &i);
  ASSERT_TRUE(half);
  EXPECT_EQ(half->field, "batch_size");
  EXPECT_NE(half->message.find("must be an integer"), std::string::npos);
  EXPECT_EQ(read_int(obj, "wrong", "epochs", &i)->field, "epochs");
  EXPECT_EQ(read_bool(obj, "s", "x.static", &b)->message, "field 'x.static' must be true or false");
  EXPECT_EQ(read_string(obj, "i", "model_type", &s)->field, "model_type");
  EXPECT_EQ(read_string(obj, "absent", "dataset", &s, true)->message, "field 'dataset' is required");

  simdjson::dom::object inner;
  bool present = false;
  EXPECT_FALSE(read_object(obj, "o", "options", &inner, &present));
  EXPECT_TRUE(present);
  EXPECT_FALSE(read_int(inner, "k", "options.k", &i));
  EXPECT_EQ(i, -1);
  EXPECT_EQ(read_object(obj, "s", "options", &inner, &present)->field, "options");

  simdjson::dom::array list;
  EXPECT_FALSE(read_array(obj, "a", "offers", &list, &present));
  EXPECT_TRUE(present);
  EXPECT_EQ(list.size(), 2u);
  EXPECT_FALSE(read_array(obj, "n", "offers", &list, &present));
  EXPECT_FALSE(present);
  EXPECT_EQ(read_array(obj, "o", "offers", &list, &present)->message, "field 'offers' must be an array");
  EXPECT_EQ(read_array(obj, "absent", "statuses", &list, &present, true)->message, "field 'statuses' is required");
}

}  // namespace
}  // namespace uvsched
