// The HttpServer in-process with test handlers: asynchronous answers, streams,
// back-pressure and shutdown, seen from raw sockets on the test thread.
#include "reactor/http_server.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "reactor/sliced_response.h"
#include "tests/support/loop_thread.h"
#include "tests/support/raw_http.h"

namespace uvsched::test {
namespace {

// Echoes bodies, answers /slow after a timer, opens a stream on /stream.
class TestHandler : public RequestHandler {
 public:
  explicit TestHandler(Clock& clock) : clock_(clock) {}

  // "/essential" is served even past the connection limit.
  HeadCheck check_head(const HttpRequest& head) override {
    HeadCheck check;
    check.serve_over_limit = head.path() == "/essential";
    return check;
  }

  void handle(HttpRequest& req, Responder res) override {
    std::string path(req.path());
    if (path == "/echo") {
      HttpResponse r;
      r.body = req.body;
      res.send(std::move(r));
    } else if (path == "/slow") {
      auto t = std::shared_ptr<Timer>(clock_.new_timer());
      timers_.push_back(t);
      t->start(100, [res]() mutable {
        HttpResponse r;
        r.body = "slow";
        res.send(std::move(r));
      });
    } else if (path == "/stream") {
      stream_ = res.start_stream(200, "application/x-ndjson");
      stream_.on_close([this] { ++stream_closed; });
      stream_.write("{\"type\":\"SUBSCRIBED\"}\n");
    } else if (path == "/big") {
      // 48 MiB in one answer: far more than a socket's buffers hold.
      HttpResponse r;
      r.body.assign(48 * 1024 * 1024, 'b');
      res.send(std::move(r));
    } else if (path == "/sliced") {
      // 64 MiB made 64 KiB at a time: "0123456789abcdef" repeated, counted as made.
      auto left = std::make_shared<size_t>(64 * 1024 * 1024);
      send_sliced(
          res, 200, "text/plain",
          [this, left](std::string& out, size_t budget) {
            ++slices_made;
            size_t n = std::min(budget, *left);
            for (size_t i = 0; i < n; ++i) out += "0123456789abcdef"[i % 16];
            *left -= n;
            return *left > 0;
          },
          nullptr, 64 * 1024);
    } else if (path == "/header") {
      const std::string* v = req.header("X-A");
      HttpResponse r;
      r.body = v ? "[" + *v + "]" : "none";
      res.send(std::move(r));
    } else if (path == "/held-alone") {
      res.answer_alone();
      held_.push_back(res);
      ++handled;
    } else if (path == "/drop") {
      // The handler forgets to answer: the Responder's last copy goes here.
    } else if (path == "/held") {
      held_.push_back(res);  // answered when the test releases it
    } else if (path == "/never") {
      parked_.push_back(res);  // answered only at shutdown
    } else {
      ++handled;
      HttpResponse r;
      r.body = path;
      res.send(std::move(r));
    }
  }

  Clock& clock_;
  std::atomic<int> slices_made{0};
  std::atomic<int> handled{0};
  ResponseStream stream_;
  std::atomic<int> stream_closed{0};
  std::vector<std::shared_ptr<Timer>> timers_;
  std::vector<Responder> parked_;
  std::vector<Responder> held_;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    signal(SIGPIPE, SIG_IGN);  // as the daemon does: peers that hang up are errors, not signals
    log_configure(LogLevel::kOff, LogFormat::kText);
    start();
  }
  // A new server (the old one shut down), its limits changed by `adjust`.
  void restart(const std::function<void(ServerLimits&)>& adjust) {
    shutdown();
    start(adjust);
  }
  void start(const std::function<void(ServerLimits&)>& adjust = nullptr) {
    loop_.run([this, &adjust] {
      clock_ = std::make_unique<LoopClock>(loop_.loop());
      handler_ = std::make_unique<TestHandler>(*clock_);
      ServerLimits limits;
      limits.stream_max_buffered = 256 * 1024;
      limits.write_high_water = 64 * 1024;
      limits.shutdown_grace_ms = 300;
      limits.max_buffered_output = 64 * 1024 * 1024;
      if (adjust) adjust(limits);
      server_ = std::make_unique<HttpServer>(loop_.loop(), *clock_, limits, *handler_);
      ASSERT_EQ(server_->listen("127.0.0.1", 0), 0);
      port_ = server_->port();
    });
  }
  void TearDown() override { shutdown(); }

  void shutdown() {
    if (!server_) return;
    std::atomic<bool> done{false};
    loop_.run([&] { server_->shutdown([&] { done = true; }); });
    for (int i = 0; i < 1000 && !done; ++i) loop_.run([] {});  // each run is one loop turn
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done && std::chrono::steady_clock::now() < deadline) loop_.run([] {});
    ASSERT_TRUE(done);
    loop_.run([&] {
      handler_->stream_ = ResponseStream();
      handler_->parked_.clear();
      handler_->held_.clear();
      handler_->timers_.clear();
      server_.reset();
      handler_.reset();
      clock_.reset();
    });
  }

  // A new connection on which `GET path` was sent; its answer in *answer.
  RawConnection get_on_new_connection(const std::string& path, std::optional<RawResponse>* answer) {
    RawConnection c;
    EXPECT_TRUE(c.connect(port_));
    EXPECT_TRUE(c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"));
    *answer = c.read_response();
    return c;
  }
  // Waits (10 s at most) until `n` connections past the limit are open; how many are.
  size_t wait_over_limit(size_t n) {
    size_t open = 0;
    auto deadline = std::chrono::steady_clock::now() + 10s;
    do {
      loop_.run([&] { open = server_->over_limit_count(); });
    } while (open != n && std::chrono::steady_clock::now() < deadline);
    return open;
  }
  // Waits (10 s at most) until the handler holds `n` unanswered requests; how many it holds.
  size_t wait_held(size_t n) {
    size_t held = 0;
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (held < n && std::chrono::steady_clock::now() < deadline) loop_.run([&] { held = handler_->held_.size(); });
    return held;
  }

  LoopThread loop_;
  std::unique_ptr<LoopClock> clock_;
  std::unique_ptr<TestHandler> handler_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
};

// Past max_connections a connection is held to read one request: served if
// the handler says it must be (a caller that would take the 503 as its
// answer), else 503; either way it closes after that one answer. Past the
// reserve of such connections, 503 at once.
TEST_F(HttpServerTest, PastTheConnectionLimitOnlyWhatMustBeServedIsServed) {
  restart([](ServerLimits& l) {
    l.max_connections = 2;
    l.over_limit_reserve = 2;
  });
  std::vector<RawConnection> within;
  for (int i = 0; i < 2; ++i) {
    std::optional<RawResponse> r;
    within.push_back(get_on_new_connection("/a", &r));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
  }
  std::optional<RawResponse> served;
  RawConnection must = get_on_new_connection("/essential", &served);
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200);
  EXPECT_EQ(served->body, "/essential");
  EXPECT_EQ(served->header("Connection"), "close");
  EXPECT_TRUE(must.wait_closed());

  std::optional<RawResponse> busy;
  RawConnection other = get_on_new_connection("/b", &busy);
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->status, 503);
  EXPECT_EQ(busy->header("Retry-After"), "1");
  EXPECT_TRUE(other.wait_closed());
  ASSERT_EQ(wait_over_limit(0), 0u);

  // Two that send nothing fill the reserve: the next is answered 503 before it asks.
  std::vector<RawConnection> silent(2);
  for (auto& c : silent) ASSERT_TRUE(c.connect(port_));
  ASSERT_EQ(wait_over_limit(2), 2u);
  RawConnection past;
  ASSERT_TRUE(past.connect(port_));
  auto at_once = past.read_response();
  ASSERT_TRUE(at_once);
  EXPECT_EQ(at_once->status, 503);
  loop_.run([this] { EXPECT_EQ(handler_->handled.load(), 3) << "/a twice and /essential"; });

  // One of them gone, the reserve has room again.
  silent[0].close();
  ASSERT_EQ(wait_over_limit(1), 1u);
  std::optional<RawResponse> later;
  RawConnection again = get_on_new_connection("/essential", &later);
  ASSERT_TRUE(later);
  EXPECT_EQ(later->status, 200);
}

TEST_F(HttpServerTest, ChunkedBodyArrivesWhole) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"));
  ASSERT_TRUE(c.send("4\r\nuvsc\r\n"));
  ASSERT_TRUE(c.send("3\r\nhed\r\n0\r\n\r\n"));
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "uvsched");
}

TEST_F(HttpServerTest, ExpectContinueIsAnswered) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n"));
  ASSERT_TRUE(c.read_until("100 Continue\r\n\r\n"));
  ASSERT_TRUE(c.send("hi"));
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "hi");
}

TEST_F(HttpServerTest, AsyncAnswersKeepPipelineOrder) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  ASSERT_TRUE(c.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\nGET /fast HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto first = c.read_response();
  auto second = c.read_response();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->body, "slow");
  EXPECT_EQ(second->body, "/fast");
}

TEST_F(HttpServerTest, AnswersFinishedInOneTurnShareOneWrite) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  ASSERT_TRUE(
      c.send("GET /held HTTP/1.1\r\nHost: t\r\n\r\nGET /held HTTP/1.1\r\nHost: t\r\n\r\n"
             "GET /held HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_EQ(wait_held(3), 3u);
  uint64_t before = 0, after = 0;
  loop_.run([&] {
    before = server_->socket_writes();
    for (auto& res : handler_->held_) res.send(HttpResponse{200, "text/plain", {}, "held"});
  });
  for (int i = 0; i < 3; ++i) {
    auto r = c.read_response();
    ASSERT_TRUE(r) << "answer " << i;
    EXPECT_EQ(r->body, "held");
  }
  loop_.run([&] { after = server_->socket_writes(); });
  EXPECT_EQ(after - before, 1u) << "three answers ready in one turn went out in separate writes";
}

// on_sent says true once the answer's bytes are in the socket, and false when
// they never will be: the peer gone before the answer, or before its flush.
TEST_F(HttpServerTest, AnAnswersOnSentSaysWhetherItWasHandedToTheSocket) {
  std::vector<bool> told;  // on the loop thread
  auto told_so_far = [&] {
    std::vector<bool> t;
    loop_.run([&] { t = told; });
    return t;
  };
  auto on_sent = [&](bool handed) { told.push_back(handed); };
  RawConnection read, gone, cut;
  size_t n = 0;
  for (auto* c : {&read, &gone, &cut}) {  // held_ in this order
    ASSERT_TRUE(c->connect(port_));
    ASSERT_TRUE(c->send("GET /held HTTP/1.1\r\nHost: t\r\n\r\n"));
    ASSERT_EQ(wait_held(++n), n);
  }
  // Handed over: told after the turn's flush, not by send() itself.
  loop_.run([&] {
    handler_->held_[0].send(HttpResponse{200, "text/plain", {}, "read"}, on_sent);
    EXPECT_TRUE(told.empty()) << "told before the flush";
  });
  auto r = read.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "read");
  EXPECT_EQ(told_so_far(), std::vector<bool>{true});
  // The peer reset the connection before the answer: told false at once. (A
  // half-close is still answered, and that answer is handed over.)
  struct linger reset_on_close = {1, 0};
  ASSERT_EQ(setsockopt(gone.fd(), SOL_SOCKET, SO_LINGER, &reset_on_close, sizeof reset_on_close), 0);
  gone.close();
  auto deadline = std::chrono::steady_clock::now() + 10s;
  bool left = false;
  while (!left && std::chrono::steady_clock::now() < deadline) loop_.run([&] { left = handler_->held_[1].peer_left(); });
  ASSERT_TRUE(left);
  loop_.run([&] { handler_->held_[1].send(HttpResponse{200, "text/plain", {}, "gone"}, on_sent); });
  EXPECT_EQ(told_so_far(), (std::vector<bool>{true, false}));
  // Cut in the turn it was answered, before the flush: told false.
  loop_.run([&] {
    handler_->held_[2].send(HttpResponse{200, "text/plain", {}, "cut"}, on_sent);
    EXPECT_TRUE(Responder::close_connection(handler_->held_[2].watch()));
  });
  EXPECT_TRUE(cut.wait_closed());
  EXPECT_EQ(told_so_far(), (std::vector<bool>{true, false, false}));
  // Answered already: false. In process (no connection): true, at once.
  loop_.run([&] {
    handler_->held_[0].send(HttpResponse{200, "text/plain", {}, "again"}, on_sent);
    Responder(std::make_shared<detail::Exchange>()).send(HttpResponse{200, "text/plain", {}, "x"}, on_sent);
  });
  EXPECT_EQ(told_so_far(), (std::vector<bool>{true, false, false, false, true}));
}

TEST_F(HttpServerTest, ARequestDroppedUnansweredGets500AndThePipelineMovesOn) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  ASSERT_TRUE(c.send("GET /drop HTTP/1.1\r\nHost: t\r\n\r\nGET /next HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto dropped = c.read_response();
  auto next = c.read_response();
  ASSERT_TRUE(dropped && next);
  EXPECT_EQ(dropped->status, 500);
  EXPECT_EQ(next->body, "/next");
}

TEST_F(HttpServerTest, StreamDeliversChunksAndReportsPeerClose) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  ASSERT_TRUE(c.send("POST /stream HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n"));
  auto head = c.read_until("SUBSCRIBED");
  ASSERT_TRUE(head);
  EXPECT_NE(head->find("Transfer-Encoding: chunked"), std::string::npos);
  loop_.run([this] { EXPECT_TRUE(handler_->stream_.write("{\"type\":\"HEARTBEAT\"}\n")); });
  ASSERT_TRUE(c.read_until("HEARTBEAT"));
  c.close();
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (handler_->stream_closed == 0 && std::chrono::steady_clock::now() < deadline) loop_.run([] {});
  EXPECT_EQ(handler_->stream_closed, 1);
  loop_.run([this] { EXPECT_FALSE(handler_->stream_.write("late\n")); });
}

// A malformed request pipelined behind a stream can never be answered; the
// server must still notice the reader hang up (found by fuzz_http_path: the
// stream stayed open because reading had stopped at the parse error).
TEST_F(HttpServerTest, AHangUpIsNoticedBehindAStreamEvenAfterGarbage) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  ASSERT_TRUE(c.send("POST /stream HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n(garbage\r\n\r\n"));
  ASSERT_TRUE(c.read_until("SUBSCRIBED"));
  ASSERT_EQ(::shutdown(c.fd(), SHUT_WR), 0);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (handler_->stream_closed == 0 && std::chrono::steady_clock::now() < deadline) loop_.run([] {});
  EXPECT_EQ(handler_->stream_closed, 1);
  EXPECT_TRUE(c.wait_closed());
}

// A connection cut in the same turn as an answer was queued for it: the
// turn's flush must skip it (under ASan, a use after free otherwise).
TEST_F(HttpServerTest, AConnectionCutWithAnAnswerQueuedIsSkipped) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  ASSERT_TRUE(c.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(c.read_until("SUBSCRIBED"));
  bool cut = false;
  loop_.run([&] {
    ASSERT_TRUE(handler_->stream_.write("{\"type\":\"HEARTBEAT\"}\n"));  // queued for the next turn
    cut = !handler_->stream_.write(std::string(300 * 1024, 'x'));        // over stream_max_buffered: cut now
  });
  EXPECT_TRUE(cut);
  EXPECT_TRUE(c.wait_closed());
  RawConnection again;  // and the server goes on
  ASSERT_TRUE(again.connect(port_));
  ASSERT_TRUE(again.send("GET /after HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto r = again.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "/after");
}

TEST_F(HttpServerTest, StreamEndTerminatesTheBodyAndTheConnectionLivesOn) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  ASSERT_TRUE(c.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(c.read_until("SUBSCRIBED"));
  loop_.run([this] { handler_->stream_.end(); });
  ASSERT_TRUE(c.read_until("0\r\n\r\n"));
  ASSERT_TRUE(c.send("GET /after HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "/after");
}

TEST_F(HttpServerTest, AStreamWhoseReaderStallsIsCutNotBuffered) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  int rcvbuf = 4096;
  setsockopt(c.fd(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  ASSERT_TRUE(c.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(c.read_until("SUBSCRIBED"));
  // The reader never reads again; the writer pushes 64 MiB at most.
  bool cut = false;
  const std::string chunk(16 * 1024, 'e');
  loop_.run([&] {
    for (int i = 0; i < 4096 && !cut; ++i) cut = !handler_->stream_.write(chunk);
  });
  EXPECT_TRUE(cut);
}

// A header folded over two lines (obs-fold) is refused, as RFC 9112 allows,
// rather than joined; a value that merely arrives in pieces, a byte per read,
// is whole.
TEST_F(HttpServerTest, FoldedHeadersAreRefusedAndSplitOnesAreWhole) {
  for (const char* fold : {"\r\n two", "\r\n\ttwo"}) {
    RawConnection c;
    ASSERT_TRUE(c.connect(port_));
    ASSERT_TRUE(c.send(std::string("GET /header HTTP/1.1\r\nHost: t\r\nX-A: one") + fold + "\r\n\r\n"));
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_NE(r->body.find("obs-fold"), std::string::npos) << r->body;
  }
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  const std::string request = "GET /header HTTP/1.1\r\nHost: t\r\nX-A: Bearer a b  c\r\n\r\n";
  for (char ch : request) {
    ASSERT_TRUE(c.send(std::string(1, ch)));
    std::this_thread::sleep_for(1ms);  // so that each byte is a read of its own, not a wait for an event
  }
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "[Bearer a b  c]");
}

// Readers that do not read cannot take the daemon's memory: past the cap on
// output waiting for readers, the connection holding the most is closed and
// the others are served in full.
TEST_F(HttpServerTest, ReadersThatDoNotReadAreCutAtTheOutputCap) {
  RawConnection first, second;
  ASSERT_TRUE(first.connect(port_));
  ASSERT_TRUE(first.send("GET /big HTTP/1.1\r\nHost: t\r\n\r\n"));
  size_t buffered = 0;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (buffered < 32u * 1024 * 1024 && std::chrono::steady_clock::now() < deadline) {
    loop_.run([&] { buffered = server_->buffered_output(); });
  }
  ASSERT_GE(buffered, 32u * 1024 * 1024) << "the first answer should wait in the server, not in the socket";
  ASSERT_TRUE(second.connect(port_));
  ASSERT_TRUE(second.send("GET /big HTTP/1.1\r\nHost: t\r\n\r\n"));
  uint64_t closures = 0;
  deadline = std::chrono::steady_clock::now() + 10s;
  while (closures == 0 && std::chrono::steady_clock::now() < deadline) {
    loop_.run([&] { closures = server_->output_cap_closures(); });
  }
  ASSERT_EQ(closures, 1u);
  loop_.run([&] { buffered = server_->buffered_output(); });
  EXPECT_LE(buffered, 64u * 1024 * 1024);
  // One of them was cut short; the other gets every byte.
  auto a = first.read_response(20s);
  auto b = second.read_response(20s);
  EXPECT_NE(a.has_value(), b.has_value());
  const auto& whole = a ? a : b;
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->body.size(), 48u * 1024 * 1024);
}

// A sliced answer is made as it is read: a reader that stops reading stops
// its making, and one that reads gets every byte in order.
TEST_F(HttpServerTest, ASlicedAnswerIsMadeAsItIsRead) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  ASSERT_TRUE(c.send("GET /sliced HTTP/1.1\r\nHost: t\r\n\r\n"));
  // Not reading: slices are made until the sockets' buffers (a few MiB on
  // loopback) and the high-water mark (64 KiB here) are full, then no more,
  // however many turns pass.
  int made = -1;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  for (bool settled = false; !settled && std::chrono::steady_clock::now() < deadline;) {
    loop_.run([&] { made = handler_->slices_made; });
    settled = made > 0;
    for (int i = 0; i < 200 && settled; ++i) loop_.run([&] { settled = handler_->slices_made == made; });
  }
  EXPECT_GT(made, 0);
  EXPECT_LT(made, 512) << "most of a 64 MiB answer was made for a reader that reads nothing";
  auto r = c.read_response(20s);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->body.size(), 64u * 1024 * 1024);
  for (size_t i = 0; i < r->body.size(); i += 4099) ASSERT_EQ(r->body[i], "0123456789abcdef"[i % 16]) << i;
  EXPECT_EQ(handler_->slices_made, 1024);
  // The connection takes the next request once the answer is out.
  ASSERT_TRUE(c.send("GET /after HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto next = c.read_response();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, "/after");
}

// An answer that asked to be alone holds back pipelined requests: they are
// not read, nor handled, until it is written.
TEST_F(HttpServerTest, PipelinedRequestsWaitBehindAnAnswerThatIsAlone) {
  RawConnection c;
  ASSERT_TRUE(c.connect(port_));
  ASSERT_TRUE(
      c.send("GET /held-alone HTTP/1.1\r\nHost: t\r\n\r\nGET /one HTTP/1.1\r\nHost: t\r\n\r\n"
             "GET /two HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_EQ(wait_held(1), 1u);
  for (int i = 0; i < 100; ++i) loop_.run([] {});
  EXPECT_EQ(handler_->handled, 1) << "a request behind the lone answer was handled before it was written";
  loop_.run([&] { handler_->held_[0].send(HttpResponse{200, "text/plain", {}, "alone"}); });
  for (const char* want : {"alone", "/one", "/two"}) {
    auto r = c.read_response();
    ASSERT_TRUE(r) << want;
    EXPECT_EQ(r->body, want);
  }
  EXPECT_EQ(handler_->handled, 3);
}

TEST_F(HttpServerTest, ShutdownEndsStreamsAndLetsInflightFinish) {
  RawConnection stream;
  ASSERT_TRUE(stream.connect(port_));
  ASSERT_TRUE(stream.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(stream.read_until("SUBSCRIBED"));
  RawConnection slow;
  ASSERT_TRUE(slow.connect(port_));
  ASSERT_TRUE(slow.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n"));
  RawConnection never;
  ASSERT_TRUE(never.connect(port_));
  ASSERT_TRUE(never.send("GET /never HTTP/1.1\r\nHost: t\r\n\r\n"));
  // Make sure both requests reached their handlers before shutting down.
  auto deadline = std::chrono::steady_clock::now() + 10s;
  size_t parked = 0;
  while (parked == 0 && std::chrono::steady_clock::now() < deadline)
    loop_.run([&] { parked = handler_->parked_.size(); });
  ASSERT_EQ(parked, 1u);

  shutdown();
  EXPECT_TRUE(stream.read_until("0\r\n\r\n"));  // the stream was ended cleanly
  auto r = slow.read_response();                // the in-flight request was answered
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "slow");
  EXPECT_EQ(r->header("Connection"), "close");
  EXPECT_TRUE(never.wait_closed());  // the grace period ran out for the one never answered
}

}  // namespace
}  // namespace uvsched::test
