#include "reactor/http_server.h"

#include <cstring>

#include "reactor/http_connection.h"
#include "reactor/http_wire.h"
#include "reactor/json_writer.h"
#include "reactor/log.h"

namespace uvsched {

// ---- Responder / ResponseStream --------------------------------------------

namespace detail {
ExchangeRef::~ExchangeRef() {
  if (ex->conn == nullptr) return;
  if (ex->state == Exchange::State::kPending) {
    Responder(ex).send(HttpResponse{500, "application/json", {}, R"({"error":"request dropped unanswered"})"});
  } else if (ex->state == Exchange::State::kStreaming) {
    ex->state = Exchange::State::kEnded;
    ex->on_close = nullptr;
    ex->on_drained = nullptr;
    ex->conn->set_held(*ex, 0);
    ex->out += kLastChunk;
    ex->conn->exchange_updated();
  }
}
}  // namespace detail

bool Responder::close_connection(const std::weak_ptr<detail::Exchange>& watched) {
  std::shared_ptr<detail::Exchange> ex = watched.lock();
  if (!ex || ex->conn == nullptr) return false;
  ex->conn->close();
  return true;
}

void Responder::send(HttpResponse&& response) {
  if (!ref_) return;
  detail::Exchange& ex = *ref_->ex;
  if (ex.state != detail::Exchange::State::kPending) return;
  ex.state = detail::Exchange::State::kReady;
  HttpConnection* conn = ex.conn;
  if (conn != nullptr && !conn->keep_alive_allowed()) ex.keep_alive = false;
  // Serialized even without a connection: a detached exchange is how tests
  // and in-process callers read a handler's answer.
  append_response(ex.out, response, ex.keep_alive, ex.head);
  if (conn == nullptr) return;
  if (ex.held > 0) conn->set_held(ex, 0);
  conn->server()->report(ex, response.status);
  conn->exchange_updated();
}

void Responder::send(HttpResponse&& response, std::function<void(bool handed)> on_sent) {
  if (!ref_ || ref_->ex->state != detail::Exchange::State::kPending) return on_sent(false);
  detail::Exchange& ex = *ref_->ex;
  if (ex.conn == nullptr) {  // in process, or the peer left
    bool handed = !ex.peer_left;
    send(std::move(response));
    return on_sent(handed);
  }
  ex.on_sent = std::move(on_sent);  // before send(): a flush in it hands the bytes over
  send(std::move(response));
}

ResponseStream Responder::start_stream(int status, std::string_view content_type, const HttpHeaders& extra) {
  if (!ref_) return ResponseStream();
  detail::Exchange& ex = *ref_->ex;
  if (ex.state != detail::Exchange::State::kPending) return ResponseStream();
  ex.state = detail::Exchange::State::kStreaming;
  HttpConnection* conn = ex.conn;
  if (conn == nullptr) return ResponseStream(ref_);
  append_stream_head(ex.out, status, content_type, extra, ex.keep_alive);
  conn->server()->report(ex, status);
  conn->exchange_updated();
  return ResponseStream(ref_);
}

void Responder::set_label(std::string_view label) {
  if (ref_) ref_->ex->label = label;
}

void Responder::answer_alone() {
  if (ref_) ref_->ex->alone = true;
}

void Responder::hold(size_t bytes) {
  if (connected() && !answered()) ref_->ex->conn->set_held(*ref_->ex, bytes);
}

bool Responder::connected() const { return ref_ && ref_->ex->conn != nullptr && !ref_->ex->conn->closing(); }

bool Responder::peer_left() const {
  return ref_ && (ref_->ex->peer_left || (ref_->ex->conn != nullptr && ref_->ex->conn->closing()));
}

bool ResponseStream::open() const {
  return ref_ && ref_->ex->conn != nullptr && !ref_->ex->conn->closing() &&
         ref_->ex->state == detail::Exchange::State::kStreaming;
}

bool ResponseStream::write(std::initializer_list<std::string_view> pieces) {
  if (!open()) return false;
  detail::Exchange& ex = *ref_->ex;
  HttpConnection* conn = ex.conn;
  size_t size = 0;
  for (std::string_view p : pieces) size += p.size();
  if (conn->backlog() + ex.out.size() + size > conn->server()->limits().stream_max_buffered) {
    conn->close();  // a reader this far behind would grow our memory without bound
    return false;
  }
  append_chunk(ex.out, pieces);
  conn->exchange_updated();
  return true;
}

void ResponseStream::end() {
  if (!open()) return;
  detail::Exchange& ex = *ref_->ex;
  ex.state = detail::Exchange::State::kEnded;
  ex.on_close = nullptr;
  ex.on_drained = nullptr;
  ex.conn->set_held(ex, 0);
  ex.out += kLastChunk;
  ex.conn->exchange_updated();
}

void ResponseStream::hold(size_t bytes) {
  if (open()) ref_->ex->conn->set_held(*ref_->ex, bytes);
}

void ResponseStream::when_drained(std::function<void()> cb) {
  if (!open()) return;
  ref_->ex->on_drained = std::move(cb);
  ref_->ex->conn->exchange_updated();  // the check is made on the connection's next flush
}

void ResponseStream::on_close(std::function<void()> cb) {
  if (!ref_) return;
  if (ref_->ex->conn == nullptr) {
    if (cb) cb();
    return;
  }
  ref_->ex->on_close = std::move(cb);
}

// ---- HttpServer ------------------------------------------------------------

HttpServer::HttpServer(uv_loop_t* loop, Clock& clock, ServerLimits limits, RequestHandler& handler)
    : loop_(loop),
      clock_(clock),
      limits_(limits),
      handler_(handler),
      flush_turn_(loop, [this] { flush_deferred(); }),
      grace_timer_(clock.new_timer()) {}

HttpServer::~HttpServer() = default;

int HttpServer::listen(const std::string& host, uint16_t port) {
  sockaddr_storage addr{};
  std::string h = host == "localhost" ? "127.0.0.1" : host;
  int rc = h.find(':') != std::string::npos ? uv_ip6_addr(h.c_str(), port, reinterpret_cast<sockaddr_in6*>(&addr))
                                            : uv_ip4_addr(h.c_str(), port, reinterpret_cast<sockaddr_in*>(&addr));
  if (rc != 0) return rc;

  uv_tcp_init(loop_, &listener_);
  listener_.data = this;
  listener_closed_ = false;
  rc = uv_tcp_bind(&listener_, reinterpret_cast<const sockaddr*>(&addr), 0);
  if (rc == 0)
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), limits_.listen_backlog, &HttpServer::on_connection);
  if (rc != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(&listener_),
             [](uv_handle_t* h) { static_cast<HttpServer*>(h->data)->listener_closed_ = true; });
    return rc;
  }
  sockaddr_storage bound{};
  int len = sizeof bound;
  uv_tcp_getsockname(&listener_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  listening_ = true;
  return 0;
}

void HttpServer::on_connection(uv_stream_t* listener, int status) {
  auto* self = static_cast<HttpServer*>(listener->data);
  if (status < 0) {
    self->note_accept_failure(status);
    return;
  }
  if (self->shutting_down_) return;
  bool over_limit = self->connections_.size() >= self->limits_.max_connections;
  if (over_limit && self->over_limit_count_ >= self->limits_.over_limit_reserve) {
    self->reject_over_limit();
    return;
  }
  auto* conn = new HttpConnection(self);
  self->connections_.insert(conn);
  if (over_limit) {
    // Held for one request, its idle time short, out of the unauthenticated
    // budget: a flood past the limit must not push out those within it.
    conn->over_limit_ = true;
    ++self->over_limit_count_;
  } else if (size_t budget = self->limits_.max_unauthenticated_connections; budget > 0) {
    if (self->probation_.size() >= budget) {
      HttpConnection* oldest = self->probation_.front();
      self->leave_probation(oldest);
      oldest->close();  // it showed nothing in all this time
    }
    conn->probation_it_ = self->probation_.insert(self->probation_.end(), conn);
    conn->on_probation_ = true;
  }
  if (uv_accept(listener, reinterpret_cast<uv_stream_t*>(conn->tcp())) != 0) {
    conn->close();
    return;
  }
  conn->start();
}

HttpResponse RequestHandler::refusal(int status, std::string_view message, const HttpRequest& head) {
  (void)head;
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  JsonWriter w;
  w.begin_object().key("error").value(message).end_object();
  r.body = w.take();
  return r;
}

HttpResponse HttpServer::too_many_connections() {
  HttpResponse r;
  r.status = 503;
  r.content_type = "application/json";
  r.headers.push_back({"Retry-After", "1"});
  r.body = R"({"error":"too many connections"})";
  return r;
}

void HttpServer::reject_over_limit() {
  static const std::string kBusy = [] {
    std::string out;
    append_response(out, too_many_connections(), false, false);
    return out;
  }();
  auto* tcp = new uv_tcp_t;
  uv_tcp_init(loop_, tcp);
  if (uv_accept(reinterpret_cast<uv_stream_t*>(&listener_), reinterpret_cast<uv_stream_t*>(tcp)) == 0) {
    uv_buf_t buf = uv_buf_init(const_cast<char*>(kBusy.data()), kBusy.size());
    uv_try_write(reinterpret_cast<uv_stream_t*>(tcp), &buf, 1);  // best effort: the socket is fresh
  }
  uv_close(reinterpret_cast<uv_handle_t*>(tcp), [](uv_handle_t* h) { delete reinterpret_cast<uv_tcp_t*>(h); });
}

void HttpServer::leave_probation(HttpConnection* conn) {
  if (!conn->on_probation_) return;
  probation_.erase(conn->probation_it_);
  conn->on_probation_ = false;
}

void HttpServer::note_authenticated(HttpConnection* conn) { leave_probation(conn); }

void HttpServer::forget(HttpConnection* conn) {
  leave_probation(conn);
  if (conn->over_limit_) --over_limit_count_;
  connections_.erase(conn);
  maybe_finish_shutdown();
}

void HttpServer::defer_flush(HttpConnection* conn) {
  conn->flush_slot_ = to_flush_.size();
  to_flush_.push_back(conn);
  flush_turn_.schedule();
}

// A connection closes (its close callback runs) only after the turn's flush
// has gone through the list it was queued in: its slot is still its own.
void HttpServer::cancel_flush(HttpConnection* conn) {
  if (conn->flush_slot_ < to_flush_.size() && to_flush_[conn->flush_slot_] == conn)
    to_flush_[conn->flush_slot_] = nullptr;
}

void HttpServer::flush_deferred() {
  std::vector<HttpConnection*> due;
  due.swap(to_flush_);
  for (HttpConnection* conn : due) {
    if (conn != nullptr) conn->deferred_flush();
  }
}

void HttpServer::report(const detail::Exchange& ex, int status) {
  if (!observer_) return;
  double seconds = static_cast<double>(uv_hrtime() - ex.start_ns) / 1e9;
  observer_(ResponseRecord{ex.label, ex.method, status, seconds});
}

void HttpServer::shutdown(std::function<void()> done) {
  if (shutting_down_) return;
  shutting_down_ = true;
  shutdown_done_ = std::move(done);
  if (listening_) {
    listening_ = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&listener_), [](uv_handle_t* h) {
      auto* self = static_cast<HttpServer*>(h->data);
      self->listener_closed_ = true;
      self->maybe_finish_shutdown();
    });
  }
  std::vector<HttpConnection*> conns(connections_.begin(), connections_.end());
  for (auto* c : conns) c->begin_shutdown();
  grace_timer_->start(limits_.shutdown_grace_ms, [this] {
    std::vector<HttpConnection*> left(connections_.begin(), connections_.end());
    for (auto* c : left) c->close();
  });
  maybe_finish_shutdown();
}

void HttpServer::maybe_finish_shutdown() {
  if (!shutting_down_ || !listener_closed_ || !connections_.empty() || !shutdown_done_) return;
  grace_timer_->stop();
  auto done = std::move(shutdown_done_);
  shutdown_done_ = nullptr;
  done();
}

// Debug level: a port scanner or a plain-HTTP client would otherwise flood the log.
size_t HttpServer::close_untrusted_peers() {
  if (tls_ == nullptr) return 0;
  std::vector<HttpConnection*> untrusted;
  for (HttpConnection* c : connections_) {
    if (!c->closing_ && c->tls_ && c->tls_->handshake_done() && !tls_->still_trusts(*c->tls_)) untrusted.push_back(c);
  }
  for (HttpConnection* c : untrusted) c->close();
  return untrusted.size();
}

// Over the cap, the connection with the most bytes waiting is closed: the
// reader that reads least is the one that costs the most.
void HttpServer::note_buffered(size_t added) {
  buffered_output_ += added;
  size_t cap = limits_.max_buffered_output;
  while (cap > 0 && buffered_output_ > cap) {
    HttpConnection* largest = nullptr;
    for (HttpConnection* c : connections_) {
      if (!c->closing_ && (largest == nullptr || c->output_held() > largest->output_held())) largest = c;
    }
    if (largest == nullptr || largest->output_held() == 0) return;
    ++output_cap_closures_;
    log_warn("output_cap_reached_closing_largest_reader")
        .kv("connection_bytes", static_cast<uint64_t>(largest->output_held()))
        .kv("total_bytes", static_cast<uint64_t>(buffered_output_))
        .kv("cap_bytes", static_cast<uint64_t>(cap));
    largest->close();
  }
}

void HttpServer::note_tls_failure(const std::string& reason) {
  ++tls_failures_;
  log_debug("tls connection refused").kv("reason", reason);
}

// A flood of them would be a flood of lines: the first is told at once, the
// rest at most every ten seconds, counted.
void HttpServer::note_accept_failure(int status) {
  ++accept_failures_;
  constexpr uint64_t kEveryMs = 10'000;
  uint64_t now = clock_.now_ms();
  if (accept_failures_logged_ != 0 && now - accept_failure_logged_ms_ < kEveryMs) return;
  log_warn("accept_failed")
      .kv("error", uv_err_name(status))
      .kv("dropped", accept_failures_ - accept_failures_logged_)
      .kv("connections", static_cast<uint64_t>(connections_.size()))
      .kv("why", status == UV_EMFILE || status == UV_ENFILE
                     ? "out of file descriptors: connections are closed unanswered until some close (raise the open "
                       "files limit, or lower --max-connections below it)"
                     : "the kernel refused to hand over the connection");
  accept_failures_logged_ = accept_failures_;
  accept_failure_logged_ms_ = now;
}

}  // namespace uvsched
