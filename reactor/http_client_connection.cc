#include <cassert>
#include <cerrno>
#include <cstring>

#include <sys/socket.h>

#include "reactor/http_client_connection.h"
#include "reactor/log.h"

namespace uvsched {

HttpClient::Connection::Connection(HttpClient* client, Pool* pool)
    : client_(client), pool_(pool), timer_(client->clock_.new_timer()) {
  static const llhttp_settings_t settings = [] {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_status = &Connection::on_status;
    s.on_header_field = &Connection::on_header_field;
    s.on_header_value = &Connection::on_header_value;
    s.on_body = &Connection::on_body;
    s.on_message_complete = &Connection::on_message_complete;
    return s;
  }();
  settings_ = &settings;
  uv_tcp_init(client->loop_, &tcp_);
  tcp_.data = this;
}

void HttpClient::Connection::open() {
  const Url& u = pool_->base;
  sockaddr_storage addr{};
  if (uv_ip4_addr(u.host.c_str(), u.port, reinterpret_cast<sockaddr_in*>(&addr)) == 0 ||
      uv_ip6_addr(u.host.c_str(), u.port, reinterpret_cast<sockaddr_in6*>(&addr)) == 0) {
    connect(reinterpret_cast<sockaddr*>(&addr));
    return;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  resolving_ = true;
  gai_.data = this;
  std::string port = std::to_string(u.port);
  int rc = uv_getaddrinfo(client_->loop_, &gai_, &Connection::on_resolved, u.host.c_str(), port.c_str(), &hints);
  if (rc != 0) {
    resolving_ = false;
    fail(rc, "cannot resolve " + u.host);
  }
}

void HttpClient::Connection::start(std::unique_ptr<Pending> p) {
  for (auto& f : p->followers) queued_.push_back(std::move(f));
  p->followers.clear();
  got_bytes_ = false;
  wrote_ = false;
  begin(std::move(p));
  if (connected_) send();
}

void HttpClient::Connection::park() {
  timer_->start(client_->options_.idle_timeout_ms, [this] { close(); });
}

void HttpClient::Connection::abandon() {
  abandoned_ = true;
  for (auto& q : queued_) {  // pipelined behind the cancelled one: they may have been served
    ClientResponse r;
    r.error = UV_ECANCELED;
    r.error_text = "a request pipelined before it was cancelled";
    client_->defer(std::move(q->callback), std::move(r));
  }
  queued_.clear();
  close();
}

void HttpClient::Connection::fail(int error, std::string text) {
  close();
  std::vector<std::unique_ptr<Pending>> failed;
  if (!abandoned_ && current_) failed.push_back(std::move(current_));
  for (auto& q : queued_) failed.push_back(std::move(q));
  queued_.clear();
  for (auto& p : failed) {
    // A pooled connection the server closed as it was taken: mostly the
    // request never reached it, but the server may have read it and gone
    // down before answering, so only what is safe to repeat is repeated.
    if (reused_ && !got_bytes_ && !p->retried && error != UV_ETIMEDOUT && !client_->closing_ &&
        (p->replayable || !wrote_)) {
      p->retried = true;
      client_->dispatch(std::move(p));
      continue;
    }
    ClientResponse r;
    r.error = error;
    r.error_text = text;
    r.sent = wrote_;
    client_->defer(std::move(p->callback), std::move(r));
  }
}

bool HttpClient::Connection::closed_by_peer() const {
  uv_os_fd_t fd;
  if (closing_ || uv_fileno(reinterpret_cast<const uv_handle_t*>(&tcp_), &fd) != 0) return true;
  // An idle connection has nothing to read unless it is ending: its end of
  // file, a reset, or over TLS the close_notify alert before them (bytes
  // nobody asked for make consume() close it all the same).
  char byte;
  ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void HttpClient::Connection::close() {
  if (closing_) return;
  closing_ = true;
  timer_->stop();
  std::erase(pool_->idle, this);
  if (resolving_) uv_cancel(reinterpret_cast<uv_req_t*>(&gai_));
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &Connection::on_closed);
}

void HttpClient::Connection::connect(const sockaddr* addr) {
  connect_req_.data = this;
  int rc = uv_tcp_connect(&connect_req_, &tcp_, addr, &Connection::on_connected);
  if (rc != 0) fail(rc, std::string("connect: ") + uv_strerror(rc));
}

void HttpClient::Connection::send() {
  // Pipelined: one write for all. (Copied: a request that meets a closed
  // connection is sent again on another.)
  size_t size = current_->wire.size();
  for (const auto& q : queued_) size += q->wire.size();
  std::string wire;
  wire.reserve(size);
  wire += current_->wire;
  for (const auto& q : queued_) wire += q->wire;
  wrote_ = true;
  if (!tls_) {
    write_raw(std::move(wire));
  } else {
    std::string cipher;
    if (!tls_->send(wire, &cipher)) {
      fail(UV_EPROTO, "tls: " + tls_->error());
      return;
    }
    if (!cipher.empty()) write_raw(std::move(cipher));
  }
  if (closing_) return;
  if (!reading_) {
    uv_read_start(reinterpret_cast<uv_stream_t*>(&tcp_), &Connection::on_alloc, &Connection::on_read);
    reading_ = true;
  }
}

void HttpClient::Connection::write_raw(std::string bytes) {
  struct Write {
    uv_write_t req;
    std::string data;
    Connection* conn;
  };
  auto* w = new Write{{}, std::move(bytes), this};
  uv_buf_t buf = uv_buf_init(w->data.data(), w->data.size());
  int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1, [](uv_write_t* req, int status) {
    auto* w = reinterpret_cast<Write*>(req);
    Connection* self = w->conn;
    delete w;
    if (status < 0 && status != UV_ECANCELED && !self->closing_) self->fail(status, uv_strerror(status));
  });
  if (rc != 0) {
    delete w;
    fail(rc, uv_strerror(rc));
  }
}

bool HttpClient::Connection::start_tls() {
  const TlsContext* ctx = client_->tls_context();
  if (!ctx) {
    fail(UV_EPROTO, "tls: " + client_->tls_error_);
    return false;
  }
  tls_ = std::make_unique<TlsSession>(*ctx, pool_->base.host);
  std::string hello;
  if (!tls_->start(&hello)) {
    fail(UV_EPROTO, "tls: " + tls_->error());
    return false;
  }
  write_raw(std::move(hello));
  return !closing_;
}

void HttpClient::Connection::begin(std::unique_ptr<Pending> p) {
  current_ = std::move(p);
  response_ = ClientResponse{};
  header_value_next_ = false;
  header_bytes_ = 0;
  llhttp_init(&parser_, HTTP_RESPONSE, settings_);
  parser_.data = this;
  if (current_->request.timeout_ms > 0) {
    timer_->start(current_->request.timeout_ms, [this] { fail(UV_ETIMEDOUT, "request timed out"); });
  } else {
    timer_->stop();
  }
}

void HttpClient::Connection::complete() {
  if (abandoned_) return;
  auto p = std::move(current_);
  bool keep = llhttp_should_keep_alive(&parser_) != 0;
  ClientResponse r = std::move(response_);
  timer_->stop();
  reused_ = true;
  if (!queued_.empty() && keep && !closing_) {
    auto next = std::move(queued_.front());
    queued_.pop_front();
    begin(std::move(next));  // the next answer is on its way on this connection
  } else if (!queued_.empty()) {
    fail(UV_ECONNRESET, "the server closed the connection before answering pipelined requests");
  } else if (keep && !closing_) {
    client_->connection_idle(this);
  } else {
    close();
  }
  if (p && p->callback) p->callback(std::move(r));
}

void HttpClient::Connection::on_resolved(uv_getaddrinfo_t* req, int status, addrinfo* res) {
  auto* self = static_cast<Connection*>(req->data);
  self->resolving_ = false;
  if (status != 0 || res == nullptr) {
    if (res) uv_freeaddrinfo(res);
    if (!self->closing_) self->fail(status ? status : UV_EAI_NONAME, "cannot resolve " + self->pool_->base.host);
    return;
  }
  if (!self->closing_) self->connect(res->ai_addr);
  uv_freeaddrinfo(res);
}

void HttpClient::Connection::on_connected(uv_connect_t* req, int status) {
  auto* self = static_cast<Connection*>(req->data);
  if (self->closing_) return;
  if (status != 0) {
    self->fail(status, std::string("connect: ") + uv_strerror(status));
    return;
  }
  self->connected_ = true;
  uv_tcp_nodelay(&self->tcp_, 1);  // once: a setsockopt per request was a syscall for nothing
  if (self->pool_->base.scheme == "https" && !self->start_tls()) return;
  if (self->current_) self->send();
}

void HttpClient::Connection::on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) {
  static char buffer[64 * 1024];  // one loop thread; consumed before the next read
  *buf = uv_buf_init(buffer, sizeof buffer);
}

void HttpClient::Connection::on_read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
  auto* self = static_cast<Connection*>(s->data);
  if (self->closing_) return;
  if (nread > 0 && self->tls_) {
    std::string plain, reply;
    bool ok = self->tls_->receive(std::string_view(buf->base, static_cast<size_t>(nread)), &plain, &reply);
    if (!reply.empty()) self->write_raw(std::move(reply));
    if (!ok) {
      self->fail(UV_EPROTO, "tls: " + self->tls_->error());
      return;
    }
    if (!plain.empty() && !self->closing_) self->consume(plain.data(), plain.size());
    return;
  }
  if (nread > 0) {
    self->consume(buf->base, static_cast<size_t>(nread));
    return;
  }
  if (nread == 0) return;
  if (self->current_ && nread == UV_EOF && self->got_bytes_ && llhttp_finish(&self->parser_) == HPE_PAUSED) {
    self->complete();  // a body delimited by the end of the connection
    return;
  }
  if (self->current_) {
    self->fail(nread == UV_EOF ? UV_ECONNRESET : static_cast<int>(nread), "connection closed before the response");
  } else {
    self->close();  // an idle pooled connection the server closed
  }
}

void HttpClient::Connection::consume(const char* data, size_t len) {
  if (!current_) {  // bytes nobody asked for: the connection is no longer trustworthy
    close();
    return;
  }
  got_bytes_ = true;
  for (;;) {
    llhttp_errno_t err = llhttp_execute(&parser_, data, len);
    if (err == HPE_OK) return;
    if (err != HPE_PAUSED) {
      const char* reason = llhttp_get_error_reason(&parser_);
      fail(UV_EPROTO, std::string("bad response: ") + (reason ? reason : llhttp_errno_name(err)));
      return;
    }
    // An answer is whole; what follows it belongs to the next pipelined request.
    const char* end = llhttp_get_error_pos(&parser_);
    bool next = !queued_.empty();
    complete();
    if (!next || !current_ || closing_ || abandoned_ || end >= data + len) return;
    len -= static_cast<size_t>(end - data);
    data = end;
  }
}

void HttpClient::Connection::on_closed(uv_handle_t* h) {
  auto* self = static_cast<Connection*>(h->data);
  self->client_->connection_closed(self);
  delete self;
}

int HttpClient::Connection::on_status(llhttp_t* p, const char*, size_t) {
  from(p)->response_.status = p->status_code;
  return HPE_OK;
}

// Both header callbacks count what they keep against the cap.
bool HttpClient::Connection::headers_fit(llhttp_t* p, size_t len) {
  header_bytes_ += len;
  if (header_bytes_ <= client_->options_.max_response_header_bytes) return true;
  llhttp_set_error_reason(p, "response headers too large");
  return false;
}

int HttpClient::Connection::on_header_field(llhttp_t* p, const char* at, size_t len) {
  auto* self = from(p);
  if (!self->headers_fit(p, len)) return HPE_USER;
  auto& headers = self->response_.headers;
  if (headers.empty() || self->header_value_next_) {
    headers.emplace_back();
    self->header_value_next_ = false;
  }
  headers.back().name.append(at, len);
  return HPE_OK;
}

int HttpClient::Connection::on_header_value(llhttp_t* p, const char* at, size_t len) {
  auto* self = from(p);
  if (!self->headers_fit(p, len)) return HPE_USER;
  self->header_value_next_ = true;
  if (!self->response_.headers.empty()) self->response_.headers.back().value.append(at, len);
  return HPE_OK;
}

int HttpClient::Connection::on_body(llhttp_t* p, const char* at, size_t len) {
  auto* self = from(p);
  self->response_.status = p->status_code;
  if (self->current_ && self->current_->request.on_body) {
    self->current_->request.on_body(std::string_view(at, len));
    return self->closing_ ? HPE_USER : HPE_OK;  // the consumer may have cancelled us
  }
  if (self->response_.body.size() + len > self->client_->options_.max_response_bytes) {
    llhttp_set_error_reason(p, "response body too large");
    return HPE_USER;
  }
  self->response_.body.append(at, len);
  return HPE_OK;
}

int HttpClient::Connection::on_message_complete(llhttp_t* p) {
  from(p)->response_.status = p->status_code;
  return HPE_PAUSED;  // complete() runs after llhttp_execute returns
}

}  // namespace uvsched
