#include "policy/quantity.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(Quantity, ParsesExactlyToMilliUnits) {
  struct Case {
    const char* text;
    std::optional<int64_t> milli;
  } cases[] = {
      {"1", 1000},
      {"500m", 500},
      {"0.5", 500},
      {"0.25", 250},
      {"1.5", 1500},
      {"2000m", 2000},
      {"0.0001", 1},  // rounded up to a milli
      {"1k", 1'000'000},
      {"128Mi", 128LL * 1024 * 1024 * 1000},
      {"1Gi", 1024LL * 1024 * 1024 * 1000},
      {"1.5Gi", 1536LL * 1024 * 1024 * 1000},
      {"1G", 1'000'000'000'000LL},
      {"64M", 64'000'000'000LL},
      {"1e3", 1'000'000},
      {"12E-1", 1200},                      // an exponent: "E" followed by a signed number
      {"9P", 9'000'000'000'000'000'000LL},  // fits
      {"1E", std::nullopt},                 // 10^21 milli-units do not
      {"", std::nullopt},
      {"-1", std::nullopt},
      {"abc", std::nullopt},
      {"1Xi", std::nullopt},
      {"10Ei", std::nullopt},  // does not fit
      {"1..5", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_quantity_milli(c.text), c.milli) << c.text;
}

TEST(Quantity, FormatsAsTheApiServerWrites) {
  EXPECT_EQ(format_quantity_milli(4000), "4");
  EXPECT_EQ(format_quantity_milli(0), "0");
  EXPECT_EQ(format_quantity_milli(2500), "2500m");
  EXPECT_EQ(format_quantity_milli(1), "1m");
  for (int64_t milli : {int64_t{1}, int64_t{999}, int64_t{1000}, int64_t{123'456'789}}) {
    EXPECT_EQ(parse_quantity_milli(format_quantity_milli(milli)), milli) << milli;
  }
}

}  // namespace
}  // namespace uvsched
