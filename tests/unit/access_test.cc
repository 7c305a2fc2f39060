#include "policy/access.h"

#include <absl/strings/ascii.h>
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

// The rules kubectl auth can-i --list prints say what allowed() does: a path
// rule's '*' is every path it begins, a resource rule is a verb on
// /api/v1/... or /apis/GROUP/VERSION/... (only admin and reader have any).
bool listed(const AccessRules& rules, std::string_view method, std::string_view path) {
  auto has = [](const std::vector<std::string>& list, std::string_view v) {
    for (const auto& s : list) {
      if (s == "*" || s == v) return true;
    }
    return false;
  };
  std::string verb = absl::AsciiStrToLower(std::string(method));
  for (const PathRule& r : rules.paths) {
    if (!has(r.verbs, verb)) continue;
    for (const std::string& p : r.paths) {
      if (p == path || (p.back() == '*' && path.size() >= p.size() && path.starts_with(p.substr(0, p.size() - 1))))
        return true;
    }
  }
  if (!path.starts_with("/api/") && !path.starts_with("/apis/")) return false;
  std::string resource_verb = method == "GET" ? "get" : method == "POST" ? "create" : "delete";
  for (const ResourceRule& r : rules.resources) {
    // (none of the cases is a review: only rules for any group and resource can match)
    if (has(r.verbs, resource_verb) && has(r.api_groups, "?") && has(r.resources, "?")) return true;
  }
  return false;
}

TEST(Access, TheListedRulesSayWhatAllowedDoes) {
  struct Case {
    Role role;
    const char* name;
    const char* method;
    const char* path;
  } cases[] = {
      {Role::kAdmin, "ops", "DELETE", "/api/v1/namespaces/default/pods/x"},
      {Role::kAdmin, "ops", "POST", "/v1/agents/any/status"},
      {Role::kReader, "r", "GET", "/api/v1/pods"},
      {Role::kReader, "r", "GET", "/metrics"},
      {Role::kReader, "r", "POST", "/api/v1/namespaces/default/pods"},
      {Role::kReader, "r", "DELETE", "/finish/abc"},
      {Role::kMl, "kubeml", "POST", "/train"},
      {Role::kMl, "kubeml", "DELETE", "/finish/ab12cd34"},
      {Role::kMl, "kubeml", "GET", "/api/v1/pods"},
      {Role::kMl, "kubeml", "GET", "/metrics"},
      {Role::kAgent, "edge-1", "POST", "/v1/agents/edge-1/status"},
      {Role::kAgent, "edge-1", "POST", "/v1/agents/edge-2/status"},
      {Role::kAgent, "edge-1", "POST", "/v1/agents/edge-10/status"},
      {Role::kAgent, "edge-1", "GET", "/api/v1/pods"},
      {Role::kAgent, "edge-1", "GET", "/health"},
      {Role::kReader, "r", "GET", "/ui/app.js"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(listed(rules_of(c.role, c.name), c.method, c.path), allowed(c.role, c.name, c.method, c.path))
        << role_name(c.role) << " " << c.method << " " << c.path;
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
