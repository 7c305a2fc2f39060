// The HttpClient against an HttpServer on the same loop, plain and over TLS
// (the test thread owns the loop and runs it until the exchange is over).
#include "reactor/http_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "handlers/json_response.h"
#include "handlers/router.h"
#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "reactor/tls.h"
#include "tests/support/test_certs.h"

namespace uvsched {
namespace {

class HttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    signal(SIGPIPE, SIG_IGN);  // as the daemon does: peers that hang up are errors, not signals
    log_configure(LogLevel::kOff, LogFormat::kText);
    uv_loop_init(&loop_);
    clock_ = std::make_unique<LoopClock>(&loop_);
    router_.add("GET", "/hello", [](RequestContext& ctx) { ctx.reply(text_response(200, "hello")); });
    router_.add("POST", "/echo", [](RequestContext& ctx) { ctx.reply(text_response(201, ctx.request.body)); });
    router_.add("GET", "/never", [this](RequestContext& ctx) { parked_.push_back(ctx.responder); });
    // Asked with "Connection: close", answered so, and the server closes.
    router_.add("GET", "/close", [](RequestContext& ctx) { ctx.reply(text_response(200, "bye")); });
    router_.add("GET", "/events", [this](RequestContext& ctx) {
      stream_ = ctx.responder.start_stream(200, "application/x-ndjson");
      stream_.write("one\n");
      stream_.write("two\n");
      stream_.end();
    });
    server_ = std::make_unique<HttpServer>(&loop_, *clock_, ServerLimits{}, router_);
    ASSERT_EQ(server_->listen("127.0.0.1", 0), 0);
    client_ = std::make_unique<HttpClient>(&loop_, *clock_);
    base_ = "http://127.0.0.1:" + std::to_string(server_->port());
  }

  void TearDown() override {
    bool closed = false;
    parked_.clear();
    client_->close([&] { closed = true; });
    server_->shutdown([] {});
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_TRUE(closed);
    client_.reset();
    server_.reset();
    clock_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }

  // Runs the loop until `done` (bounded by a watchdog timer).
  void run_until(const bool& done) {
    run_until([&] { return done; });
  }

  // Runs the loop until `cond` holds (checked after every event; bounded by a watchdog).
  void run_until(const std::function<bool()>& cond) {
    auto watchdog = clock_->new_timer();
    bool expired = false;
    watchdog->start(10'000, [&] { expired = true; });
    while (!cond() && !expired) uv_run(&loop_, UV_RUN_ONCE);
    ASSERT_FALSE(expired) << "timed out";
  }

  ClientResponse fetch(HttpClient& client, ClientRequest req) {
    ClientResponse out;
    bool done = false;
    client.request(std::move(req), [&](ClientResponse&& r) {
      out = std::move(r);
      done = true;
    });
    run_until(done);
    return out;
  }
  ClientResponse fetch(ClientRequest req) { return fetch(*client_, std::move(req)); }

  // Closes a client the test made, before it goes out of scope.
  void close_client(HttpClient& client) {
    bool closed = false;
    client.close([&] { closed = true; });
    while (!closed) uv_run(&loop_, UV_RUN_ONCE);
  }

  uv_loop_t loop_;
  std::unique_ptr<LoopClock> clock_;
  Router router_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<HttpClient> client_;
  std::vector<Responder> parked_;
  ResponseStream stream_;
  std::string base_;
};

TEST_F(HttpClientTest, GetAndPostWithKeepAliveReuse) {
  auto r = fetch({.method = "GET", .url = base_ + "/hello"});
  EXPECT_EQ(r.error, 0) << r.error_text;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello");
  for (int i = 0; i < 20; ++i) {
    auto e = fetch({.method = "POST", .url = base_ + "/echo", .body = "n" + std::to_string(i)});
    EXPECT_EQ(e.status, 201);
    EXPECT_EQ(e.body, "n" + std::to_string(i));
  }
  EXPECT_EQ(client_->open_connections(), 1u);  // sequential requests share one connection
  EXPECT_EQ(server_->connection_count(), 1u);
}

TEST_F(HttpClientTest, ConcurrentRequestsAllComplete) {
  int done = 0;
  for (int i = 0; i < 100; ++i) {
    client_->request({.method = "POST", .url = base_ + "/echo", .body = std::to_string(i)}, [&, i](ClientResponse&& r) {
      EXPECT_EQ(r.body, std::to_string(i));
      ++done;
    });
  }
  run_until([&] { return done == 100; });
  EXPECT_LE(client_->open_connections(), 32u);
}

TEST_F(HttpClientTest, TimeoutRefusedAndBadUrlAreErrors) {
  auto slow = fetch({.method = "GET", .url = base_ + "/never", .timeout_ms = 100});
  EXPECT_EQ(slow.error, UV_ETIMEDOUT);

  auto bad = fetch({.method = "GET", .url = "not a url"});
  EXPECT_EQ(bad.error, UV_EINVAL);

  // A port nothing listens on: bind one, learn its number, close it.
  uv_tcp_t probe;
  uv_tcp_init(&loop_, &probe);
  sockaddr_in addr;
  uv_ip4_addr("127.0.0.1", 0, &addr);
  uv_tcp_bind(&probe, reinterpret_cast<sockaddr*>(&addr), 0);
  sockaddr_storage bound;
  int len = sizeof bound;
  uv_tcp_getsockname(&probe, reinterpret_cast<sockaddr*>(&bound), &len);
  int port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  uv_close(reinterpret_cast<uv_handle_t*>(&probe), nullptr);
  auto refused = fetch({.method = "GET", .url = "http://127.0.0.1:" + std::to_string(port) + "/"});
  EXPECT_EQ(refused.error, UV_ECONNREFUSED);
}

// Pipelined requests share one connection and one write; the answers,
// which the server writes together, are told apart and handed back in order.
TEST_F(HttpClientTest, PipelinedRequestsShareOneConnectionAndAnswerInOrder) {
  for (int round = 0; round < 3; ++round) {
    std::vector<std::pair<ClientRequest, ClientCallback>> batch;
    std::vector<std::string> got;
    for (int i = 0; i < 5; ++i) {
      std::string body = "r" + std::to_string(round) + "-" + std::to_string(i) + std::string(i * 300, 'x');
      batch.emplace_back(ClientRequest{.method = "POST", .url = base_ + "/echo", .body = body},
                         [&got, body](ClientResponse&& r) {
                           EXPECT_EQ(r.error, 0) << r.error_text;
                           EXPECT_EQ(r.status, 201);
                           EXPECT_EQ(r.body, body);
                           got.push_back(r.body.substr(0, 4));
                         });
    }
    client_->pipeline(std::move(batch));
    run_until([&] { return got.size() == 5; });
    std::vector<std::string> want;
    for (int i = 0; i < 5; ++i) want.push_back("r" + std::to_string(round) + "-" + std::to_string(i));
    EXPECT_EQ(got, want);
  }
  EXPECT_EQ(client_->open_connections(), 1u);  // and it is kept for the next
  EXPECT_EQ(server_->connection_count(), 1u);
}

// A server that closes after the first answer leaves the rest unanswered:
// they fail (they may have been served, so they are not sent again), and
// the client goes on with a new connection.
TEST_F(HttpClientTest, PipelinedRequestsBehindAClosingAnswerFail) {
  std::vector<std::pair<ClientRequest, ClientCallback>> batch;
  std::vector<int> errors, statuses;
  int done = 0;
  for (const char* path : {"/close", "/hello", "/hello"}) {
    HttpHeaders headers;
    if (std::string_view(path) == "/close") headers.push_back({"Connection", "close"});
    batch.emplace_back(ClientRequest{.method = "GET", .url = base_ + path, .headers = headers},
                       [&](ClientResponse&& r) {
                         errors.push_back(r.error);
                         statuses.push_back(r.status);
                         ++done;
                       });
  }
  client_->pipeline(std::move(batch));
  run_until([&] { return done == 3; });
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], 0);
  EXPECT_EQ(statuses[0], 200);
  EXPECT_NE(errors[1], 0);
  EXPECT_NE(errors[2], 0);
  auto after = fetch({.method = "GET", .url = base_ + "/hello"});
  EXPECT_EQ(after.error, 0) << after.error_text;
  EXPECT_EQ(after.body, "hello");
}

// A pipeline still waiting for a connection when the client closes: every
// request in it is told, not just the first.
TEST_F(HttpClientTest, AWaitingPipelineIsCancelledWholeWhenTheClientCloses) {
  HttpClient one(&loop_, *clock_, ClientOptions{.max_connections_per_origin = 1});
  bool parked = false;
  one.request({.method = "GET", .url = base_ + "/never"}, [&](ClientResponse&&) { parked = true; });
  std::vector<std::pair<ClientRequest, ClientCallback>> batch;
  std::vector<int> errors;
  for (int i = 0; i < 3; ++i) {
    batch.emplace_back(ClientRequest{.method = "GET", .url = base_ + "/hello"},
                       [&](ClientResponse&& r) { errors.push_back(r.error); });
  }
  one.pipeline(std::move(batch));  // waits: the one connection is busy
  run_until([&] { return !parked_.empty(); });
  close_client(one);
  EXPECT_EQ(errors, (std::vector<int>{UV_ECANCELED, UV_ECANCELED, UV_ECANCELED}));
  EXPECT_TRUE(parked);  // the busy one was failed too
}

// Cancelling the first request of a pipeline that waits for a connection
// leaves the others wanted: they go on their own, and are answered.
TEST_F(HttpClientTest, CancellingAWaitingPipelinesFirstRequestSendsTheRest) {
  HttpClient one(&loop_, *clock_, ClientOptions{.max_connections_per_origin = 1});
  one.request({.method = "GET", .url = base_ + "/hello"}, [](ClientResponse&&) {});  // takes the connection a while
  bool first = false;
  std::vector<std::string> bodies;
  std::vector<std::pair<ClientRequest, ClientCallback>> batch;
  batch.emplace_back(ClientRequest{.method = "GET", .url = base_ + "/hello"}, [&](ClientResponse&&) { first = true; });
  for (int i = 0; i < 2; ++i) {
    batch.emplace_back(ClientRequest{.method = "POST", .url = base_ + "/echo", .body = "e" + std::to_string(i)},
                       [&](ClientResponse&& r) { bodies.push_back(r.body); });
  }
  auto ids = one.pipeline(std::move(batch));
  ASSERT_EQ(ids.size(), 3u);
  one.cancel(ids[0]);
  run_until([&] { return bodies.size() == 2; });
  EXPECT_EQ(bodies, (std::vector<std::string>{"e0", "e1"}));
  EXPECT_FALSE(first);
  close_client(one);
}

TEST_F(HttpClientTest, ServerClosingAfterResponseIsHandled) {
  auto a = fetch({.method = "GET", .url = base_ + "/close", .headers = {{"Connection", "close"}}});
  EXPECT_EQ(a.body, "bye");
  ASSERT_NE(a.header("Connection"), nullptr);
  EXPECT_EQ(*a.header("Connection"), "close");
  auto b = fetch({.method = "GET", .url = base_ + "/hello"});
  EXPECT_EQ(b.error, 0) << b.error_text;
  EXPECT_EQ(b.body, "hello");
}

TEST_F(HttpClientTest, StreamedBodyIsDeliveredInPieces) {
  std::string seen;
  auto r = fetch({.method = "GET", .url = base_ + "/events", .timeout_ms = 0, .on_body = [&](std::string_view piece) {
                    seen += piece;
                  }});
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(seen, "one\ntwo\n");
  EXPECT_EQ(r.body, "");
}

// A peer that sends headers without end (a hostile or broken PS, router or
// etcd) gets an error once they pass the cap, not the daemon's memory.
TEST_F(HttpClientTest, EndlessResponseHeadersAreCutAtTheCap) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::atomic<size_t> sent{0};
  std::thread peer([&] {
    int conn = accept(listener, nullptr, nullptr);
    if (conn < 0) return;
    const std::string line = "X-Filler: " + std::string(1000, 'a') + "\r\n";
    std::string out = "HTTP/1.1 200 OK\r\n";
    // Until the client hangs up, or far past any cap (then the test fails).
    while (sent < (64u << 20)) {
      out += line;
      ssize_t n = send(conn, out.data(), out.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
      out.erase(0, static_cast<size_t>(n));
    }
    ::close(conn);
  });
  HttpClient client(&loop_, *clock_, ClientOptions{.max_response_header_bytes = 64 * 1024});
  auto r = fetch(client, {.method = "GET", .url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/"});
  EXPECT_EQ(r.error, UV_EPROTO);
  EXPECT_NE(r.error_text.find("response headers too large"), std::string::npos) << r.error_text;
  close_client(client);
  peer.join();
  ::close(listener);
  EXPECT_LT(sent.load(), 64u << 20) << "the client read on past its cap";
}

// A peer on its own thread that answers requests and counts those it read.
// The first connection it accepts ends after its first answer: with kDrop it
// reads a second request whole and closes without answering (a server that
// goes down while it handles it); with kCloseIdle it closes as soon as its
// answer is sent (a server that ends an idle keep-alive connection). Every
// connection after that is served until the client closes it.
class OneShotPeer {
 public:
  enum class Mode { kDrop, kCloseIdle };
  explicit OneShotPeer(Mode mode) : mode_(mode) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    listen(listener_, 4);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~OneShotPeer() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  int requests() const { return requests_; }
  // The first connection is closed on the peer's side.
  bool first_closed() const { return first_closed_; }

 private:
  // Reads one request (headers and a Content-Length body); false at the end.
  bool read_request(int conn, std::string& buffered) {
    for (;;) {
      size_t end = buffered.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t length = 0;
        size_t at = buffered.find("Content-Length: ");
        if (at != std::string::npos && at < end) length = std::stoul(buffered.substr(at + 16));
        if (buffered.size() >= end + 4 + length) {
          buffered.erase(0, end + 4 + length);
          ++requests_;
          return true;
        }
      }
      pollfd p{conn, POLLIN, 0};
      if (stop_) return false;  // the client keeps its connection open past the test
      if (poll(&p, 1, 20) <= 0) continue;
      char chunk[4096];
      ssize_t n = recv(conn, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      buffered.append(chunk, static_cast<size_t>(n));
    }
  }
  void serve() {
    for (bool first = true; !stop_;) {
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      int conn = accept(listener_, nullptr, nullptr);
      if (conn < 0) continue;
      std::string buffered;
      for (int n = 0; read_request(conn, buffered); ++n) {
        if (first && n == 1) break;  // kDrop: read, never answered
        const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        send(conn, answer, sizeof answer - 1, MSG_NOSIGNAL);
        if (first && mode_ == Mode::kCloseIdle) break;
      }
      ::close(conn);
      if (first) first_closed_ = true;
      first = false;
    }
  }

  Mode mode_;
  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> first_closed_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

// The server read the POST and went down before it answered: it may have
// acted on it, so the client says so (sent) and does not send it twice, as
// Go's net/http does not.
TEST_F(HttpClientTest, APostAPooledConnectionLostUnansweredIsNotSentAgain) {
  OneShotPeer peer(OneShotPeer::Mode::kDrop);
  auto first = fetch({.method = "POST", .url = peer.url("/a"), .body = "1"});
  ASSERT_EQ(first.error, 0) << first.error_text;
  auto second = fetch({.method = "POST", .url = peer.url("/b"), .body = "2"});
  EXPECT_NE(second.error, 0);
  EXPECT_TRUE(second.sent) << "the caller must know it may have arrived";
  EXPECT_EQ(peer.requests(), 2) << "sent again on another connection";
  auto after = fetch({.method = "POST", .url = peer.url("/c"), .body = "3"});  // the client goes on
  EXPECT_EQ(after.error, 0) << after.error_text;
  EXPECT_EQ(peer.requests(), 3);
}

// A GET is safe to repeat: on a pooled connection lost before any answer
// byte it is sent once more, on a new connection, and answered.
TEST_F(HttpClientTest, AGetAPooledConnectionLostUnansweredIsSentOnceMore) {
  OneShotPeer peer(OneShotPeer::Mode::kDrop);
  ASSERT_EQ(fetch({.method = "GET", .url = peer.url("/a")}).error, 0);
  auto second = fetch({.method = "GET", .url = peer.url("/b")});
  EXPECT_EQ(second.error, 0) << second.error_text;
  EXPECT_EQ(second.body, "ok");
  EXPECT_EQ(peer.requests(), 3);
}

// A request that cannot be repeated is not put on a pooled connection the
// server has already closed (its end of file waiting unread, the loop not
// yet run): it goes on a new connection, and is answered.
TEST_F(HttpClientTest, APostIsNotPutOnAPooledConnectionTheServerHasClosed) {
  OneShotPeer peer(OneShotPeer::Mode::kCloseIdle);
  ASSERT_EQ(fetch({.method = "POST", .url = peer.url("/a"), .body = "1"}).error, 0);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!peer.first_closed() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_TRUE(peer.first_closed());
  ASSERT_EQ(client_->open_connections(), 1u) << "the client saw the close: the test proves nothing";
  auto r = fetch({.method = "POST", .url = peer.url("/b"), .body = "2"});
  EXPECT_EQ(r.error, 0) << r.error_text;
  EXPECT_EQ(peer.requests(), 2);
}

// The request reaches the server and is cancelled while parked there; then
// the server answers it. A cancel that did nothing would see that answer
// called back; the fetch after it proves the answer had its turn.
TEST_F(HttpClientTest, CancelledRequestsNeverCallBack) {
  bool called = false;
  auto id = client_->request({.method = "GET", .url = base_ + "/never"}, [&](ClientResponse&&) { called = true; });
  run_until([&] { return !parked_.empty(); });
  ASSERT_FALSE(parked_.empty());
  client_->cancel(id);
  parked_.back().send(text_response(200, "late"));
  auto after = fetch({.method = "GET", .url = base_ + "/hello"});
  EXPECT_EQ(after.body, "hello");
  EXPECT_FALSE(called);
}

// The same client and server speaking TLS, with certificates made for the
// test: requests, keep-alive, streams, large bodies, client certificates, and
// the refusals (wrong CA, plain HTTP on a TLS port).
class Https : public HttpClientTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.ok());
    std::string err;
    server_tls_ = TlsContext::server(certs_.server_cert(), certs_.server_key(), certs_.ca_file(), &err);
    ASSERT_TRUE(server_tls_) << err;
    client_tls_ = TlsContext::client(certs_.ca_file(), &err);
    ASSERT_TRUE(client_tls_) << err;
    HttpClientTest::SetUp();
    server_->use_tls(server_tls_.get());  // before any connection is accepted
    client_->use_tls(client_tls_.get());
    router_.add("GET", "/whoami", [](RequestContext& ctx) { ctx.reply(text_response(200, ctx.request.peer_name)); });
    base_ = "https://127.0.0.1:" + std::to_string(server_->port());
  }

  // A client whose https context carries a client certificate.
  std::unique_ptr<TlsContext> client_with_cert(const std::string& cert) {
    std::string err;
    auto ctx = TlsContext::client(certs_.ca_file(), &err);
    std::string key = cert.substr(0, cert.size() - 4) + "-key.pem";
    EXPECT_EQ(SSL_CTX_use_certificate_file(ctx->native(), cert.c_str(), SSL_FILETYPE_PEM), 1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey_file(ctx->native(), key.c_str(), SSL_FILETYPE_PEM), 1);
    return ctx;
  }

  test::TestCerts certs_;
  std::unique_ptr<TlsContext> server_tls_, client_tls_;
};

TEST_F(Https, RequestsShareOneEncryptedConnection) {
  auto r = fetch({.method = "GET", .url = base_ + "/hello"});
  EXPECT_EQ(r.error, 0) << r.error_text;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello");
  for (int i = 0; i < 20; ++i) {
    auto e = fetch({.method = "POST", .url = base_ + "/echo", .body = "n" + std::to_string(i)});
    EXPECT_EQ(e.body, "n" + std::to_string(i));
  }
  EXPECT_EQ(client_->open_connections(), 1u);
  EXPECT_EQ(server_->connection_count(), 1u);
  EXPECT_EQ(server_->tls_failures(), 0u);
}

TEST_F(Https, LargeBodiesAndStreamsCrossIntact) {
  std::string big(900'000, 'b');
  for (size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 26);
  auto e = fetch({.method = "POST", .url = base_ + "/echo", .body = big});
  EXPECT_EQ(e.status, 201) << e.error_text;
  EXPECT_EQ(e.body, big);
  std::string streamed;
  auto s = fetch({.method = "GET", .url = base_ + "/events", .on_body = [&](std::string_view p) { streamed += p; }});
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(streamed, "one\ntwo\n");
}

TEST_F(Https, AVerifiedClientCertificateNamesThePeer) {
  auto ctx = client_with_cert(certs_.client_cert("node-7"));
  HttpClient with_cert(&loop_, *clock_);
  with_cert.use_tls(ctx.get());
  auto r = fetch(with_cert, {.method = "GET", .url = base_ + "/whoami"});
  EXPECT_EQ(r.body, "node-7");
  EXPECT_EQ(fetch({.method = "GET", .url = base_ + "/whoami"}).body, "");  // no certificate: no name
  close_client(with_cert);
}

TEST_F(Https, AClientCertificateFromAnUntrustedCaIsRefused) {
  auto ctx = client_with_cert(certs_.client_cert("mallory", true));
  HttpClient forged(&loop_, *clock_);
  forged.use_tls(ctx.get());
  auto r = fetch(forged, {.method = "GET", .url = base_ + "/whoami"});
  EXPECT_NE(r.error, 0);
  EXPECT_EQ(r.status, 0);
  EXPECT_GE(server_->tls_failures(), 1u);
  close_client(forged);
}

TEST_F(Https, ClientRefusesAServerItCannotVerify) {
  std::string err;
  auto stranger = TlsContext::client(certs_.stranger_ca_file(), &err);
  HttpClient wary(&loop_, *clock_);
  wary.use_tls(stranger.get());
  auto r = fetch(wary, {.method = "GET", .url = base_ + "/hello"});
  EXPECT_EQ(r.error, UV_EPROTO);
  EXPECT_NE(r.error_text.find("certificate"), std::string::npos) << r.error_text;
  close_client(wary);
}

TEST_F(Https, PlainHttpOnATlsPortIsClosedAndTheServerKeepsServing) {
  auto plain = fetch({.method = "GET", .url = "http://127.0.0.1:" + std::to_string(server_->port()) + "/hello"});
  EXPECT_NE(plain.error, 0);
  EXPECT_EQ(plain.status, 0);
  EXPECT_EQ(server_->tls_failures(), 1u);
  EXPECT_EQ(fetch({.method = "GET", .url = base_ + "/hello"}).body, "hello");
}

}  // namespace
}  // namespace uvsched
