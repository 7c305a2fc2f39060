// An HTTP/1.1 server on one libuv loop: keep-alive, pipelining (responses in
// request order), chunked request bodies, long-lived chunked response streams,
// size limits, slow-request and idle time-outs, write back-pressure and a
// graceful shutdown. It knows nothing of routes: every complete request goes
// to one RequestHandler, which answers now or later through a Responder.
#pragma once

#include <uv.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "reactor/clock.h"
#include "reactor/http_message.h"
#include "reactor/next_turn.h"

namespace uvsched {

struct ServerLimits {
  size_t max_header_bytes = 16 * 1024;  // request line + headers; over it: 414 / 431
  size_t max_body_bytes = 1024 * 1024;  // over it: 413
  size_t max_connections = 10'000;      // over it: 503 and close (but see over_limit_reserve)
  // Of those, how many may be connections that have not yet shown valid
  // credentials (every connection starts so): a flood of them cannot push out
  // those that have. At it, the oldest such connection is closed for the new
  // one. Such a connection also gets no
  // longer idle than a request may take. 0: no separate budget (and no
  // credentials to show).
  size_t max_unauthenticated_connections = 1'000;
  // Of the connections past max_connections, how many may be held until
  // their first request's head is read, to serve those the handler says must
  // be (HeadCheck::serve_over_limit: callers that take any answer, a 503
  // too, as final); the rest of them are answered 503, and each closes after
  // one answer. Past the reserve: 503 at once. 0: no reserve.
  size_t over_limit_reserve = 64;
  int listen_backlog = 4096;             // thousands of agents may (re)connect at once; the kernel caps it at somaxconn
  uint64_t idle_timeout_ms = 60'000;     // keep-alive connection with nothing to do
  uint64_t request_timeout_ms = 10'000;  // first byte of a request to its last: else 408
  uint64_t shutdown_grace_ms = 5'000;    // in-flight requests get this long on shutdown
  size_t max_pipelined = 64;             // requests in flight on one connection before reading pauses
  size_t write_high_water = 256 * 1024;  // unread response bytes before reading pauses
  size_t stream_max_buffered = 8 * 1024 * 1024;  // an event stream lagging this far is cut
  // Response bytes waiting for their readers, all connections together: past
  // it, the connection holding the most is closed, so readers that do not
  // read cannot take the daemon's memory. 0: no cap.
  size_t max_buffered_output = 256 * 1024 * 1024;
};

class HttpConnection;
class TlsContext;

namespace detail {
// One request/response pair on a connection; shared by the connection's queue
// and the handler's Responder, so either may outlive the other.
struct Exchange {
  enum class State : uint8_t { kPending, kReady, kStreaming, kEnded };
  HttpConnection* conn = nullptr;  // cleared when the connection closes
  bool peer_left = false;          // the connection closed before this was answered
  State state = State::kPending;
  bool keep_alive = true;
  bool head = false;
  std::string_view method;
  std::string_view label;  // route label for metrics; must outlive the server
  uint64_t start_ns = 0;
  std::string out;                    // serialized bytes not yet handed to the socket
  std::function<void()> on_close;     // streams: the peer went away or the server stops
  std::function<void()> on_drained;   // streams: once, when the reader has caught up (ResponseStream::when_drained)
  std::function<void(bool)> on_sent;  // once: the answer was handed to the socket (true) or never will be
  bool alone = false;  // no later request on the connection is read until this one is answered and written
  size_t held = 0;     // streams: bytes still to be made into output (ResponseStream::hold)
};

// The handlers' hold on an exchange, shared by every copy of its Responder and
// ResponseStream. When the last copy goes, a request nobody answered gets a
// 500 and an open stream is ended, so a forgetful handler cannot wedge a
// connection's pipeline.
struct ExchangeRef {
  std::shared_ptr<Exchange> ex;
  explicit ExchangeRef(std::shared_ptr<Exchange> e) : ex(std::move(e)) {}
  ~ExchangeRef();
  ExchangeRef(const ExchangeRef&) = delete;
  ExchangeRef& operator=(const ExchangeRef&) = delete;
};
}  // namespace detail

class ResponseStream;

// The handler's half of an exchange. Copyable; send() once.
class Responder {
 public:
  Responder() = default;
  explicit Responder(std::shared_ptr<detail::Exchange> ex)
      : ref_(std::make_shared<detail::ExchangeRef>(std::move(ex))) {}

  void send(HttpResponse&& response);
  // As send(), then `on_sent` once: true when the answer's bytes were handed
  // to the socket (or, with no connection, are ready to read), false when
  // they never will be (the peer left, or it was answered already). For work
  // that must not happen unless the asker has its answer: KubeML's job takes
  // the next update it reads as this answer's, so one sent without the answer
  // would be taken as a later epoch's.
  void send(HttpResponse&& response, std::function<void(bool handed)> on_sent);
  // Starts a chunked response that stays open until end() or the peer leaves.
  ResponseStream start_stream(int status, std::string_view content_type, const HttpHeaders& extra = {});
  void set_label(std::string_view label);
  // No later request on this connection is read (pipelined ones wait in the
  // socket) until this answer is written out: for answers so large that a
  // client pipelining many of them would pile them up in memory.
  void answer_alone();
  // Says how many bytes this answer will hold before it is read (an estimate
  // of the snapshot a large list is made from), before making it: they count
  // with the output waiting for readers, and at the cap the connection
  // holding the most is closed (this one, perhaps: check connected() before
  // the work). send() makes it 0; a stream goes on with ResponseStream::hold.
  void hold(size_t bytes);
  // False once the connection is gone or closing: nothing sent would be read.
  bool connected() const;
  // The connection this came on is gone or closing (an exchange made in
  // process, with none, has no peer to leave).
  bool peer_left() const;
  bool answered() const { return !ref_ || ref_->ex->state != detail::Exchange::State::kPending; }
  // A handle that does not keep the exchange alive; with it the connection
  // can be closed later (a revoked token's open stream).
  std::weak_ptr<detail::Exchange> watch() const {
    return ref_ ? std::weak_ptr<detail::Exchange>(ref_->ex) : std::weak_ptr<detail::Exchange>();
  }
  // Closes the connection of a watched exchange if it is still open; false if it was gone.
  static bool close_connection(const std::weak_ptr<detail::Exchange>& watched);

 private:
  std::shared_ptr<detail::ExchangeRef> ref_;
};

class ResponseStream {
 public:
  ResponseStream() = default;
  explicit ResponseStream(std::shared_ptr<detail::ExchangeRef> ref) : ref_(std::move(ref)) {}

  // Sends one chunk. False when the stream is closed, or when its reader lags
  // so far behind that the connection was cut.
  bool write(std::string_view data) { return write({data}); }
  // One chunk of several pieces (an event and its newline), not joined first.
  bool write(std::initializer_list<std::string_view> pieces);
  void end();
  bool open() const;
  // Calls `cb` once, on a later loop turn, when what was written so far has
  // been handed to the socket and the socket's backlog is under the server's
  // write_high_water: the pace at which a large answer is made, a slice at a
  // time, as its reader takes it. Not called if the stream closes first.
  void when_drained(std::function<void()> cb);
  // Says how many bytes the stream still holds to send (the snapshot a large
  // answer is made from): they count with the output waiting for readers, so
  // that readers that stop reading are cut at the cap with their snapshots.
  // Ending the stream makes it 0.
  void hold(size_t bytes);
  // Called once when the peer disconnects or the server shuts down.
  void on_close(std::function<void()> cb);

 private:
  std::shared_ptr<detail::ExchangeRef> ref_;
};

// What a handler makes of a request's head (line and headers) before any of
// its body is read: a refusal is sent at once and the connection closed
// without reading the body, so a client without credentials costs no memory
// for what it sends. `authenticated`: the head carried valid credentials (the
// connection then leaves the unauthenticated budget and its short time-outs).
struct HeadCheck {
  std::optional<HttpResponse> refusal;
  bool authenticated = false;
  std::string principal;  // the handler's name for whose credentials they were; kept in HttpRequest
  // Served even on a connection past the server's max_connections, which
  // otherwise answers 503 (ServerLimits::over_limit_reserve).
  bool serve_over_limit = false;
};

class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  virtual HeadCheck check_head(const HttpRequest& head) {
    (void)head;
    return {};
  }
  virtual void handle(HttpRequest& request, Responder responder) = 0;
  // The answer to a request the server refuses before handle() (a body or
  // head too large, a malformed request, one too slow to arrive), worded as
  // the client reads errors; `head` holds what was read of it. By default
  // {"error": message}.
  virtual HttpResponse refusal(int status, std::string_view message, const HttpRequest& head);
};

// Reported once per response (for streams: when the stream starts).
struct ResponseRecord {
  std::string_view label;  // "" when no route claimed the request
  std::string_view method;
  int status;
  double seconds;
};
using ResponseObserver = std::function<void(const ResponseRecord&)>;

class HttpServer {
 public:
  HttpServer(uv_loop_t* loop, Clock& clock, ServerLimits limits, RequestHandler& handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens. Returns 0 or a libuv error code.
  int listen(const std::string& host, uint16_t port);
  uint16_t port() const { return port_; }
  void set_observer(ResponseObserver observer) { observer_ = std::move(observer); }
  // Every connection accepted from now on speaks TLS with this context, which
  // must outlive the server, or be replaced by another first (sessions made
  // from it keep their own reference).
  void use_tls(const TlsContext* tls) { tls_ = tls; }
  // Closes the open connections whose client certificate the current context
  // no longer trusts (a CRL revoked it, its CA was dropped); returns how many.
  size_t close_untrusted_peers();
  // Connections closed because their TLS handshake or records were bad.
  uint64_t tls_failures() const { return tls_failures_; }

  // Stops accepting, lets in-flight requests finish (up to shutdown_grace_ms),
  // ends streams, closes every connection, then calls done.
  void shutdown(std::function<void()> done);

  size_t connection_count() const { return connections_.size(); }
  // Of those, the ones past max_connections, held to read one request (over_limit_reserve).
  size_t over_limit_count() const { return over_limit_count_; }
  size_t unauthenticated_count() const { return probation_.size(); }
  // Writes handed to sockets so far: with the requests served, how well
  // answers are batched.
  uint64_t socket_writes() const { return socket_writes_; }
  // Response bytes waiting for their readers now, and the connections closed
  // so far for holding the most of them when the total reached its cap.
  size_t buffered_output() const { return buffered_output_; }
  uint64_t output_cap_closures() const { return output_cap_closures_; }
  // Connections the listener could not take (out of file descriptors, the
  // process's or the system's): libuv closes them unanswered.
  uint64_t accept_failures() const { return accept_failures_; }
  const ServerLimits& limits() const { return limits_; }

 private:
  friend class HttpConnection;
  friend class Responder;
  static void on_connection(uv_stream_t* listener, int status);
  void reject_over_limit();
  static HttpResponse too_many_connections();
  void forget(HttpConnection* conn);
  // Responses completed outside a read are written once per loop turn, so
  // answers that finish together (one group commit) share one write.
  void defer_flush(HttpConnection* conn);
  void cancel_flush(HttpConnection* conn);
  void flush_deferred();
  void maybe_finish_shutdown();
  void report(const detail::Exchange& ex, int status);
  void note_tls_failure(const std::string& reason);
  void note_accept_failure(int status);

  uv_loop_t* loop_;
  Clock& clock_;
  ServerLimits limits_;
  RequestHandler& handler_;
  ResponseObserver observer_;
  const TlsContext* tls_ = nullptr;
  uint64_t tls_failures_ = 0;
  uint64_t socket_writes_ = 0;
  uv_tcp_t listener_;
  bool listening_ = false;
  bool listener_closed_ = true;
  bool shutting_down_ = false;
  uint16_t port_ = 0;
  std::unordered_set<HttpConnection*> connections_;
  size_t over_limit_count_ = 0;  // of connections_, those past max_connections
  // Connections that have not shown valid credentials, oldest first (only
  // with a budget for them): at the budget the oldest is closed for the new.
  std::list<HttpConnection*> probation_;
  void note_authenticated(HttpConnection* conn);
  void leave_probation(HttpConnection* conn);
  std::vector<HttpConnection*> to_flush_;  // null where a connection closed first
  NextTurn flush_turn_;
  std::unique_ptr<Timer> grace_timer_;
  // Bytes handed to libuv and not yet written, over all connections; kept
  // under limits_.max_buffered_output by closing the largest holder.
  size_t buffered_output_ = 0;
  void note_buffered(size_t added);
  uint64_t output_cap_closures_ = 0;
  uint64_t accept_failures_ = 0;
  uint64_t accept_failures_logged_ = 0;  // of accept_failures_, those a log line has told
  uint64_t accept_failure_logged_ms_ = 0;
  std::function<void()> shutdown_done_;
  std::array<char, 64 * 1024> read_buffer_;  // one loop thread: reads are consumed before the next
};

}  // namespace uvsched
