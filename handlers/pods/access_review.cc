#include "handlers/pods/access_review.h"

#include <absl/strings/ascii.h>

#include <string_view>

#include "handlers/pods/k8s_protobuf.h"
#include "handlers/pods/k8s_request.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/pod_validation.h"  // invalid_status_json

namespace uvsched {
namespace {

// The version a group is served at when a review names none.
std::string_view served_version(std::string_view group) { return group == "scheduling.x-k8s.io" ? "v1alpha1" : "v1"; }

struct VerbRequest {
  std::string method;
  bool item;  // on one object (its name in the path), or on the collection
};

// kubectl's verbs as the methods they are sent with (the API server's own
// mapping of requests to verbs, read backwards).
std::vector<VerbRequest> verb_requests(std::string_view verb, bool named) {
  if (verb == "get") return {{"GET", named}};
  if (verb == "list" || verb == "watch") return {{"GET", false}};
  if (verb == "create") return {{"POST", false}};
  if (verb == "update") return {{"PUT", true}};
  if (verb == "patch") return {{"PATCH", true}};
  if (verb == "delete") return {{"DELETE", true}};
  if (verb == "deletecollection") return {{"DELETE", false}};
  if (verb == "*") {
    return {{"GET", false},  {"GET", true},    {"POST", false},  {"PUT", true},
            {"PATCH", true}, {"DELETE", true}, {"DELETE", false}};
  }
  return {{absl::AsciiStrToUpper(std::string(verb)),
           named}};  // bind, escalate, impersonate, ...: no path of ours takes them
}

std::vector<std::string> path_methods(std::string_view verb) {
  if (verb == "*") return {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"};
  return {absl::AsciiStrToUpper(std::string(verb))};
}

JsonValue strings(const std::vector<std::string>& list) {
  JsonValue out = JsonValue::array();
  for (const auto& s : list) out.push(JsonValue::string(s));
  return out;
}

JsonValue review_object(std::string_view kind, std::string_view api_version) {
  JsonValue review = JsonValue::object();
  review.set("kind", JsonValue::string(std::string(kind)));
  review.set("apiVersion", JsonValue::string(std::string(api_version)));
  review.set("metadata", JsonValue::object());
  return review;
}

HttpResponse access_review(const JsonValue& spec, const Caller& caller) {
  const JsonValue* resource = spec.get("resourceAttributes");
  const JsonValue* path = spec.get("nonResourceAttributes");
  bool has_resource = resource != nullptr && resource->is_object();
  bool has_path = path != nullptr && path->is_object();
  if (has_resource == has_path) {
    std::string message = "exactly one of nonResourceAttributes or resourceAttributes must be specified";
    return k8s_object(
        422,
        invalid_status_json("SelfSubjectAccessReview", "",
                            {{"spec.resourceAttributes", "FieldValueInvalid", "Invalid value: \"null\": " + message}}));
  }
  std::vector<std::pair<std::string, std::string>> requests;
  if (has_resource) {
    requests = requests_for(*resource);
  } else {
    std::string p = path->str("path");
    if (p.empty() || p.front() != '/') {
      return k8s_object(422, invalid_status_json("SelfSubjectAccessReview", "",
                                                 {{"spec.nonResourceAttributes.path", "FieldValueInvalid",
                                                   "Invalid value: \"" + p + "\": must begin with '/'"}}));
    }
    for (std::string& m : path_methods(path->str("verb"))) requests.emplace_back(std::move(m), p);
  }
  JsonValue status = JsonValue::object();
  status.set("allowed", JsonValue::boolean(true));
  for (const auto& [method, p] : requests) {
    if (is_self_review(method, p) || allowed(caller.role, caller.name, method, p)) continue;
    status.set("allowed", JsonValue::boolean(false));
    status.set("reason",
               JsonValue::string(std::string(role_name(caller.role)) + (caller.name.empty() ? "" : " " + caller.name) +
                                 " may not " + method + " " + p));
    break;
  }
  JsonValue review = review_object("SelfSubjectAccessReview", "authorization.k8s.io/v1");
  review.set("spec", spec);
  review.set("status", std::move(status));
  return k8s_object(201, review.dump());
}

HttpResponse rules_review(const JsonValue& spec, const Caller& caller) {
  AccessRules rules = rules_of(caller.role, caller.name);
  JsonValue resource_rules = JsonValue::array(), path_rules = JsonValue::array();
  for (const ResourceRule& r : rules.resources) {
    JsonValue rule = JsonValue::object();
    rule.set("verbs", strings(r.verbs));
    rule.set("apiGroups", strings(r.api_groups));
    rule.set("resources", strings(r.resources));
    resource_rules.push(std::move(rule));
  }
  for (const PathRule& r : rules.paths) {
    JsonValue rule = JsonValue::object();
    rule.set("verbs", strings(r.verbs));
    rule.set("nonResourceURLs", strings(r.paths));
    path_rules.push(std::move(rule));
  }
  JsonValue status = JsonValue::object();
  status.set("resourceRules", std::move(resource_rules));
  status.set("nonResourceRules", std::move(path_rules));
  status.set("incomplete", JsonValue::boolean(false));
  JsonValue review = review_object("SelfSubjectRulesReview", "authorization.k8s.io/v1");
  review.set("spec", spec);
  review.set("status", std::move(status));
  return k8s_object(201, review.dump());
}

HttpResponse subject_review(std::string_view api_version, const Caller& caller) {
  JsonValue user = JsonValue::object();
  user.set("username", JsonValue::string(caller.name.empty() ? "anonymous" : caller.name));
  std::vector<std::string> groups = {"uvsched:" + std::string(role_name(caller.role))};
  if (!caller.name.empty()) groups.push_back("system:authenticated");
  user.set("groups", strings(groups));
  user.ensure({"extra"}).set("uvsched.io/credential", strings({caller.credential}));
  JsonValue review = review_object("SelfSubjectReview", api_version);
  review.ensure({"status"}).set("userInfo", std::move(user));
  return k8s_object(201, review.dump());
}

}  // namespace

std::vector<std::pair<std::string, std::string>> requests_for(const JsonValue& attributes) {
  std::string group = attributes.str("group"), version = attributes.str("version");
  std::string ns = attributes.str("namespace"), resource = attributes.str("resource");
  std::string name = attributes.str("name"), sub = attributes.str("subresource");
  std::string base = group.empty()
                         ? "/api/" + (version.empty() ? std::string("v1") : version)
                         : "/apis/" + group + "/" + (version.empty() ? std::string(served_version(group)) : version);
  if (!ns.empty()) base += "/namespaces/" + ns;
  base += "/" + (resource.empty() ? std::string("*") : resource);
  std::vector<std::pair<std::string, std::string>> out;
  for (VerbRequest& r : verb_requests(attributes.str("verb"), !name.empty())) {
    std::string path = base;
    if (r.item) path += "/" + (name.empty() ? std::string("{name}") : name);
    if (!sub.empty()) path += "/" + sub;
    out.emplace_back(std::move(r.method), std::move(path));
  }
  return out;
}

HttpResponse answer_self_review(const HttpRequest& request, const Caller& caller) {
  std::string_view path = request.path();
  std::string_view kind = path.ends_with("/selfsubjectaccessreviews")  ? "SelfSubjectAccessReview"
                          : path.ends_with("/selfsubjectrulesreviews") ? "SelfSubjectRulesReview"
                                                                       : "SelfSubjectReview";
  // client-go's typed clients send protobuf, and take JSON back.
  bool protobuf = sends_protobuf(request);
  if (!protobuf) {
    if (auto refused = refuse_media_type(request, /*protobuf_too=*/true)) return std::move(*refused);
  }
  std::string error;
  auto body = protobuf ? self_review_from_protobuf(request.body, &error) : JsonValue::parse(request.body, &error);
  if (!body || !body->is_object()) {
    return k8s_error(400, "BadRequest", body ? "the body must be a " + std::string(kind) : error);
  }
  if (std::string sent = body->str("kind"); !sent.empty() && sent != kind) {
    return k8s_error(400, "BadRequest",
                     "kind " + sent + " cannot be created at the " + std::string(kind) + " endpoint");
  }
  const JsonValue* spec = body->get("spec");
  JsonValue empty = JsonValue::object();
  if (spec == nullptr || !spec->is_object()) spec = &empty;
  if (kind == "SelfSubjectAccessReview") return access_review(*spec, caller);
  if (kind == "SelfSubjectRulesReview") return rules_review(*spec, caller);
  // /apis/authentication.k8s.io/<version>/selfsubjectreviews
  std::string_view version = path.substr(0, path.rfind('/'));
  version = version.substr(version.rfind('/') + 1);
  return subject_review("authentication.k8s.io/" + std::string(version), caller);
}

const std::vector<ReviewResource>& review_resources() {
  static const std::vector<ReviewResource> kReviews = {
      {"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview"},
      {"authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview"},
      {"authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview"},
  };
  return kReviews;
}

}  // namespace uvsched
