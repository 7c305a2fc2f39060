#include "handlers/router.h"

#include <gtest/gtest.h>

#include "handlers/json_response.h"

namespace uvsched {
namespace {

// Routes a request through a detached exchange and returns the serialized reply.
std::string route(Router& router, std::string_view method, std::string target) {
  HttpRequest req;
  req.method = method;
  req.target = std::move(target);
  auto ex = std::make_shared<detail::Exchange>();
  ex->head = method == "HEAD";  // as the connection marks it
  router.handle(req, Responder(ex));
  return ex->out;
}

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router.add("GET", "/health", [](RequestContext& ctx) { ctx.reply(text_response(200, "ok")); });
    router.add("POST", "/train", [](RequestContext& ctx) { ctx.reply(text_response(200, "train")); });
    router.add("DELETE", "/finish/{id}",
               [](RequestContext& ctx) { ctx.reply(text_response(200, "fin " + ctx.param("id"))); });
    router.add("GET", "/v1/agents/{host}/offers/{id}",
               [](RequestContext& ctx) { ctx.reply(text_response(200, ctx.param("host") + "|" + ctx.param("id"))); });
    router.add("DELETE", "/v1/agents/{host}/offers/{id}",
               [](RequestContext& ctx) { ctx.reply(text_response(200, "rescind")); });
    router.add("GET", "/v1/agents/special/offers/fixed",
               [](RequestContext& ctx) { ctx.reply(text_response(200, "literal")); });
    router.add("GET", "/boom", [](RequestContext&) -> void { throw std::runtime_error("kaboom"); });
  }
  Router router;
};

TEST_F(RouterTest, MatchesLiteralAndParametricRoutes) {
  struct Case {
    std::string method, target, status_line;
    const char* body;  // nullptr: an error's body, not checked here
  } cases[] = {
      {"GET", "/health", "HTTP/1.1 200 OK", "ok"},
      {"GET", "/health?x=1", "HTTP/1.1 200 OK", "ok"},
      {"HEAD", "/health", "HTTP/1.1 200 OK", ""},  // the GET's answer without its body
      {"DELETE", "/finish/ab12cd34", "HTTP/1.1 200 OK", "fin ab12cd34"},
      {"DELETE", "/finish/a%20b", "HTTP/1.1 200 OK", "fin a b"},
      {"GET", "/v1/agents/node-1/offers/o-7", "HTTP/1.1 200 OK", "node-1|o-7"},
      {"GET", "/v1/agents/special/offers/fixed", "HTTP/1.1 200 OK", "literal"},
      {"GET", "/finish", "HTTP/1.1 404 Not Found", nullptr},
      {"GET", "/finish/a/b", "HTTP/1.1 404 Not Found", nullptr},
      {"GET", "/finish/%zz", "HTTP/1.1 404 Not Found", nullptr},
      {"POST", "/health", "HTTP/1.1 405 Method Not Allowed", nullptr},
      {"GET", "/boom", "HTTP/1.1 500 Internal Server Error", nullptr},
  };
  for (const auto& c : cases) {
    std::string out = route(router, c.method, c.target);
    EXPECT_EQ(out.substr(0, out.find("\r\n")), c.status_line) << c.method << " " << c.target;
    if (c.body != nullptr) {
      EXPECT_EQ(out.substr(out.find("\r\n\r\n") + 4), c.body) << c.method << " " << c.target;
    }
  }
}

// HEAD is the GET's head: its Content-Length (what a GET would send), no body.
TEST_F(RouterTest, HeadAnswersTheGetsHeadWithoutItsBody) {
  std::string get = route(router, "GET", "/health"), head = route(router, "HEAD", "/health");
  EXPECT_NE(get.find("Content-Length: 2\r\n"), std::string::npos) << get;
  EXPECT_NE(head.find("Content-Length: 2\r\n"), std::string::npos) << head;
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "") << head;
  EXPECT_EQ(head.substr(0, head.find("\r\n\r\n")), get.substr(0, get.find("\r\n\r\n")));
}

TEST_F(RouterTest, WrongMethodListsAllowedMethods) {
  std::string out = route(router, "PUT", "/finish/x");
  EXPECT_NE(out.find("Allow: DELETE\r\n"), std::string::npos) << out;
  out = route(router, "PATCH", "/v1/agents/h/offers/1");
  EXPECT_NE(out.find("Allow: GET, DELETE\r\n"), std::string::npos) << out;
}

// Routes are looked for among those with as many segments as the path; of
// those, the first added that matches with its method wins.
TEST_F(RouterTest, TheFirstMatchingRouteOfThePathsDepthWins) {
  router.add("GET", "/v1/{kind}/{name}/offers/{id}",
             [](RequestContext& ctx) { ctx.reply(text_response(200, "generic")); });
  router.add("POST", "/v1/{kind}/{name}/offers/{id}",
             [](RequestContext& ctx) { ctx.reply(text_response(200, "post " + ctx.param("kind"))); });
  router.add("GET", "/v1/{kind}",
             [](RequestContext& ctx) { ctx.reply(text_response(200, "short " + ctx.param("kind"))); });
  auto body = [&](std::string_view method, std::string target) {
    std::string out = route(router, method, std::move(target));
    return out.substr(out.find("\r\n\r\n") + 4);
  };
  EXPECT_EQ(body("GET", "/v1/agents/n/offers/1"), "n|1");           // added first
  EXPECT_EQ(body("GET", "/v1/pools/n/offers/1"), "generic");        // only the later one matches
  EXPECT_EQ(body("POST", "/v1/agents/n/offers/1"), "post agents");  // the first with its method
  EXPECT_EQ(body("GET", "/v1/agents"), "short agents");
  std::string out = route(router, "PUT", "/v1/agents/n/offers/1");
  EXPECT_NE(out.find("Allow: GET, DELETE, POST\r\n"), std::string::npos) << out;
}

TEST_F(RouterTest, NotFoundFallbackByPrefix) {
  router.set_not_found("/api/", [](RequestContext& ctx) { ctx.reply(json_response(404, R"({"kind":"Status"})")); });
  EXPECT_NE(route(router, "GET", "/api/v1/nothing").find(R"({"kind":"Status"})"), std::string::npos);
  EXPECT_NE(route(router, "GET", "/other").find(R"({"error":)"), std::string::npos);
}

// The server's refusals (a body too large, a malformed head) are worded by
// the prefix's formatter, elsewhere as {"error": ...}.
TEST_F(RouterTest, RefusalsAreWordedByPrefix) {
  router.set_refusal("/api/", [](int status, std::string_view message) {
    return json_response(status, R"({"kind":"Status","message":")" + std::string(message) + R"("})");
  });
  HttpRequest api;
  api.target = "/api/v1/pods?limit=1";
  HttpResponse a = router.refusal(413, "too large", api);
  EXPECT_EQ(a.status, 413);
  EXPECT_EQ(a.body, R"({"kind":"Status","message":"too large"})");
  HttpRequest other;
  other.target = "/health";
  HttpResponse o = router.refusal(400, "bad \"head\"", other);
  EXPECT_EQ(o.status, 400);
  EXPECT_EQ(o.body, R"({"error":"bad \"head\""})");
  EXPECT_EQ(router.refusal(408, "slow", HttpRequest{}).body, R"({"error":"slow"})");  // nothing read yet
}

}  // namespace
}  // namespace uvsched
