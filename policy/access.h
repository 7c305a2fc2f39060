// Who may call what (issue 7): a role per token, and the paths each role may
// reach. Pure: the request's method and path in, allowed or not out.
//   admin  - everything
//   agent  - only its own /v1/agents/{host}/..., where host is the token's name
//   ml     - KubeML's paths: /train, /job, /infer, /finish/{id}
//   reader - GETs (lists, watches, metrics)
// /health, /healthz, /readyz and the status page's files (/ui/...) are open to anyone.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uvsched {

enum class Role { kAdmin, kAgent, kMl, kReader };

std::optional<Role> parse_role(std::string_view s);
std::string_view role_name(Role r);

// Paths that need no token at all.
bool is_open_path(std::string_view path);

// A caller asking what it itself may do (kubectl auth can-i, auth whoami):
// any authenticated caller may, whatever its role, since the answer is only
// about its own credentials.
bool is_self_review(std::string_view method, std::string_view path);

bool allowed(Role role, std::string_view token_name, std::string_view method, std::string_view path);

// What `allowed` lets a role do, said as Kubernetes' rules say it (kubectl
// auth can-i --list): verbs on resources of API groups, and verbs on paths
// (a path ending in '*' stands for every path it begins). "*" is anything.
struct ResourceRule {
  std::vector<std::string> verbs, api_groups, resources;
};
struct PathRule {
  std::vector<std::string> verbs, paths;
};
struct AccessRules {
  std::vector<ResourceRule> resources;
  std::vector<PathRule> paths;
};
AccessRules rules_of(Role role, std::string_view token_name);

}  // namespace uvsched
