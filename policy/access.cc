#include "policy/access.h"

namespace uvsched {

std::optional<Role> parse_role(std::string_view s) {
  if (s == "admin") return Role::kAdmin;
  if (s == "agent") return Role::kAgent;
  if (s == "ml") return Role::kMl;
  if (s == "reader") return Role::kReader;
  return std::nullopt;
}

std::string_view role_name(Role r) {
  switch (r) {
    case Role::kAdmin:
      return "admin";
    case Role::kAgent:
      return "agent";
    case Role::kMl:
      return "ml";
    case Role::kReader:
      return "reader";
  }
  return "?";
}

// The status page's files too: they hold no data (every figure is fetched
// with the operator's token), and a browser cannot send a token with the
// request that opens a page.
bool is_open_path(std::string_view path) {
  return path == "/health" || path == "/healthz" || path == "/readyz" || path == "/ui" || path.substr(0, 4) == "/ui/";
}

bool is_self_review(std::string_view method, std::string_view path) {
  return method == "POST" && (path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" ||
                              path == "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews" ||
                              path == "/apis/authentication.k8s.io/v1/selfsubjectreviews" ||
                              path == "/apis/authentication.k8s.io/v1beta1/selfsubjectreviews" ||
                              path == "/apis/authentication.k8s.io/v1alpha1/selfsubjectreviews");
}

bool allowed(Role role, std::string_view name, std::string_view method, std::string_view path) {
  if (is_open_path(path)) return true;
  switch (role) {
    case Role::kAdmin:
      return true;
    case Role::kReader:
      return method == "GET" || method == "HEAD";
    case Role::kMl:
      return path == "/train" || path == "/job" || path == "/infer" ||
             (path.substr(0, 8) == "/finish/" && path.size() > 8 && path.find('/', 8) == std::string_view::npos);
    case Role::kAgent: {
      // Exactly /v1/agents/<its own name>/<something>.
      constexpr std::string_view kPrefix = "/v1/agents/";
      if (path.substr(0, kPrefix.size()) != kPrefix) return false;
      std::string_view rest = path.substr(kPrefix.size());
      size_t slash = rest.find('/');
      return slash != std::string_view::npos && rest.substr(0, slash) == name && slash + 1 < rest.size();
    }
  }
  return false;
}

AccessRules rules_of(Role role, std::string_view name) {
  AccessRules rules;
  rules.resources.push_back(
      {{"create"}, {"authorization.k8s.io"}, {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}});
  rules.resources.push_back({{"create"}, {"authentication.k8s.io"}, {"selfsubjectreviews"}});
  switch (role) {
    case Role::kAdmin:
      rules.resources.push_back({{"*"}, {"*"}, {"*"}});
      rules.paths.push_back({{"*"}, {"*"}});
      break;
    case Role::kReader:
      rules.resources.push_back({{"get", "list", "watch"}, {"*"}, {"*"}});
      rules.paths.push_back({{"get", "head"}, {"*"}});
      break;
    case Role::kMl:
      rules.paths.push_back({{"*"}, {"/train", "/job", "/infer", "/finish/*"}});
      break;
    case Role::kAgent:
      rules.paths.push_back({{"*"}, {"/v1/agents/" + std::string(name) + "/*"}});
      break;
  }
  rules.paths.push_back({{"*"}, {"/health", "/healthz", "/readyz", "/ui", "/ui/*"}});
  return rules;
}

}  // namespace uvsched
