#include "reactor/http_connection.h"

#include <algorithm>
#include <utility>

#include "reactor/http_wire.h"
#include "reactor/tls.h"
#include "reactor/url.h"

namespace uvsched {
namespace {

// Room for a request's headers up front: clients send 3 to 8, and growing the
// vector one doubling at a time moved every header each time.
constexpr size_t kUsualHeaderCount = 8;

HttpConnection* from_parser(llhttp_t* p) { return static_cast<HttpConnection*>(p->data); }

struct WriteRequest {
  uv_write_t req;
  std::string data;
};

// RFC 9112 3.2: an HTTP/1.1 request names its Host once, an HTTP/1.0 one at
// most once. A request with none or two is what a proxy in front may read
// otherwise than we do (two Hosts, two targets), so it is refused as Go's
// server refuses it.
const char* host_error(const llhttp_t* p, const HttpHeaders& headers) {
  int hosts = 0;
  for (const HttpHeader& h : headers) hosts += iequals(h.name, "Host") ? 1 : 0;
  if (hosts > 1) return "too many Host headers";
  if (hosts == 0 && p->http_major == 1 && p->http_minor >= 1) return "missing required Host header";
  return nullptr;
}

}  // namespace

HttpConnection::HttpConnection(HttpServer* server) : server_(server), timer_(server->clock_.new_timer()) {
  static const llhttp_settings_t settings = [] {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_message_begin = &HttpConnection::on_message_begin;
    s.on_url = &HttpConnection::on_url;
    s.on_header_field = &HttpConnection::on_header_field;
    s.on_header_value = &HttpConnection::on_header_value;
    s.on_headers_complete = &HttpConnection::on_headers_complete;
    s.on_body = &HttpConnection::on_body;
    s.on_message_complete = &HttpConnection::on_message_complete;
    return s;
  }();
  llhttp_init(&parser_, HTTP_REQUEST, &settings);
  parser_.data = this;
  uv_tcp_init(server->loop_, &tcp_);
  tcp_.data = this;
}

void HttpConnection::start() {
  uv_tcp_nodelay(&tcp_, 1);
  sockaddr_storage peer{};
  int len = sizeof peer;
  if (uv_tcp_getpeername(&tcp_, reinterpret_cast<sockaddr*>(&peer), &len) == 0) {
    char text[INET6_ADDRSTRLEN] = {};
    if (peer.ss_family == AF_INET6) {
      uv_ip6_name(reinterpret_cast<const sockaddr_in6*>(&peer), text, sizeof text);
    } else {
      uv_ip4_name(reinterpret_cast<const sockaddr_in*>(&peer), text, sizeof text);
    }
    peer_address_ = text;
  }
  if (server_->tls_) tls_ = std::make_unique<TlsSession>(*server_->tls_);
  update_reading();
  update_timer();
}

void HttpConnection::close() {
  if (closing_) return;
  closing_ = true;
  timer_->stop();
  // A TLS peer hears close_notify, when the socket takes it now: nothing
  // waits for it, and a peer that stopped reading gets none.
  std::string alert;
  if (tls_ && writes_in_flight_ == 0 && tls_->close_notify(&alert)) {
    uv_buf_t buf = uv_buf_init(alert.data(), alert.size());
    uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1);
  }
  // Its queued writes are cancelled by the close: they leave the server's
  // count now, so that a cap's victim is not counted while it goes.
  server_->buffered_output_ -= queued_bytes_ + held_bytes_;
  queued_bytes_ = 0;
  held_bytes_ = 0;
  // What a large answer is made from (its snapshot, held by its next slice's
  // callback) goes now, not with the close callback: the cap that chose this
  // connection must see the memory back within the turn.
  for (auto& ex : exchanges_) ex->on_drained = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &HttpConnection::on_closed);
}

void HttpConnection::on_closed(uv_handle_t* h) {
  auto* self = static_cast<HttpConnection*>(h->data);
  if (self->flush_deferred_) self->server_->cancel_flush(self);
  for (auto& ex : self->exchanges_) {
    ex->conn = nullptr;
    ex->peer_left = true;
    ex->on_drained = nullptr;  // it may hold the stream that holds the exchange
    if (auto cb = std::move(ex->on_close)) cb();
    if (auto cb = std::move(ex->on_sent)) cb(false);
  }
  self->exchanges_.clear();
  self->server_->forget(self);
  delete self;
}

void HttpConnection::begin_shutdown() {
  no_more_requests_ = true;
  for (auto& ex : exchanges_) {
    if (ex->state == detail::Exchange::State::kStreaming) {
      ex->state = detail::Exchange::State::kEnded;
      ex->out += kLastChunk;
      if (auto cb = std::move(ex->on_close)) cb();
    }
  }
  flush();
  update_reading();
  if (drained()) close();
}

void HttpConnection::set_held(detail::Exchange& ex, size_t bytes) {
  if (closing_) return;  // (its bytes left the count at close)
  size_t before = ex.held;
  ex.held = bytes;
  held_bytes_ = held_bytes_ - before + bytes;
  server_->buffered_output_ -= before;
  server_->note_buffered(bytes);  // may close this connection, or another
}

bool HttpConnection::keep_alive_allowed() const { return !server_->shutting_down_; }

bool HttpConnection::drained() const { return exchanges_.empty() && writes_in_flight_ == 0; }

size_t HttpConnection::backlog() const {
  return uv_stream_get_write_queue_size(reinterpret_cast<const uv_stream_t*>(&tcp_));
}

// ---- reading -------------------------------------------------------------

void HttpConnection::on_alloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
  auto* self = static_cast<HttpConnection*>(h->data);
  *buf = uv_buf_init(self->server_->read_buffer_.data(), self->server_->read_buffer_.size());
}

void HttpConnection::on_read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
  auto* self = static_cast<HttpConnection*>(s->data);
  if (nread > 0 && self->tls_) {
    self->receive_tls(std::string_view(buf->base, static_cast<size_t>(nread)));
  } else if (nread > 0) {
    self->in_read_ = true;
    self->feed(buf->base, static_cast<size_t>(nread));
    self->in_read_ = false;
    self->flush();
  } else if (nread == UV_EOF) {
    // Half-close: answer what was asked, then close. A partial request is
    // dropped, and a stream's reader that hung up is gone for good.
    self->no_more_requests_ = true;
    self->in_message_ = false;
    for (const auto& ex : self->exchanges_) {
      if (ex->state == detail::Exchange::State::kStreaming) {
        self->close();
        return;
      }
    }
  } else if (nread < 0) {
    self->close();
    return;
  }
  if (self->closing_) return;
  if (self->no_more_requests_ && self->drained()) {
    self->close();
    return;
  }
  self->update_reading();
  self->update_timer();
}

// Ciphertext in: handshake replies go straight back, plaintext to the parser.
// A peer that fails the handshake (or sends plain HTTP) gets the alert, if
// any, and is closed.
void HttpConnection::receive_tls(std::string_view cipher) {
  std::string plain, reply;
  bool ok = tls_->receive(cipher, &plain, &reply);
  if (!reply.empty()) write_raw(std::move(reply));
  if (closing_) return;  // the output cap chose it
  if (!ok) {
    server_->note_tls_failure(tls_->error());
    close();
    return;
  }
  if (plain.empty()) return;
  in_read_ = true;
  feed(plain.data(), plain.size());
  in_read_ = false;
  flush();
}

void HttpConnection::feed(const char* data, size_t len) {
  if (no_more_requests_) return;  // after an error or Connection: close, later bytes are ignored
  input_begin_ = data;
  input_end_ = data + len;
  llhttp_errno_t err = llhttp_execute(&parser_, data, len);
  if (err == HPE_OK) return;
  if (err == HPE_PAUSED) {
    const char* pos = llhttp_get_error_pos(&parser_);
    paused_input_.assign(pos, static_cast<size_t>(data + len - pos));
    parser_paused_ = true;
    return;
  }
  if (err == HPE_PAUSED_UPGRADE) {
    no_more_requests_ = true;  // protocol upgrades are not offered: answer, then close
    return;
  }
  if (bad_head_ != nullptr) {
    fail(400, std::string("malformed HTTP request: ") + bad_head_);
  } else if (limit_status_ != 0) {
    fail(limit_status_, limit_status_ == 413 ? "request body too large: limit is " +
                                                   std::to_string(server_->limits_.max_body_bytes) + " bytes"
                        : limit_status_ == 414 ? "request URI too long"
                                               : "request header fields too large");
  } else {
    std::string message = "malformed HTTP request: ";
    const char* reason = llhttp_get_error_reason(&parser_);
    message += reason ? reason : llhttp_errno_name(err);
    fail(400, message);
  }
}

bool HttpConnection::count_header_bytes(size_t len, int status) {
  header_bytes_ += len;
  if (header_bytes_ <= server_->limits_.max_header_bytes) return true;
  limit_status_ = status;
  return false;
}

int HttpConnection::on_message_begin(llhttp_t* p) {
  auto* self = from_parser(p);
  self->request_ = std::make_unique<HttpRequest>();
  self->request_->headers.reserve(kUsualHeaderCount);
  self->header_value_next_ = false;
  self->value_started_ = false;
  self->header_bytes_ = 0;
  self->in_message_ = true;
  self->message_started_ms_ = self->server_->clock_.now_ms();
  return HPE_OK;
}

int HttpConnection::on_url(llhttp_t* p, const char* at, size_t len) {
  auto* self = from_parser(p);
  if (!self->count_header_bytes(len, 414)) return HPE_USER;
  self->request_->target.append(at, len);
  return HPE_OK;
}

int HttpConnection::on_header_field(llhttp_t* p, const char* at, size_t len) {
  auto* self = from_parser(p);
  if (!self->count_header_bytes(len, 431)) return HPE_USER;
  auto& headers = self->request_->headers;
  if (headers.empty() || self->header_value_next_) {
    headers.emplace_back();
    self->header_value_next_ = false;
  }
  self->value_started_ = false;
  headers.back().name.append(at, len);
  return HPE_OK;
}

int HttpConnection::on_header_value(llhttp_t* p, const char* at, size_t len) {
  auto* self = from_parser(p);
  if (!self->count_header_bytes(len, 431)) return HPE_USER;
  if (self->value_started_ && !(self->value_piece_cut_ && at == self->input_begin_)) {
    // A second piece after a line end: the value went on on the next line.
    self->bad_head_ = "a header folded over more than one line (obs-fold)";
    return HPE_USER;
  }
  self->value_started_ = true;
  self->value_piece_cut_ = at + len == self->input_end_;
  self->header_value_next_ = true;
  if (!self->request_->headers.empty()) self->request_->headers.back().value.append(at, len);
  return HPE_OK;
}

int HttpConnection::on_headers_complete(llhttp_t* p) {
  auto* self = from_parser(p);
  const auto& limits = self->server_->limits_;
  if ((p->flags & F_CONTENT_LENGTH) && p->content_length > limits.max_body_bytes) {
    self->limit_status_ = 413;
    return -1;
  }
  if ((self->bad_head_ = host_error(p, self->request_->headers)) != nullptr) return -1;
  to_origin_form(self->request_->target);
  self->request_->method = llhttp_method_name(static_cast<llhttp_method_t>(p->method));
  if (self->tls_) self->request_->peer_name = self->tls_->peer_name();
  self->request_->peer_address = self->peer_address_;
  // Credentials are judged on the head, before a byte of the body is read
  // or "100 Continue" invites it.
  HeadCheck check = self->server_->handler_.check_head(*self->request_);
  if (self->over_limit_ && !check.refusal && !check.serve_over_limit) {
    check.refusal = HttpServer::too_many_connections();
  }
  if (check.authenticated && !self->authenticated_) {
    self->authenticated_ = true;
    self->server_->note_authenticated(self);
  }
  if (check.refusal) {
    self->refuse(std::move(*check.refusal));
    return HPE_PAUSED;  // the body is never read: the connection closes once the answer is out
  }
  self->request_->head_checked = true;
  self->request_->principal = std::move(check.principal);
  // curl and others wait for "100 Continue" before a large body; say it only
  // when no earlier response is still owed, so responses stay in order.
  const std::string* expect = self->request_->header("Expect");
  if (expect && iequals(*expect, "100-continue") && self->exchanges_.empty()) {
    self->write_out("HTTP/1.1 100 Continue\r\n\r\n");
  }
  return HPE_OK;
}

int HttpConnection::on_body(llhttp_t* p, const char* at, size_t len) {
  auto* self = from_parser(p);
  if (self->request_->body.size() + len > self->server_->limits_.max_body_bytes) {
    self->limit_status_ = 413;
    return HPE_USER;
  }
  self->request_->body.append(at, len);
  return HPE_OK;
}

int HttpConnection::on_message_complete(llhttp_t* p) {
  auto* self = from_parser(p);
  self->in_message_ = false;
  // Past the connection limit a connection serves one request and closes.
  self->request_->keep_alive = llhttp_should_keep_alive(p) != 0 && !self->over_limit_;
  self->dispatch();
  if (self->no_more_requests_) return HPE_PAUSED;  // Connection: close: ignore what follows
  return self->has_room() ? HPE_OK : HPE_PAUSED;
}

void HttpConnection::dispatch() {
  auto ex = std::make_shared<detail::Exchange>();
  ex->conn = this;
  ex->keep_alive = request_->keep_alive;
  ex->head = request_->method == "HEAD";
  ex->method = request_->method;
  ex->start_ns = uv_hrtime();
  if (!request_->keep_alive) no_more_requests_ = true;  // (peer_name was set with the head)
  exchanges_.push_back(ex);
  server_->handler_.handle(*request_, Responder(std::move(ex)));
  // The handler has what it needs (the next request would make a new one);
  // freed now, because a stream's connection (an agent's) may never send
  // another request and would hold the headers and body for its lifetime.
  request_.reset();
}

void HttpConnection::refuse(HttpResponse&& response) {
  auto ex = std::make_shared<detail::Exchange>();
  ex->conn = this;
  ex->keep_alive = false;
  std::string_view method = request_ ? request_->method : std::string_view();
  ex->head = method == "HEAD";
  ex->method = method.empty() ? std::string_view("-") : method;
  ex->start_ns = uv_hrtime();
  exchanges_.push_back(ex);
  no_more_requests_ = true;
  in_message_ = false;
  request_.reset();
  Responder(std::move(ex)).send(std::move(response));
}

void HttpConnection::fail(int status, std::string_view message) {
  // A failure between requests (a bad first byte, a TLS error) has no request.
  static const HttpRequest kNoRequest;
  refuse(server_->handler_.refusal(status, message, request_ ? *request_ : kNoRequest));
}

// ---- writing -------------------------------------------------------------

void HttpConnection::exchange_updated() {
  if (in_read_ || closing_ || flush_deferred_) return;  // on_read flushes once when it is done
  flush_deferred_ = true;
  server_->defer_flush(this);
}

void HttpConnection::deferred_flush() {
  flush_deferred_ = false;
  if (closing_) return;
  flush();
  if (closing_) return;
  if (no_more_requests_ && drained()) {
    close();
    return;
  }
  update_reading();
  update_timer();
}

void HttpConnection::flush() {
  if (closing_) return;
  std::string out;
  std::vector<std::function<void(bool)>> sent;  // told once the bytes are handed over
  while (!exchanges_.empty()) {
    auto& ex = *exchanges_.front();
    if (ex.state == detail::Exchange::State::kPending) break;
    if (out.empty()) {
      out = std::move(ex.out);
    } else {
      out += ex.out;
    }
    ex.out.clear();
    if (ex.state == detail::Exchange::State::kStreaming) break;  // later responses wait their turn
    if (!ex.keep_alive) no_more_requests_ = true;
    if (ex.on_sent) sent.push_back(std::move(ex.on_sent));
    ex.conn = nullptr;
    exchanges_.erase(exchanges_.begin());
  }
  if (!out.empty()) write_out(std::move(out));
  for (auto& cb : sent) cb(!closing_);  // a failed write closes the connection
  notify_drained();
}

void HttpConnection::notify_drained() {
  if (closing_ || exchanges_.empty()) return;
  detail::Exchange& ex = *exchanges_.front();
  if (ex.state != detail::Exchange::State::kStreaming || !ex.on_drained || !ex.out.empty()) return;
  if (backlog() >= server_->limits_.write_high_water) return;  // on_write asks again as the socket drains
  auto cb = std::move(ex.on_drained);
  ex.on_drained = nullptr;
  cb();  // what it writes goes out on the next turn's flush: other connections get the loop in between
}

void HttpConnection::write_out(std::string&& bytes) {
  if (!tls_) {
    write_raw(std::move(bytes));
    return;
  }
  std::string cipher;
  if (!tls_->send(bytes, &cipher)) {
    close();
    return;
  }
  if (!cipher.empty()) write_raw(std::move(cipher));
}

void HttpConnection::write_raw(std::string&& bytes) {
  ++server_->socket_writes_;
  uv_buf_t buf = uv_buf_init(bytes.data(), bytes.size());
  int n = uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1);
  if (n == static_cast<int>(bytes.size())) return;
  if (n < 0 && n != UV_EAGAIN) {
    close();
    return;
  }
  auto* w = new WriteRequest;
  w->data = n > 0 ? bytes.substr(static_cast<size_t>(n)) : std::move(bytes);
  size_t queued = w->data.size();
  w->req.data = this;
  buf = uv_buf_init(w->data.data(), w->data.size());
  int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1, &HttpConnection::on_write);
  if (rc != 0) {
    delete w;
    close();
    return;
  }
  ++writes_in_flight_;
  queued_bytes_ += queued;
  server_->note_buffered(queued);  // may close this connection, or another
}

void HttpConnection::on_write(uv_write_t* req, int status) {
  auto* w = reinterpret_cast<WriteRequest*>(req);
  auto* self = static_cast<HttpConnection*>(req->data);
  size_t written = w->data.size();
  delete w;
  --self->writes_in_flight_;
  if (self->closing_) return;  // (its bytes left the count at close)
  self->queued_bytes_ -= written;
  self->server_->buffered_output_ -= written;
  if (status < 0) {
    self->close();
    return;
  }
  const auto& exchanges = self->exchanges_;
  if (!exchanges.empty() && exchanges.front()->on_drained) self->exchange_updated();  // its turn may have come
  if (self->no_more_requests_ && self->drained()) {
    self->close();
    return;
  }
  self->update_reading();
  self->update_timer();
}

// ---- flow control and time-outs -------------------------------------------

// Room for another request: the pipeline is not full, the answers already
// made are being read, and no answer asked to be alone (answer_alone).
bool HttpConnection::has_room() const {
  const auto& limits = server_->limits_;
  if (exchanges_.size() >= limits.max_pipelined || backlog() >= limits.write_high_water) return false;
  return std::none_of(exchanges_.begin(), exchanges_.end(), [](const auto& ex) { return ex->alone; });
}

void HttpConnection::update_reading() {
  if (closing_) return;
  // Pipelined bytes parked while the window was full: parse them now, as
  // many windows' worth as the responses keep up with.
  while (parser_paused_ && has_room() && !no_more_requests_) {
    parser_paused_ = false;
    llhttp_resume(&parser_);
    std::string rest = std::move(paused_input_);
    paused_input_.clear();
    in_read_ = true;
    feed(rest.data(), rest.size());
    in_read_ = false;
    flush();
    if (closing_) return;
  }
  bool room = has_room();
  // Past the last request, an open stream still reads, only to notice its
  // reader hang up (the bytes are dropped): nothing else would tell us.
  bool streaming = std::any_of(exchanges_.begin(), exchanges_.end(),
                               [](const auto& ex) { return ex->state == detail::Exchange::State::kStreaming; });
  bool want = (room && !parser_paused_ && !no_more_requests_) || (no_more_requests_ && streaming);
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  if (want && !reading_) {
    if (uv_read_start(stream, &HttpConnection::on_alloc, &HttpConnection::on_read) == 0) reading_ = true;
  } else if (!want && reading_) {
    uv_read_stop(stream);
    reading_ = false;
  }
}

void HttpConnection::update_timer() {
  if (closing_) return;
  const auto& limits = server_->limits_;
  if (in_message_) {
    // Slow-request guard: the whole request must arrive within request_timeout.
    uint64_t elapsed = server_->clock_.now_ms() - message_started_ms_;
    uint64_t left = elapsed >= limits.request_timeout_ms ? 0 : limits.request_timeout_ms - elapsed;
    timer_->start(left, [this] {
      fail(408, "request not received in time");
      exchange_updated();
    });
  } else if (exchanges_.empty()) {
    // Idle keep-alive connection, or a peer that stopped reading our writes.
    // One that never showed credentials (a TLS handshake that never ends
    // too) gets no longer than a request would.
    bool on_probation = (limits.max_unauthenticated_connections > 0 && !authenticated_) || over_limit_;
    uint64_t idle = on_probation ? std::min(limits.idle_timeout_ms, limits.request_timeout_ms) : limits.idle_timeout_ms;
    timer_->start(idle, [this] { close(); });
  } else {
    timer_->stop();  // a handler or a stream owns the pace now
  }
}

}  // namespace uvsched
