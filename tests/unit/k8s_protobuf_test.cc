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

// What kubectl 1.32's `auth can-i create pods` sent, byte for byte (captured
// from it with a listener that printed the body).
const char kCanICreatePods[] =
    "\x6b\x38\x73\x00\x0a\x32\x0a\x17\x61\x75\x74\x68\x6f\x72\x69\x7a\x61\x74\x69\x6f\x6e\x2e\x6b\x38"
    "\x73\x2e\x69\x6f\x2f\x76\x31\x12\x17\x53\x65\x6c\x66\x53\x75\x62\x6a\x65\x63\x74\x41\x63\x63\x65"
    "\x73\x73\x52\x65\x76\x69\x65\x77\x12\x3f\x0a\x10\x0a\x00\x12\x00\x1a\x00\x22\x00\x2a\x00\x32\x00"
    "\x38\x00\x42\x00\x12\x21\x0a\x1f\x0a\x07\x64\x65\x66\x61\x75\x6c\x74\x12\x06\x63\x72\x65\x61\x74"
    "\x65\x1a\x00\x22\x00\x2a\x04\x70\x6f\x64\x73\x32\x00\x3a\x00\x1a\x08\x08\x00\x12\x00\x1a\x00\x20"
    "\x00\x1a\x00\x22\x00";

TEST(K8sProtobuf, KubectlsSelfSubjectAccessReviewBecomesItsJson) {
  std::string error;
  auto review = self_review_from_protobuf(std::string(kCanICreatePods, sizeof kCanICreatePods - 1), &error);
  ASSERT_TRUE(review) << error;
  EXPECT_EQ(review->dump(),
            R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",)"
            R"("spec":{"resourceAttributes":{"namespace":"default","verb":"create","resource":"pods"}}})");
}

TEST(K8sProtobuf, RulesAndSubjectReviewsAndWhatIsNoReview) {
  std::string error;
  std::string rules = envelope("SelfSubjectRulesReview", field(1, "") + field(2, field(1, "team-a")));
  auto review = self_review_from_protobuf(rules, &error);
  ASSERT_TRUE(review) << error;
  EXPECT_EQ(review->dump(), R"({"apiVersion":"v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"team-a"}})");
  review = self_review_from_protobuf(envelope("SelfSubjectReview", field(1, "")), &error);
  ASSERT_TRUE(review) << error;
  EXPECT_EQ(review->str("kind"), "SelfSubjectReview");
  EXPECT_FALSE(self_review_from_protobuf(envelope("Namespace", ""), &error));
  EXPECT_NE(error.find("only for a self review"), std::string::npos) << error;
  std::string cut(kCanICreatePods, sizeof kCanICreatePods - 1);
  EXPECT_FALSE(self_review_from_protobuf(cut.substr(0, 70), &error));
}

// The bytes kubectl 1.32 sent for `kubectl create pdb web2 --selector='app=web,tier in (a,b)'
// --min-available=50%` (captured from it against uvsched), and for `--max-unavailable=1`.
TEST(K8sProtobuf, KubectlsPodDisruptionBudgetBecomesItsJson) {
  const std::string percent(
      "\x6b\x38\x73\x00\x0a\x20\x0a\x09\x70\x6f\x6c\x69\x63\x79\x2f\x76\x31\x12\x13\x50\x6f\x64\x44\x69\x73\x72\x75\x70"
      "\x74\x69\x6f\x6e\x42\x75\x64\x67\x65\x74\x12\x4f\x0a\x14\x0a\x04\x77\x65\x62\x32\x12\x00\x1a\x00\x22\x00\x2a\x00"
      "\x32\x00\x38\x00\x42\x00\x12\x2b\x0a\x09\x08\x01\x10\x00\x1a\x03\x35\x30\x25\x12\x1e\x0a\x0a\x0a\x03\x61\x70\x70"
      "\x12\x03\x77\x65\x62\x12\x10\x0a\x04\x74\x69\x65\x72\x12\x02\x49\x6e\x1a\x01\x61\x1a\x01\x62\x1a\x0a\x08\x00\x18"
      "\x00\x20\x00\x28\x00\x30\x00\x1a\x00\x22\x00",
      123);
  std::string error;
  auto pdb = pod_disruption_budget_from_protobuf(percent, &error);
  ASSERT_TRUE(pdb) << error;
  EXPECT_EQ(pdb->dump(), R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web2"},)"
                         R"("spec":{"minAvailable":"50%","selector":{"matchLabels":{"app":"web"},)"
                         R"("matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]}]}}})");
  // maxUnavailable 1: an int (type 0, intVal 1), with the empty strVal kubectl sends.
  std::string spec = field(2, field(1, field(1, "app") + field(2, "web"))) +
                     field(3, std::string("\x08\x00\x10\x01", 4) + field(3, ""));
  std::string type_meta = field(1, "policy/v1") + field(2, "PodDisruptionBudget");
  std::string body =
      std::string("k8s\0", 4) + field(1, type_meta) + field(2, field(1, field(1, "web3")) + field(2, spec));
  pdb = pod_disruption_budget_from_protobuf(body, &error);
  ASSERT_TRUE(pdb) << error;
  EXPECT_EQ(pdb->dump(), R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web3"},)"
                         R"("spec":{"selector":{"matchLabels":{"app":"web"}},"maxUnavailable":1}})");
  EXPECT_FALSE(pod_disruption_budget_from_protobuf(envelope("Namespace", ""), &error));
  EXPECT_NE(error.find("only for a policy/v1 PodDisruptionBudget"), std::string::npos) << error;
  EXPECT_FALSE(pod_disruption_budget_from_protobuf(percent.substr(0, 60), &error)) << "cut short";
}

}  // namespace
}  // namespace uvsched
