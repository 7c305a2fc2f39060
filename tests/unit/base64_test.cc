#include "storage/base64.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

struct Case {
  std::string plain;
  std::string encoded;
};

TEST(Base64, EncodesAndDecodesWithPadding) {
  const Case cases[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"/registry/pods/default/p", "L3JlZ2lzdHJ5L3BvZHMvZGVmYXVsdC9w"},
      {std::string("\0\xff\x10", 3), "AP8Q"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(base64_encode(c.plain), c.encoded) << c.encoded;
    auto back = base64_decode(c.encoded);
    ASSERT_TRUE(back.has_value()) << c.encoded;
    EXPECT_EQ(*back, c.plain) << c.encoded;
  }
}

TEST(Base64, RefusesWhatTheGatewayNeverWrites) {
  for (const char* bad : {"Zg", "Zm8", "Z===", "Zm9v!A==", "Zm 9v", "Zm9v\n"})
    EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
}

}  // namespace
}  // namespace uvsched
