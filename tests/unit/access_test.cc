#include "policy/access.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(Access, EachRoleReachesOnlyItsPaths) {
  struct Case {
    Role role;
    const char* name;
    const char* method;
    const char* path;
    bool ok;
  } cases[] = {
      {Role::kAdmin, "ops", "DELETE", "/api/v1/namespaces/default/pods/x", true},
      {Role::kAdmin, "ops", "POST", "/v1/agents/any/status", true},
      {Role::kReader, "r", "GET", "/api/v1/pods", true},
      {Role::kReader, "r", "GET", "/metrics", true},
      {Role::kReader, "r", "POST", "/api/v1/namespaces/default/pods", false},
      {Role::kReader, "r", "DELETE", "/finish/abc", false},
      {Role::kMl, "kubeml", "POST", "/train", true},
      {Role::kMl, "kubeml", "POST", "/job", true},
      {Role::kMl, "kubeml", "POST", "/infer", true},
      {Role::kMl, "kubeml", "DELETE", "/finish/ab12cd34", true},
      {Role::kMl, "kubeml", "DELETE", "/finish/", false},
      {Role::kMl, "kubeml", "DELETE", "/finish/a/b", false},
      {Role::kMl, "kubeml", "GET", "/api/v1/pods", false},
      {Role::kAgent, "edge-1", "POST", "/v1/agents/edge-1/subscribe", true},
      {Role::kAgent, "edge-1", "POST", "/v1/agents/edge-1/status", true},
      {Role::kAgent, "edge-1", "DELETE", "/v1/agents/edge-1/offers/o1", true},
      {Role::kAgent, "edge-1", "POST", "/v1/agents/edge-2/status", false},
      {Role::kAgent, "edge-1", "POST", "/v1/agents/edge-1", false},
      {Role::kAgent, "edge-1", "POST", "/v1/agents/edge-10/status", false},
      {Role::kAgent, "edge-1", "GET", "/v1/agents", false},
      {Role::kAgent, "edge-1", "GET", "/api/v1/pods", false},
      {Role::kAgent, "edge-1", "GET", "/health", true},
      {Role::kMl, "kubeml", "GET", "/readyz", true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(allowed(c.role, c.name, c.method, c.path), c.ok) << role_name(c.role) << " " << c.method << " " << c.path;
  }
}

TEST(Access, RolesParse) {
  EXPECT_EQ(parse_role("admin"), Role::kAdmin);
  EXPECT_EQ(parse_role("reader"), Role::kReader);
  EXPECT_FALSE(parse_role("root"));
  EXPECT_TRUE(is_open_path("/healthz"));
  EXPECT_FALSE(is_open_path("/metrics"));
}

}  // namespace
}  // namespace uvsched
