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

// The scan looks at whole words, the last overlapping the one before: every
// byte value, at every place in strings of every kind of length, must come
// out as it does alone. (A string of one byte is looked at byte by byte; the
// escapes themselves are pinned by the table above.)
TEST(JsonWriter, EscapesTheSameWhereverTheByteFallsInAWord) {
  auto alone = [](char c) {
    std::string one;
    append_json_string(one, std::string(1, c));
    return one.substr(1, one.size() - 2);
  };
  auto reference = [&](std::string_view s) {
    std::string out = "\"";
    for (char c : s) out += alone(c);
    return out + "\"";
  };
  int escaped = 0;
  for (int b = 0; b < 256; ++b) {
    for (size_t len : {1u, 3u, 4u, 5u, 7u, 8u, 9u, 15u, 16u, 17u, 23u}) {
      for (size_t at = 0; at < len; ++at) {
        std::string in(len, 'a');
        in[at] = static_cast<char>(b);
        if (at + 1 < len) in[at + 1] = static_cast<char>(0xa0);  // high bytes are never escaped
        std::string out;
        append_json_string(out, in);
        ASSERT_EQ(out, reference(in)) << "byte " << b << " at " << at << " of " << len;
        escaped += out.size() > len + 2;
      }
    }
  }
  EXPECT_EQ(escaped, 35 * (1 + 3 + 4 + 5 + 7 + 8 + 9 + 15 + 16 + 17 + 23));  // 0x00-0x1f, quote, backslash, 0x7f
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
