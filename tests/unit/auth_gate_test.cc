// AuthGate on a listener that grants a role without a token (--ml-listen:
// KubeML's components send none): what each request gets, as a table. The
// token and certificate paths are exercised against the real daemon in
// it_auth.
#include "handlers/auth_gate.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "handlers/json_response.h"
#include "handlers/router.h"
#include "tests/support/recording_channel.h"

namespace uvsched {
namespace {

using test::status_of;

constexpr const char* kServes = "this listener serves only KubeML's calls";

class GrantedGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* path : {"/train", "/job", "/infer"}) {
      router_.add("POST", path, [this](RequestContext& ctx) { reached(ctx); });
    }
    router_.add("DELETE", "/finish/{id}", [this](RequestContext& ctx) { reached(ctx); });
    for (const char* path : {"/health", "/api/v1/pods", "/metrics", "/v1/jobs"}) {
      router_.add("GET", path, [this](RequestContext& ctx) { reached(ctx); });
    }
    router_.add("POST", "/v1/agents/{host}/subscribe", [this](RequestContext& ctx) { reached(ctx); });
    gate_.grant_without_token(Role::kMl, kServes);
  }
  void reached(RequestContext& ctx) {
    reached_.push_back(std::string(ctx.request.method) + " " + std::string(ctx.request.path()));
    ctx.reply(text_response(200, ""));
  }
  std::string send(const std::string& method, const std::string& target, const std::string& authorization = "") {
    HttpRequest req;
    req.method = method;
    req.target = target;
    if (!authorization.empty()) req.headers.push_back({"Authorization", authorization});
    auto ex = std::make_shared<detail::Exchange>();
    gate_.handle(req, Responder(ex));
    return ex->out;
  }

  Router router_;
  AuthGate gate_{router_};
  std::vector<std::string> reached_;
};

TEST_F(GrantedGateTest, KubemlsCallsAndTheProbesPassWithoutATokenAndNothingElseDoes) {
  struct Case {
    const char* method;
    const char* target;
    const char* authorization;
    int status;
  } cases[] = {
      {"POST", "/train", "", 200},
      {"POST", "/job", "", 200},
      {"POST", "/infer", "", 200},
      {"DELETE", "/finish/1a2b3c4d", "", 200},
      {"GET", "/health", "", 200},
      // Credentials are not looked at here: a token, good or not, changes nothing.
      {"POST", "/job", "Bearer not-a-token-this-gate-knows", 200},
      {"GET", "/api/v1/pods", "Bearer not-a-token-this-gate-knows", 403},
      {"GET", "/api/v1/pods", "", 403},
      {"GET", "/metrics", "", 403},
      {"GET", "/v1/jobs", "", 403},
      {"POST", "/v1/agents/edge-1/subscribe", "", 403},
  };
  for (const auto& c : cases) {
    reached_.clear();
    std::string out = send(c.method, c.target, c.authorization);
    EXPECT_EQ(status_of(out), c.status) << c.method << " " << c.target << ": " << out;
    EXPECT_EQ(reached_.size(), c.status == 200 ? 1u : 0u) << c.method << " " << c.target;
    if (c.status == 403) {
      EXPECT_NE(out.find(kServes), std::string::npos) << out;
      EXPECT_NE(out.find(std::string("not ") + c.method + " " + c.target), std::string::npos) << out;
    }
  }
}

// What the gate says may be served past --max-connections: the paths it is
// told of, and only when the request passes; nothing without being told.
TEST_F(GrantedGateTest, OnlyTheToldPathsThatPassAreServedPastTheConnectionLimit) {
  auto serve_over_limit = [this](const std::string& method, const std::string& target) {
    HttpRequest head;
    head.method = method;
    head.target = target;
    HeadCheck check = gate_.check_head(head);
    return !check.refusal && check.serve_over_limit;
  };
  EXPECT_FALSE(serve_over_limit("POST", "/job"));
  gate_.serve_over_connection_limit([](std::string_view path) { return path == "/job" || path == "/api/v1/pods"; });
  EXPECT_TRUE(serve_over_limit("POST", "/job"));
  EXPECT_FALSE(serve_over_limit("POST", "/train"));
  EXPECT_FALSE(serve_over_limit("GET", "/api/v1/pods")) << "refused (403) here: nothing to serve";
}

}  // namespace
}  // namespace uvsched
