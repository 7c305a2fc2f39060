// Who may call what, on the real daemon with a token file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <thread>

#include "tests/support/daemon_fixture.h"
#include "tests/support/raw_http.h"
#include "tests/support/sanitized.h"
#include "tests/support/store_fixture.h"
#include "tests/support/test_certs.h"

namespace uvsched::test {
namespace {

const std::string kAdmin = "adm-0123456789abcdef";
const std::string kReader = "rdr-0123456789abcdef";
const std::string kMl = "kml-0123456789abcdef";
const std::string kAgent = "agt-0123456789abcdef";
const std::string kPod = R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}})";

std::string bearer(const std::string& token) { return "Authorization: Bearer " + token + "\r\n"; }

class AuthTest : public DaemonFixture {
 protected:
  void SetUp() override {
    tokens_ = dir_.path() + "/tokens";
    write_tokens(kReader);
    start({"--token-file", tokens_});
    // Until the pods are loaded an agent's status gets 503 and Retry-After.
    ASSERT_TRUE(daemon_->wait_ready()) << daemon_->log();
  }
  void write_tokens(const std::string& reader) {
    std::ofstream(tokens_) << "# token,name,role\n"
                           << kAdmin << ",ops,admin\n"
                           << reader << ",dashboard,reader\n"
                           << kMl << ",kubeml,ml\n"
                           << kAgent << ",edge-1,agent\n";
  }
  int status(std::string_view method, const std::string& path, const std::string& token, const std::string& body = "") {
    auto r = http_request(port(), method, path, body, token.empty() ? "" : bearer(token));
    return r ? r->status : 0;
  }
  TempDir dir_;
  std::string tokens_;
};

TEST_F(AuthTest, HealthIsOpenAndEverythingElseNeedsAToken) {
  EXPECT_EQ(status("GET", "/health", ""), 200);
  ASSERT_TRUE(daemon_->wait_ready()) << daemon_->log();  // /readyz needs no token either
  auto r = http_request(port(), "GET", "/api/v1/pods");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->header("WWW-Authenticate"), "Bearer");
  EXPECT_NE(r->body.find("\"reason\":\"Unauthorized\""), std::string::npos) << r->body;
  EXPECT_EQ(status("GET", "/metrics", ""), 401);
  EXPECT_EQ(status("POST", "/train", ""), 401);
  EXPECT_EQ(status("GET", "/api/v1/pods", "not-a-token-at-all-xx"), 401);
  auto wrong_scheme = http_request(port(), "GET", "/api/v1/pods", "", "Authorization: Basic " + kAdmin + "\r\n");
  EXPECT_EQ(wrong_scheme->status, 401);
}

TEST_F(AuthTest, RolesReachOnlyTheirPathsAndStateDoesNotChange) {
  EXPECT_EQ(status("GET", "/api/v1/pods", kReader), 200);
  EXPECT_EQ(status("GET", "/metrics", kReader), 200);
  EXPECT_EQ(status("POST", "/api/v1/namespaces/default/pods", kReader, kPod), 403);
  EXPECT_EQ(status("GET", "/api/v1/pods", kMl), 403);
  EXPECT_EQ(status("POST", "/v1/agents/edge-2/status", kAgent, R"({"statuses":[]})"), 403);
  EXPECT_EQ(status("POST", "/v1/agents/edge-1/status", kAgent, R"({"statuses":[]})"), 200);
  EXPECT_EQ(status("POST", "/api/v1/namespaces/default/pods", kAgent, kPod), 403);
  // Nothing a refused request sent was stored.
  auto list = http_request(port(), "GET", "/api/v1/pods", "", bearer(kAdmin));
  EXPECT_EQ(list->body.find("\"name\":\"p\""), std::string::npos);
  EXPECT_EQ(status("POST", "/api/v1/namespaces/default/pods", kAdmin, kPod), 201);
  std::string train = R"({"model_type":"m","batch_size":8,"epochs":1,"dataset":"d","function_name":"f"})";
  EXPECT_EQ(status("POST", "/train", kMl, train), 200);
  EXPECT_EQ(status("POST", "/train", kReader, train), 403);
}

// kubectl sends a token only over TLS (issue 7's next part); without one it is
// told to authenticate, and never reaches the API.
// The attack: many connections each sending all but the last byte of a large
// body and no token. The token is judged on the head: the answer is 401 at
// once (no "100 Continue" inviting the body), the body is never read, and the
// connection is closed, so the daemon holds nothing for them.
TEST_F(AuthTest, AnUnauthenticatedBodyIsNeverReadNorBuffered) {
  signal(SIGPIPE, SIG_IGN);
  RawConnection c;
  ASSERT_TRUE(c.connect(port()));
  ASSERT_TRUE(
      c.send("POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: t\r\nContent-Length: 1048000\r\n"
             "Expect: 100-continue\r\n\r\n"));
  auto r = c.read_response(2s);
  ASSERT_TRUE(r) << "no answer before the body";
  EXPECT_EQ(r->status, 401);
  EXPECT_TRUE(c.wait_closed(2s));

  long before_kib = daemon_->peak_rss_kib();
  const std::string head =
      "POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: t\r\nContent-Length: 1048576\r\n\r\n";
  const std::string chunk(64 * 1024, 'x');
  std::vector<RawConnection> flood(400);
  for (auto& f : flood) {
    ASSERT_TRUE(f.connect(port()));
    if (!f.send(head)) continue;
    for (int i = 0; i < 12 && f.send(chunk); ++i) {  // 768 KiB each, while the daemon takes it
    }
  }
  long after_kib = daemon_->peak_rss_kib();
  EXPECT_LT(after_kib - before_kib, 64 * 1024)
      << "the daemon kept the bodies: " << before_kib << " -> " << after_kib << " KiB";
  EXPECT_EQ(status("GET", "/api/v1/pods", kReader), 200);  // and serves the others
}

TEST_F(AuthTest, UnauthenticatedConnectionsHaveABudgetOfTheirOwnAndShortTimeOuts) {
  ASSERT_EQ(daemon_->stop(SIGTERM), 0);
  start({"--token-file", tokens_, "--max-unauthenticated-connections", "5", "--request-timeout", "0.5"});
  RawConnection trusted;
  ASSERT_TRUE(trusted.connect(port()));
  const std::string get = "GET /api/v1/pods HTTP/1.1\r\nHost: t\r\n" + bearer(kReader) + "\r\n";
  ASSERT_TRUE(trusted.send(get));
  auto first = trusted.read_response();
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200);
  std::vector<RawConnection> idle(20);
  for (auto& c : idle) ASSERT_TRUE(c.connect(port()));
  // The oldest of the idle ones made room for the newest; the trusted one stays.
  EXPECT_TRUE(idle[0].wait_closed(2s)) << "over the budget, the oldest unauthenticated connection stays";
  ASSERT_TRUE(trusted.send(get));
  auto again = trusted.read_response();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(status("GET", "/api/v1/pods", kReader), 200);  // a newcomer with a token gets in
  // An unauthenticated connection is idle no longer than a request may take;
  // the trusted one keeps the idle time-out (60 s).
  EXPECT_TRUE(idle[19].wait_closed(3s));
  ASSERT_TRUE(trusted.send(get));
  auto later = trusted.read_response();
  ASSERT_TRUE(later) << "the authenticated connection was closed as if it had shown nothing";
  EXPECT_EQ(later->status, 200);
}

// Two Authorization headers (a proxy may read one and uvsched the other):
// refused, never the first one taken.
TEST_F(AuthTest, DuplicateAuthorizationHeadersAreRefused) {
  auto twice = http_request(port(), "GET", "/api/v1/pods", "", bearer(kReader) + bearer(kAdmin));
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->status, 400) << twice->body;
  EXPECT_NE(twice->body.find("more than one Authorization header"), std::string::npos) << twice->body;
  EXPECT_EQ(status("GET", "/api/v1/pods", kReader), 200);
  // A token folded onto a second line is not joined into one.
  auto folded = http_request(port(), "GET", "/api/v1/pods", "", "Authorization: Bearer\r\n " + kReader + "\r\n");
  ASSERT_TRUE(folded);
  EXPECT_EQ(folded->status, 400) << folded->body;
}

// One client's flood is answered 429 on its requests' heads while the
// others go on: the admin floods from 4 connections, the reader and an agent
// are not held up, and the p99 of their requests stays under 50 ms (the
// issue's bound; looser under ASan).
TEST_F(AuthTest, AFloodingClientIsLimitedAndTheOthersAreNot) {
  ASSERT_EQ(daemon_->stop(SIGTERM), 0);
  start({"--token-file", tokens_, "--rate-limit", "50", "--rate-burst", "50"});
  ASSERT_TRUE(daemon_->wait_ready()) << daemon_->log();
  std::atomic<bool> stop{false};
  std::atomic<int> limited{0}, flood_ok{0};
  std::vector<std::thread> flood;
  for (int t = 0; t < 4; ++t) {
    flood.emplace_back([&] {
      while (!stop) {
        RawConnection c;
        if (!c.connect(port())) continue;
        std::string requests;
        for (int i = 0; i < 32; ++i) requests += "GET /api/v1/pods HTTP/1.1\r\nHost: t\r\n" + bearer(kAdmin) + "\r\n";
        c.send(requests);
        while (auto r = c.read_response(2s)) {
          if (r->status == 429) {
            ++limited;
            EXPECT_FALSE(r->header("Retry-After").empty());
            EXPECT_NE(r->body.find("TooManyRequests"), std::string::npos) << r->body;
            break;  // the connection is closed after a 429
          }
          EXPECT_EQ(r->status, 200) << r->body.substr(0, 200);  // taken (within its rate), or refused with a 429
          ++flood_ok;
        }
      }
    });
  }
  std::vector<double> ms;
  int reader_ok = 0, agent_ok = 0;
  auto timed = [&ms](auto request) {
    auto t0 = std::chrono::steady_clock::now();
    bool ok = request();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    return ok;
  };
  for (int i = 0; i < 120; ++i) {  // 120 each in 3 s: under the reader's and agent's 50 a second
    reader_ok += timed([&] { return status("GET", "/api/v1/pods", kReader) == 200; });
    agent_ok += timed([&] { return status("POST", "/v1/agents/edge-1/status", kAgent, R"({"statuses":[]})") == 200; });
    std::this_thread::sleep_for(25ms);  // pacing the other clients, not waiting for an event
  }
  stop = true;
  for (auto& t : flood) t.join();
  EXPECT_EQ(reader_ok, 120);
  EXPECT_EQ(agent_ok, 120);
  EXPECT_GT(limited.load(), 0);
  std::sort(ms.begin(), ms.end());
  double p99 = ms[ms.size() * 99 / 100];
  EXPECT_LT(p99, kSanitized ? 250.0 : 50.0)
      << "p99 of the others' requests; median " << ms[ms.size() / 2] << " ms, slowest " << ms.back() << " ms";
  std::printf("others' p99 %.1f ms (median %.1f, slowest %.1f) beside a flood limited %d times\n", p99,
              ms[ms.size() / 2], ms.back(), limited.load());
  EXPECT_EQ(status("GET", "/health", ""), 200);  // never limited
  auto metrics = http_request(port(), "GET", "/metrics", "", bearer(kReader));
  ASSERT_TRUE(metrics);
  size_t at = metrics->body.find("\nuvsched_http_rate_limited ");
  ASSERT_NE(at, std::string::npos) << metrics->body.substr(0, 300);
  EXPECT_GT(std::stod(metrics->body.substr(at + 27)), 0);
}

// Tokens are compared as SHA-256 digests in fixed time (SECURITY.md); a token
// file others can read is said so, loudly.
TEST_F(AuthTest, ATokenFileOthersCanReadIsWarnedAbout) {
  ASSERT_EQ(daemon_->stop(SIGTERM), 0);
  ASSERT_EQ(chmod(tokens_.c_str(), 0644), 0);
  start({"--token-file", tokens_});
  EXPECT_TRUE(daemon_->wait_for_log("event=token_file_readable_by_others")) << daemon_->log();
  EXPECT_EQ(status("GET", "/api/v1/pods", kReader), 200);
  EXPECT_EQ(status("GET", "/api/v1/pods", kReader.substr(0, kReader.size() - 1)), 401);  // a prefix is not the token
  EXPECT_EQ(status("GET", "/api/v1/pods", kReader + "x"), 401);
}

TEST_F(AuthTest, KubectlWithoutCredentialsIsAskedForThem) {
  std::string out;
  // A cache of its own: kubectl keeps discovery per host:port, and an earlier
  // daemon on this port (no tokens) would let it skip straight to the list.
  EXPECT_NE(run_shell("kubectl --cache-dir " + dir_.path() +
                          "/kube-cache --server http://127.0.0.1:" + std::to_string(port()) + " get pods",
                      &out),
            0);
  // kubectl words it by which request was refused: discovery, or the list itself.
  bool asked = out.find("provide credentials") != std::string::npos ||
               out.find("You must be logged in to the server (a bearer token is required)") != std::string::npos;
  EXPECT_TRUE(asked) << out;
}

// A revoked token's open streams end at SIGHUP: a reader's watch when its
// token is rotated away, an agent's event stream when the file is deleted
// (which revokes every token it held), each within a second.
TEST_F(AuthTest, RevocationEndsTheOpenStreamsOfTheRevokedTokens) {
  RawConnection watch;
  ASSERT_TRUE(watch.connect(port()));
  ASSERT_TRUE(watch.send("GET /api/v1/pods?watch=true HTTP/1.1\r\nHost: t\r\n" + bearer(kReader) + "\r\n"));
  ASSERT_TRUE(watch.read_until("\r\n\r\n"));  // the watch is open
  RawConnection agent;
  ASSERT_TRUE(agent.connect(port()));
  const std::string body = R"({"labels":{},"resources":[]})";
  ASSERT_TRUE(agent.send("POST /v1/agents/edge-1/subscribe HTTP/1.1\r\nHost: t\r\n" + bearer(kAgent) +
                         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body));
  ASSERT_TRUE(agent.read_until("SUBSCRIBED"));

  write_tokens("rdr-fedcba9876543210");  // the reader's token rotated away; the agent's stays
  kill(daemon_->pid(), SIGHUP);
  EXPECT_TRUE(watch.wait_closed(1s)) << "the revoked reader's watch goes on\n" << daemon_->log();
  EXPECT_FALSE(agent.wait_closed(300ms)) << "the agent's stream ended though its token is still valid";

  ASSERT_EQ(std::remove(tokens_.c_str()), 0);
  kill(daemon_->pid(), SIGHUP);
  EXPECT_TRUE(agent.wait_closed(1s)) << "the agent's stream outlived the token file\n" << daemon_->log();
  EXPECT_TRUE(daemon_->wait_for_log("event=token_file_gone")) << daemon_->log();
  EXPECT_EQ(status("POST", "/v1/agents/edge-1/status", kAgent, R"({"statuses":[]})"), 401);
  EXPECT_EQ(status("GET", "/api/v1/pods", kAdmin), 401);
}

TEST_F(AuthTest, SighupReloadsTheTokenFile) {
  const std::string rotated = "rdr-fedcba9876543210";
  write_tokens(rotated);
  kill(daemon_->pid(), SIGHUP);
  ASSERT_TRUE(daemon_->wait_for_log("event=tokens_reloaded")) << daemon_->log();
  EXPECT_EQ(status("GET", "/api/v1/pods", kReader), 401);
  EXPECT_EQ(status("GET", "/api/v1/pods", rotated), 200);
  // A broken file is refused and the tokens in force stay.
  std::ofstream(tokens_) << "garbage line\n";
  kill(daemon_->pid(), SIGHUP);
  ASSERT_TRUE(daemon_->wait_for_log("event=tokens_reload_failed")) << daemon_->log();
  EXPECT_EQ(status("GET", "/api/v1/pods", rotated), 200);
}

// The daemon serving HTTPS: kubectl with a kubeconfig that carries the CA and
// a token, agents with client certificates, and what is refused.
class TlsAuthTest : public AuthTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.ok());
    tokens_ = dir_.path() + "/tokens";
    write_tokens(kReader);
    start({"--token-file", tokens_, "--tls-cert", certs_.server_cert(), "--tls-key", certs_.server_key(),
           "--tls-client-ca", certs_.ca_file()});
    base_ = "https://127.0.0.1:" + std::to_string(port());
    wait_loaded();
  }
  // /readyz is behind TLS here; the log says when the pods are loaded, before
  // which an agent's status is answered 503 with Retry-After.
  void wait_loaded() { ASSERT_TRUE(daemon_->wait_for_log("event=scheduler_started")) << daemon_->log(); }
  std::string kubeconfig(const std::string& token) {
    std::string path = dir_.path() + "/kubeconfig-" + token.substr(0, 3);
    std::ofstream(path) << "apiVersion: v1\nkind: Config\nclusters:\n- name: edge\n  cluster:\n"
                        << "    server: " << base_ << "\n    certificate-authority: " << certs_.ca_file() << "\n"
                        << "users:\n- name: u\n  user:\n    token: " << token << "\n"
                        << "contexts:\n- name: c\n  context:\n    cluster: edge\n    user: u\n"
                        << "current-context: c\n";
    return path;
  }
  int kubectl(const std::string& token, const std::string& args, std::string* out) {
    return run_shell(
        "kubectl --cache-dir " + dir_.path() + "/kube-cache --kubeconfig " + kubeconfig(token) + " " + args, out);
  }
  // curl over TLS; cert: a client certificate path (its key beside it), or "".
  std::string curl(const std::string& method, const std::string& path, const std::string& cert,
                   const std::string& body = "") {
    std::string cmd = "curl -sS -o /dev/null -w '%{http_code}' --cacert " + certs_.ca_file() + " -X " + method;
    if (!cert.empty()) cmd += " --cert " + cert + " --key " + cert.substr(0, cert.size() - 4) + "-key.pem";
    if (!body.empty()) cmd += " -H 'Content-Type: application/json' -d '" + body + "'";
    std::string out;
    run_shell(cmd + " " + base_ + path, &out);
    return out.size() >= 3 ? out.substr(out.size() - 3) : out;  // the status; curl's errors come before it
  }
  test::TestCerts certs_;
  std::string base_;
};

TEST_F(TlsAuthTest, KubectlWithTheCaAndATokenWorks) {
  std::string out;
  EXPECT_EQ(kubectl(kAdmin, "run tls-pod --image=nginx --restart=Never", &out), 0) << out;
  out.clear();
  EXPECT_EQ(kubectl(kReader, "get pods", &out), 0) << out;
  EXPECT_NE(out.find("tls-pod"), std::string::npos) << out;
  EXPECT_NE(out.find("Pending"), std::string::npos) << out;
  out.clear();
  EXPECT_NE(kubectl(kReader, "delete pod tls-pod", &out), 0) << out;  // a reader may not
  EXPECT_NE(out.find("Forbidden"), std::string::npos) << out;
  out.clear();
  EXPECT_NE(kubectl("bad-0123456789abcdef", "get pods", &out), 0) << out;
  EXPECT_NE(out.find("You must be logged in to the server (the token is not valid)"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(kubectl(kAdmin, "delete pod tls-pod", &out), 0) << out;
}

// kubectl auth can-i and auth whoami (typed clients: protobuf in, JSON back)
// answer for the token in the kubeconfig, by the rules its requests meet.
TEST_F(TlsAuthTest, KubectlAuthCanIAndWhoamiAnswerForTheToken) {
  struct Case {
    const std::string& token;
    std::string args;
    int code;  // kubectl's: 0 for yes, 1 for no
    std::string says;
  } cases[] = {
      {kAdmin, "auth can-i create pods", 0, "yes"},
      {kAdmin, "auth can-i delete namespaces", 0, "yes"},
      {kReader, "auth can-i list pods -n kube-system", 0, "yes"},
      {kReader, "auth can-i get pods/status", 0, "yes"},
      {kReader, "auth can-i get /metrics", 0, "yes"},
      {kReader, "auth can-i create pods", 1, "no - reader dashboard may not POST /api/v1/namespaces/default/pods"},
      {kReader, "auth can-i '*' pods", 1, "no - reader dashboard may not POST"},
      {kAgent, "auth can-i post /v1/agents/edge-1/offers", 0, "yes"},
      {kAgent, "auth can-i post /v1/agents/edge-2/offers", 1,
       "no - agent edge-1 may not POST /v1/agents/edge-2/offers"},
      {kAgent, "auth can-i list pods", 1, "no - agent edge-1 may not GET /api/v1/namespaces/default/pods"},
      {kMl, "auth can-i post /job", 0, "yes"},
      {kReader, "auth whoami", 0, "dashboard"},
      {kAgent, "auth whoami -o jsonpath={.status.userInfo.groups}", 0, R"(["uvsched:agent","system:authenticated"])"},
      {kReader, "auth can-i --list", 0, "[get list watch]"},
  };
  std::string out;
  run_shell("kubectl auth --help", &out);
  const bool has_whoami = out.find("whoami") != std::string::npos;  // since 1.26, not in Debian's 1.20
  for (const Case& c : cases) {
    if (!has_whoami && c.args.find("whoami") != std::string::npos) continue;
    out.clear();
    EXPECT_EQ(kubectl(c.token, c.args, &out), c.code) << c.args << ": " << out;
    EXPECT_NE(out.find(c.says), std::string::npos) << c.args << ": " << out;
  }
  // The review whoami posts, as JSON; and a bad token is still a 401, review or not.
  out.clear();
  run_shell("curl -sS --cacert " + certs_.ca_file() + " -H 'Authorization: Bearer " + kMl +
                "' -H 'Content-Type: application/json' -d '{}' " + base_ +
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            &out);
  EXPECT_NE(out.find(R"("userInfo":{"username":"kubeml","groups":["uvsched:ml","system:authenticated"])"),
            std::string::npos)
      << out;
  // The scheme in any case (RFC 9110), for the answer as for the admission.
  out.clear();
  run_shell("curl -sS --cacert " + certs_.ca_file() + " -H 'Authorization: bearer " + kMl +
                "' -H 'Content-Type: application/json' -d '{}' " + base_ +
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            &out);
  EXPECT_NE(out.find(R"("username":"kubeml")"), std::string::npos) << out;
  out.clear();
  EXPECT_NE(kubectl("bad-0123456789abcdef", "auth can-i get pods", &out), 0);
  EXPECT_NE(out.find("the token is not valid"), std::string::npos) << out;
}

TEST_F(TlsAuthTest, AnAgentCertificateActsOnlyForItsOwnHost) {
  std::string edge = certs_.client_cert("edge-9");
  EXPECT_EQ(curl("POST", "/v1/agents/edge-9/status", edge, R"({"statuses":[]})"), "200");
  EXPECT_EQ(curl("POST", "/v1/agents/edge-8/status", edge, R"({"statuses":[]})"), "403");
  EXPECT_EQ(curl("GET", "/api/v1/pods", edge), "403");
  EXPECT_EQ(curl("POST", "/v1/agents/edge-9/status", "", R"({"statuses":[]})"), "401");  // no cert, no token
  // Signed by a CA the daemon does not trust: no TLS session, no status at all.
  EXPECT_EQ(curl("POST", "/v1/agents/edge-9/status", certs_.client_cert("edge-9", true), R"({"statuses":[]})"), "000");
  EXPECT_EQ(curl("GET", "/health", ""), "200");
}

// A certificate the CA signed stands for an agent only if it was issued for
// that: with the clientAuth extended key usage, and not a CA's own.
TEST_F(TlsAuthTest, OnlyAClientAuthCertificateThatIsNotACaActsAsAnAgent) {
  using Kind = test::TestCerts::ClientKind;
  // Without any extended key usage OpenSSL lets it through the handshake: uvsched refuses it as an agent.
  EXPECT_EQ(curl("POST", "/v1/agents/edge-8/status", certs_.client_cert("edge-8", false, Kind::kNoUsage),
                 R"({"statuses":[]})"),
            "401");
  // For servers only, or a CA's: refused (the handshake itself fails, "000", or 401).
  for (Kind kind : {Kind::kServerOnly, Kind::kCa}) {
    std::string got =
        curl("POST", "/v1/agents/edge-7/status", certs_.client_cert("edge-7", false, kind), R"({"statuses":[]})");
    EXPECT_TRUE(got == "000" || got == "401") << got;
  }
  EXPECT_EQ(curl("POST", "/v1/agents/edge-5/status", certs_.client_cert("edge-5"), R"({"statuses":[]})"), "200");
}

// With --tls-client-crl a revoked agent certificate gets no session; at
// SIGHUP the certificate, key, client CAs and CRL are read again, so a
// revocation takes effect without a restart, and files that do not load
// leave the ones before in place.
TEST_F(TlsAuthTest, ARevokedAgentCertificateIsRefusedFromTheSighupOn) {
  std::string one = certs_.client_cert("edge-1"), two = certs_.client_cert("edge-2");
  std::string crl = certs_.crl_file("crl.pem", {});
  ASSERT_FALSE(crl.empty());
  ASSERT_EQ(daemon_->stop(SIGTERM), 0);
  start({"--token-file", tokens_, "--tls-cert", certs_.server_cert(), "--tls-key", certs_.server_key(),
         "--tls-client-ca", certs_.ca_file(), "--tls-client-crl", crl});
  base_ = "https://127.0.0.1:" + std::to_string(port());
  wait_loaded();
  const std::string empty = R"({"statuses":[]})";
  EXPECT_EQ(curl("POST", "/v1/agents/edge-1/status", one, empty), "200");
  EXPECT_EQ(curl("POST", "/v1/agents/edge-2/status", two, empty), "200");
  // edge-2's stream is open when its certificate is revoked.
  std::atomic<bool> stream_ended{false};
  std::string stream_out;
  std::thread stream([&] {
    run_shell("timeout 30 curl -sSN --cacert " + certs_.ca_file() + " --cert " + two + " --key " +
                  two.substr(0, two.size() - 4) + "-key.pem -X POST -H 'Content-Type: application/json' -d '{}' " +
                  base_ + "/v1/agents/edge-2/subscribe",
              &stream_out);
    stream_ended = true;
  });
  ASSERT_TRUE(daemon_->wait_for_log("event=agent_registered agent=edge-2")) << daemon_->log();

  ASSERT_EQ(certs_.crl_file("crl.pem", {two}), crl);
  kill(daemon_->pid(), SIGHUP);
  ASSERT_TRUE(daemon_->wait_for_log("event=tls_reloaded")) << daemon_->log();
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!stream_ended && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(stream_ended) << "the revoked agent's open stream outlived the reload";
  stream.join();
  EXPECT_NE(stream_out.find("SUBSCRIBED"), std::string::npos) << stream_out;
  EXPECT_TRUE(daemon_->wait_for_log("closed_untrusted=1")) << daemon_->log();
  EXPECT_EQ(curl("POST", "/v1/agents/edge-2/status", two, empty), "000");  // no session
  EXPECT_EQ(curl("POST", "/v1/agents/edge-1/status", one, empty), "200");

  // A CRL that does not load: the reload fails loudly and the last one holds.
  std::ofstream(crl) << "not a CRL\n";
  kill(daemon_->pid(), SIGHUP);
  ASSERT_TRUE(daemon_->wait_for_log("event=tls_reload_failed")) << daemon_->log();
  EXPECT_EQ(curl("POST", "/v1/agents/edge-2/status", two, empty), "000");
  EXPECT_EQ(curl("POST", "/v1/agents/edge-1/status", one, empty), "200");
  EXPECT_EQ(curl("GET", "/health", ""), "200");
}

TEST(AuthStartUp, ACrlNeedsClientCasAndMustLoad) {
  test::TestCerts certs;
  ASSERT_TRUE(certs.ok());
  std::string out;
  EXPECT_EQ(run_binary({"--listen", "127.0.0.1:0", "--tls-cert", certs.server_cert(), "--tls-key", certs.server_key(),
                        "--tls-client-crl", certs.crl_file("crl.pem", {})},
                       &out),
            2);
  EXPECT_NE(out.find("--tls-client-crl needs --tls-client-ca"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(run_binary({"--listen", "127.0.0.1:0", "--tls-cert", certs.server_cert(), "--tls-key", certs.server_key(),
                        "--tls-client-ca", certs.ca_file(), "--tls-client-crl", "/nonexistent-crl.pem"},
                       &out),
            1);
  EXPECT_NE(out.find("cannot load --tls-client-crl /nonexistent-crl.pem"), std::string::npos) << out;
}

// TLS 1.2 takes only forward-secret AEAD suites: static RSA and CBC are refused.
TEST_F(TlsAuthTest, Tls12OffersOnlyForwardSecretAeadSuites) {
  std::string out;
  const std::string s_client = "echo | openssl s_client -connect 127.0.0.1:" + std::to_string(port()) + " -tls1_2 ";
  // The test server's key is EC, so static-RSA suites could not be agreed in any case: CBC is what is tried.
  EXPECT_NE(run_shell(s_client + "-cipher ECDHE-ECDSA-AES128-SHA 2>&1", &out), 0) << out;
  out.clear();
  EXPECT_NE(run_shell(s_client + "-cipher ECDHE-ECDSA-AES256-SHA384 2>&1", &out), 0) << out;
  out.clear();
  EXPECT_EQ(run_shell(s_client + "-cipher ECDHE-ECDSA-AES128-GCM-SHA256 2>&1", &out), 0) << out;
}

TEST_F(TlsAuthTest, PlainHttpOnTheTlsPortGetsNothingAndServingGoesOn) {
  auto plain = http_request(port(), "GET", "/health");
  EXPECT_FALSE(plain && plain->status == 200);
  EXPECT_EQ(curl("GET", "/health", ""), "200");
}

TEST(AuthStartUp, BadTokenFilesAndRemoteListenWithoutTokensAreRefused) {
  TempDir dir;
  std::string file = dir.path() + "/tokens";
  std::ofstream(file) << "short,name,admin\n";
  std::string out;
  EXPECT_EQ(run_binary({"--listen", "127.0.0.1:0", "--token-file", file}, &out), 1);
  EXPECT_NE(out.find("line 1: a token must be at least 16 characters"), std::string::npos) << out;
  out.clear();
  std::ofstream(file) << "0123456789abcdef0123,ops,root\n";
  EXPECT_EQ(run_binary({"--listen", "127.0.0.1:0", "--token-file", file}, &out), 1);
  EXPECT_NE(out.find("role of admin, agent, ml or reader"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(run_binary({"--listen", "0.0.0.0:0"}, &out), 1);
  EXPECT_NE(out.find("refusing_remote_listen"), std::string::npos) << out;
}

TEST(AuthStartUp, TlsFlagsAreCheckedBeforeListening) {
  test::TestCerts certs;
  std::string out;
  EXPECT_EQ(run_binary({"--listen", "127.0.0.1:0", "--tls-cert", certs.server_cert()}, &out), 2);
  EXPECT_NE(out.find("--tls-cert and --tls-key go together"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(
      run_binary({"--listen", "127.0.0.1:0", "--tls-cert", "/nonexistent.pem", "--tls-key", certs.server_key()}, &out),
      1);
  EXPECT_NE(out.find("cannot load --tls-cert /nonexistent.pem"), std::string::npos) << out;
}

}  // namespace
}  // namespace uvsched::test
