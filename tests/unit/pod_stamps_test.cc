// The stamps a pod gets when it is created: its uid and RFC 3339 times.
#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

#include "handlers/pods/pod_validation.h"

namespace uvsched {
namespace {

TEST(PodStamps, Rfc3339IsUtcToTheSecond) {
  struct Case {
    int64_t unix_ms;
    const char* want;
  } cases[] = {
      {0, "1970-01-01T00:00:00Z"},
      {999, "1970-01-01T00:00:00Z"},
      {1000, "1970-01-01T00:00:01Z"},
      {1700000000123, "2023-11-14T22:13:20Z"},
      {1700000000999, "2023-11-14T22:13:20Z"},  // the same second, from the memo
      {1700000001000, "2023-11-14T22:13:21Z"},  // the next one
      {1700000000500, "2023-11-14T22:13:20Z"},  // and back
      {4102444799000, "2099-12-31T23:59:59Z"},
  };
  for (const auto& c : cases) EXPECT_EQ(rfc3339(c.unix_ms), c.want) << c.unix_ms;
}

TEST(PodStamps, UidsAreDistinctVersion4Uuids) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string u = new_uid();
    ASSERT_EQ(u.size(), 36u) << u;
    for (size_t at = 0; at < u.size(); ++at) {
      if (at == 8 || at == 13 || at == 18 || at == 23) {
        ASSERT_EQ(u[at], '-') << u;
      } else {
        ASSERT_TRUE(std::isxdigit(static_cast<unsigned char>(u[at])) &&
                    !std::isupper(static_cast<unsigned char>(u[at])))
            << u;
      }
    }
    EXPECT_EQ(u[14], '4') << u;                                          // version
    EXPECT_NE(std::string("89ab").find(u[19]), std::string::npos) << u;  // variant
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace uvsched
