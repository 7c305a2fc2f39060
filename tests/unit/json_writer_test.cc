#include "reactor/json_writer.h"

#include <gtest/gtest.h>

#include <simdjson.h>

#include <cmath>

namespace uvsched {
namespace {

TEST(JsonWriter, NestsObjectsAndArraysWithCommas) {
  JsonWriter w;
  w.begin_object().key("a").value(1).key("b").begin_array().value("x").value(true).null().end_array();
  w.key("c").begin_object().end_object().end_object();
  EXPECT_EQ(w.str(), R"({"a":1,"b":["x",true,null],"c":{}})");
}

TEST(JsonWriter, EscapesEverythingJsonRequires) {
  struct Case {
    std::string in, out;
  } cases[] = {
      {"plain", R"("plain")"},
      {"q\"uote", R"("q\"uote")"},
      {"back\\slash", R"("back\\slash")"},
      {"line\nfeed\ttab\r", R"("line\nfeed\ttab\r")"},
      {std::string("nul\0x", 5), R"("nul\u0000x")"},
      {"\x1f\x7f", R"("\u001f\u007f")"},
      {"ünï", "\"ünï\""},
      {"", R"("")"},
      {"\"", R"("\"")"},
      {"\b\f", R"("\b\f")"},
      {"a\\b\\c", R"("a\\b\\c")"},
  };
  for (const auto& c : cases) {
    std::string out;
    append_json_string(out, c.in);
    EXPECT_EQ(out, c.out) << c.in;
  }
}

TEST(JsonWriter, NumbersRoundTripAndNonFiniteIsNull) {
  JsonWriter w;
  w.begin_array().value(0.1).value(int64_t{-9007199254740993}).value(uint64_t{18446744073709551615u});
  w.value(std::nan("")).value(1e300 * 1e10).end_array();
  EXPECT_EQ(w.str(), "[0.1,-9007199254740993,18446744073709551615,null,null]");
}

// Found by fuzz_json_decoders: a huge double printed as a plain integer
// could not be read back.
TEST(JsonWriter, HugeDoublesStayReadableAsNumbers) {
  simdjson::dom::parser p;
  for (double d : {1.5555555555555556e21, -3e19, 9.5e18, 1e300, 123456789.0, 0.5}) {
    JsonWriter w;
    w.value(d);
    std::string text = w.take();
    double back = 0;
    ASSERT_EQ(p.parse(text).get(back), simdjson::SUCCESS) << text;
    EXPECT_EQ(back, d) << text;
  }
}

TEST(JsonWriter, RawValuesTakeTheirPlace) {
  JsonWriter w;
  w.begin_object().key("pod").raw(R"({"x":1})").key("n").value(2).end_object();
  EXPECT_EQ(w.str(), R"({"pod":{"x":1},"n":2})");
}

}  // namespace
}  // namespace uvsched
