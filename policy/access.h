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

namespace uvsched {

enum class Role { kAdmin, kAgent, kMl, kReader };

std::optional<Role> parse_role(std::string_view s);
std::string_view role_name(Role r);

// Paths that need no token at all.
bool is_open_path(std::string_view path);

bool allowed(Role role, std::string_view token_name, std::string_view method, std::string_view path);

}  // namespace uvsched
