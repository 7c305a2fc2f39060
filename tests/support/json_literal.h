// A JSON value from a test's literal text; a literal that does not parse
// fails the test that wrote it.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "handlers/json_value.h"

namespace uvsched::test {

inline JsonValue json(const std::string& text) {
  std::string error;
  auto v = JsonValue::parse(text, &error);
  EXPECT_TRUE(v) << error << " in " << text;
  return v ? std::move(*v) : JsonValue();
}

}  // namespace uvsched::test
