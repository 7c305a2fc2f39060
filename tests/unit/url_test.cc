#include "reactor/url.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(Url, ParsesHttpAndHttpsUrls) {
  struct Case {
    std::string in;
    bool ok;
    std::string host;
    uint16_t port;
    std::string target;
  } cases[] = {
      {"http://127.0.0.1:10300", true, "127.0.0.1", 10300, "/"},
      {"http://127.0.0.1:10300/update/ab12", true, "127.0.0.1", 10300, "/update/ab12"},
      {"http://localhost/metrics?x=1", true, "localhost", 80, "/metrics?x=1"},
      {"http://[::1]:2379/v3/kv/range", true, "::1", 2379, "/v3/kv/range"},
      {"http://[::1]/", true, "::1", 80, "/"},
      {"http://host:8080?q", true, "host", 8080, "/?q"},
      {"https://secure:8443/x", true, "secure", 8443, "/x"},
      {"https://secure", true, "secure", 443, "/"},
      {"https://", false, "", 0, ""},
      {"httpx://h/", false, "", 0, ""},
      {"http://", false, "", 0, ""},
      {"http://h:99999/", false, "", 0, ""},
      {"http://h:/", false, "", 0, ""},
      {"ftp://x/", false, "", 0, ""},
      // Found by the fuzzer: what follows a bracketed host is a port or nothing,
      // and the host inside is an IPv6 literal.
      {"http://[::1]1.5Gi/:2379/v3", false, "", 0, ""},
      {"http://[\x8d::1]:2379/", false, "", 0, ""},
      {"http://[::1]:/", false, "", 0, ""},
      {"http://[::1/", false, "", 0, ""},
      {"http://a:b:c/", false, "", 0, ""},
      {"http://us er@host/", false, "", 0, ""},
  };
  for (const auto& c : cases) {
    auto u = parse_url(c.in);
    ASSERT_EQ(u.has_value(), c.ok) << c.in;
    if (!c.ok) continue;
    EXPECT_EQ(u->host, c.host) << c.in;
    EXPECT_EQ(u->port, c.port) << c.in;
    EXPECT_EQ(u->target, c.target) << c.in;
    EXPECT_EQ(u->base(), c.in.substr(0, c.in.find(':')) + "://" + u->origin()) << c.in;
  }
}

TEST(Url, AnAbsoluteFormTargetIsServedAsItsPath) {
  struct Case {
    const char* target;
    const char* served;
  } cases[] = {
      {"/health", "/health"},
      {"/a?b=c", "/a?b=c"},
      {"http://127.0.0.1:10200/health", "/health"},
      {"HTTPS://host/api/v1/pods?watch=1", "/api/v1/pods?watch=1"},
      {"http://host", "/"},
      {"http://host?x=1", "/?x=1"},
      {"*", "*"},
      {"ftp://host/x", "ftp://host/x"},
      {"host:443", "host:443"},
  };
  for (const Case& c : cases) {
    std::string target = c.target;
    to_origin_form(target);
    EXPECT_EQ(target, c.served) << c.target;
  }
}

TEST(Url, HostPort) {
  EXPECT_EQ(parse_host_port("127.0.0.1:10200")->second, 10200);
  EXPECT_EQ(parse_host_port("[::1]:0")->first, "::1");
  EXPECT_FALSE(parse_host_port("127.0.0.1"));
  EXPECT_FALSE(parse_host_port(":80"));
  EXPECT_FALSE(parse_host_port("h:65536"));
  EXPECT_FALSE(parse_host_port("h:8x"));
}

TEST(Url, PercentDecodingAndQueryParams) {
  EXPECT_EQ(*percent_decode("a%20b+c", true), "a b c");
  EXPECT_EQ(*percent_decode("a+b", false), "a+b");
  EXPECT_FALSE(percent_decode("bad%2", false));
  EXPECT_FALSE(percent_decode("bad%zz", false));
  std::string_view q = "labelSelector=app%3Ddemo&watch=true&empty=&flag";
  EXPECT_EQ(*query_param(q, "labelSelector"), "app=demo");
  EXPECT_EQ(*query_param(q, "watch"), "true");
  EXPECT_EQ(*query_param(q, "empty"), "");
  EXPECT_EQ(*query_param(q, "flag"), "");
  EXPECT_FALSE(query_param(q, "missing"));
}

}  // namespace
}  // namespace uvsched
