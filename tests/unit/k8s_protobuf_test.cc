// Namespaces as kubectl's typed client sends them: the k8s\0 envelope, a
// runtime.Unknown, and the Namespace's own protobuf.
#include "handlers/pods/k8s_protobuf.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

// A length-delimited field (lengths under 128 here).
std::string field(int number, const std::string& value) {
  std::string out;
  out += static_cast<char>((number << 3) | 2);
  out += static_cast<char>(value.size());
  return out + value;
}

std::string envelope(const std::string& kind, const std::string& raw) {
  std::string type_meta = field(1, "v1") + field(2, kind);
  return std::string("k8s\0", 4) + field(1, type_meta) + field(2, raw) + field(3, "") + field(4, "");
}

TEST(K8sProtobuf, ANamespaceBecomesItsJson) {
  std::string meta = field(1, "team-a") + field(2, "") + field(11, field(1, "tier") + field(2, "gold")) +
                     field(12, field(1, "note") + field(2, "hi")) + field(14, "f1");
  meta += std::string("\x38\x05", 2);  // generation = 5: a varint, skipped
  std::string raw = field(1, meta) + field(2, field(1, "kubernetes")) + field(3, field(1, "Active"));
  std::string error;
  auto ns = namespace_from_protobuf(envelope("Namespace", raw), &error);
  ASSERT_TRUE(ns) << error;
  EXPECT_EQ(ns->dump(), R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a","labels":{"tier":"gold"},)"
                        R"("annotations":{"note":"hi"},"finalizers":["f1"]},"spec":{"finalizers":["kubernetes"]}})");
}

TEST(K8sProtobuf, WhatIsNotANamespaceIsRefused) {
  std::string error;
  EXPECT_FALSE(namespace_from_protobuf("{\"kind\":\"Namespace\"}", &error));
  EXPECT_NE(error.find("no k8s magic"), std::string::npos);
  EXPECT_FALSE(namespace_from_protobuf(envelope("Pod", ""), &error));
  EXPECT_NE(error.find("only for a v1 Namespace"), std::string::npos) << error;
  std::string cut = envelope("Namespace", field(1, field(1, "team-a")));
  EXPECT_FALSE(namespace_from_protobuf(cut.substr(0, cut.size() - 3), &error));
  EXPECT_FALSE(namespace_from_protobuf(std::string("k8s\0\x0f", 5), &error));  // a wire type that does not exist
}

}  // namespace
}  // namespace uvsched
