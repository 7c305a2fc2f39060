// kubectl auth can-i, auth can-i --list and auth whoami: the
// SelfSubjectAccessReview, SelfSubjectRulesReview and SelfSubjectReview a
// caller posts to learn what its own credentials may do, answered by
// policy/access's rules, the same that judge its requests. A review is about
// the caller only, so every authenticated caller may post one (the auth gate
// answers them, knowing who asks).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "handlers/json_value.h"
#include "policy/access.h"
#include "reactor/http_message.h"

namespace uvsched {

struct Caller {
  std::string name;  // the token's name, or the client certificate's common name
  Role role = Role::kAdmin;
  std::string credential;  // what it showed: "token", "client certificate", or why nothing was needed
};

// The answer to a POST to one of policy/access's is_self_review paths.
HttpResponse answer_self_review(const HttpRequest& request, const Caller& caller);

// The requests to uvsched's API a review's spec.resourceAttributes stands
// for, as (method, path): kubectl's verbs on a resource of an API group, in
// a namespace or not, by name or not. "*" for the verb is every one of them.
std::vector<std::pair<std::string, std::string>> requests_for(const JsonValue& resource_attributes);

// The reviews as API discovery lists them (`kubectl api-resources`): the
// group and version kubectl posts them to first, the resource and its kind.
// Each takes only create.
struct ReviewResource {
  std::string_view group;
  std::string_view version;
  std::string_view resource;
  std::string_view kind;
  std::string group_version() const { return std::string(group) + "/" + std::string(version); }
};
const std::vector<ReviewResource>& review_resources();

}  // namespace uvsched
