// kubectl auth can-i / whoami answered without sockets: the requests a
// review stands for, and the answers for each kind of caller.
#include "handlers/pods/access_review.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/json_literal.h"

namespace uvsched {
namespace {

using test::json;

// Discovery lists only reviews the auth gate answers, at the path it answers.
TEST(AccessReview, TheReviewsDiscoveryListsAreTheOnesAnswered) {
  ASSERT_EQ(review_resources().size(), 3u);
  for (const ReviewResource& r : review_resources()) {
    std::string path = "/apis/" + std::string(r.group) + "/" + std::string(r.version) + "/" + std::string(r.resource);
    EXPECT_TRUE(is_self_review("POST", path)) << path;
  }
}

TEST(AccessReview, AResourceVerbIsTheRequestsItStandsFor) {
  struct Case {
    const char* attributes;
    std::vector<std::pair<std::string, std::string>> requests;
  } cases[] = {
      {R"({"verb":"create","resource":"pods","namespace":"default"})", {{"POST", "/api/v1/namespaces/default/pods"}}},
      {R"({"verb":"get","resource":"pods","namespace":"a","name":"web","subresource":"status"})",
       {{"GET", "/api/v1/namespaces/a/pods/web/status"}}},
      {R"({"verb":"get","resource":"pods","namespace":"a"})", {{"GET", "/api/v1/namespaces/a/pods"}}},
      {R"({"verb":"watch","resource":"nodes"})", {{"GET", "/api/v1/nodes"}}},
      {R"({"verb":"delete","resource":"namespaces","name":"team"})", {{"DELETE", "/api/v1/namespaces/team"}}},
      {R"({"verb":"deletecollection","resource":"pods","namespace":"a"})", {{"DELETE", "/api/v1/namespaces/a/pods"}}},
      {R"({"verb":"patch","group":"scheduling.x-k8s.io","resource":"podgroups","namespace":"a"})",
       {{"PATCH", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/a/podgroups/{name}"}}},
      {R"({"verb":"update","group":"scheduling.k8s.io","resource":"priorityclasses","name":"high"})",
       {{"PUT", "/apis/scheduling.k8s.io/v1/priorityclasses/high"}}},
      {R"({"verb":"impersonate","resource":"users","name":"x"})", {{"IMPERSONATE", "/api/v1/users/x"}}},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(requests_for(json(c.attributes)), c.requests) << c.attributes;
  }
  EXPECT_EQ(requests_for(json(R"({"verb":"*","resource":"pods","namespace":"a"})")).size(), 7u);
}

HttpRequest review(const std::string& path, const std::string& body) {
  HttpRequest r;
  r.method = "POST";
  r.target = path;
  r.body = body;
  r.headers.push_back({"Content-Type", "application/json"});
  return r;
}

constexpr const char* kAccessReviews = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

TEST(AccessReview, EachCallerIsAnsweredByItsRole) {
  struct Case {
    Caller caller;
    const char* spec;
    bool allowed;
    const char* reason;
  } cases[] = {
      {{"ops", Role::kAdmin, "token"}, R"({"resourceAttributes":{"verb":"delete","resource":"pods"}})", true, ""},
      {{"viewer", Role::kReader, "token"}, R"({"resourceAttributes":{"verb":"list","resource":"pods"}})", true, ""},
      {{"viewer", Role::kReader, "token"},
       R"({"resourceAttributes":{"verb":"create","resource":"pods","namespace":"default"}})",
       false,
       "reader viewer may not POST /api/v1/namespaces/default/pods"},
      {{"viewer", Role::kReader, "token"}, R"({"nonResourceAttributes":{"verb":"get","path":"/metrics"}})", true, ""},
      {{"viewer", Role::kReader, "token"},
       R"({"nonResourceAttributes":{"verb":"*","path":"/metrics"}})",
       false,
       "reader viewer may not POST /metrics"},
      {{"edge-1", Role::kAgent, "client certificate"},
       R"({"nonResourceAttributes":{"verb":"post","path":"/v1/agents/edge-1/status"}})",
       true,
       ""},
      {{"edge-1", Role::kAgent, "client certificate"},
       R"({"nonResourceAttributes":{"verb":"post","path":"/v1/agents/edge-2/status"}})",
       false,
       "agent edge-1 may not POST /v1/agents/edge-2/status"},
      {{"kubeml", Role::kMl, "token"}, R"({"nonResourceAttributes":{"verb":"delete","path":"/finish/j1"}})", true, ""},
      // Asking is always allowed: the answer is about the caller alone.
      {{"kubeml", Role::kMl, "token"},
       R"({"resourceAttributes":{"verb":"create","group":"authorization.k8s.io","resource":"selfsubjectaccessreviews"}})",
       true,
       ""},
  };
  for (const auto& c : cases) {
    HttpResponse r = answer_self_review(review(kAccessReviews, std::string(R"({"spec":)") + c.spec + "}"), c.caller);
    ASSERT_EQ(r.status, 201) << c.spec << " " << r.body;
    JsonValue body = json(r.body);
    EXPECT_EQ(body.str("kind"), "SelfSubjectAccessReview");
    EXPECT_EQ(body.find({"status", "allowed"})->dump(), c.allowed ? "true" : "false") << c.spec;
    EXPECT_EQ(body.get("status")->str("reason"), c.reason) << c.spec;
  }
}

TEST(AccessReview, WhoamiAndTheRulesOfTheCaller) {
  Caller agent{"edge-1", Role::kAgent, "client certificate"};
  HttpResponse r = answer_self_review(review("/apis/authentication.k8s.io/v1beta1/selfsubjectreviews", "{}"), agent);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body, R"({"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1beta1","metadata":{},)"
                    R"("status":{"userInfo":{"username":"edge-1","groups":["uvsched:agent","system:authenticated"],)"
                    R"("extra":{"uvsched.io/credential":["client certificate"]}}}})");
  r = answer_self_review(
      review("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", R"({"spec":{"namespace":"default"}})"), agent);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_NE(r.body.find(R"({"verbs":["*"],"nonResourceURLs":["/v1/agents/edge-1/*"]})"), std::string::npos) << r.body;
  Caller nobody{"", Role::kAdmin, "none: without a token file every caller is admin"};
  r = answer_self_review(review("/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}"), nobody);
  EXPECT_NE(r.body.find(R"("username":"anonymous","groups":["uvsched:admin"])"), std::string::npos) << r.body;
}

TEST(AccessReview, WhatIsNoReviewIsRefused) {
  Caller reader{"viewer", Role::kReader, "token"};
  struct Case {
    const char* body;
    int status;
  } cases[] = {
      {"{not json", 400},
      {R"({"kind":"Pod"})", 400},
      {R"({"spec":{}})", 422},
      {R"({"spec":{"resourceAttributes":{},"nonResourceAttributes":{"path":"/x"}}})", 422},
      {R"({"spec":{"nonResourceAttributes":{"path":"metrics","verb":"get"}}})", 422},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(answer_self_review(review(kAccessReviews, c.body), reader).status, c.status) << c.body;
  }
  HttpRequest yaml = review(kAccessReviews, "spec: {}");
  yaml.headers[0].value = "application/yaml";
  EXPECT_EQ(answer_self_review(yaml, reader).status, 415);
}

}  // namespace
}  // namespace uvsched
