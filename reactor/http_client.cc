#include "reactor/http_client.h"

#include <cassert>

#include <llhttp.h>

#include <algorithm>
#include <cstring>

#include "reactor/http_wire.h"
#include "reactor/log.h"
#include "reactor/tls.h"

namespace uvsched {

struct HttpClient::Pending {
  RequestId id = 0;
  Url url;
  std::string pool_key;  // url.base(), made once: requests are compared and pooled by it
  ClientRequest request;
  ClientCallback callback;
  std::string wire;
  bool retried = false;
  // Pipelined behind this one, on its connection.
  std::vector<std::unique_ptr<Pending>> followers;
};

// One TCP connection of a pool. Lives until its close callback.
class HttpClient::Connection {
 public:
  Connection(HttpClient* client, Pool* pool) : client_(client), pool_(pool), timer_(client->clock_.new_timer()) {
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

  Pool* pool() const { return pool_; }
  bool busy() const { return current_ != nullptr && !abandoned_; }
  Pending* current() const { return abandoned_ ? nullptr : current_.get(); }

  void open() {
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

  void start(std::unique_ptr<Pending> p) {
    for (auto& f : p->followers) queued_.push_back(std::move(f));
    p->followers.clear();
    got_bytes_ = false;
    begin(std::move(p));
    if (connected_) send();
  }

  void park() {
    timer_->start(client_->options_.idle_timeout_ms, [this] { close(); });
  }

  // Closes without calling the current request's callback. The request is
  // kept until the close callback: abandon() may run inside its on_body.
  void abandon() {
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

  void fail(int error, std::string text) {
    close();
    std::vector<std::unique_ptr<Pending>> failed;
    if (!abandoned_ && current_) failed.push_back(std::move(current_));
    for (auto& q : queued_) failed.push_back(std::move(q));
    queued_.clear();
    for (auto& p : failed) {
      // A pooled connection the server had already closed: the request never
      // reached it, so it is safe to send once more on a fresh connection.
      if (reused_ && !got_bytes_ && !p->retried && error != UV_ETIMEDOUT && !client_->closing_) {
        p->retried = true;
        client_->dispatch(std::move(p));
        continue;
      }
      ClientResponse r;
      r.error = error;
      r.error_text = text;
      client_->defer(std::move(p->callback), std::move(r));
    }
  }

  void close() {
    if (closing_) return;
    closing_ = true;
    timer_->stop();
    std::erase(pool_->idle, this);
    if (resolving_) uv_cancel(reinterpret_cast<uv_req_t*>(&gai_));
    uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &Connection::on_closed);
  }

 private:
  void connect(const sockaddr* addr) {
    connect_req_.data = this;
    int rc = uv_tcp_connect(&connect_req_, &tcp_, addr, &Connection::on_connected);
    if (rc != 0) fail(rc, std::string("connect: ") + uv_strerror(rc));
  }

  void send() {
    // Pipelined: one write for all. (Copied: a request that meets a closed
    // connection is sent again on another.)
    size_t size = current_->wire.size();
    for (const auto& q : queued_) size += q->wire.size();
    std::string wire;
    wire.reserve(size);
    wire += current_->wire;
    for (const auto& q : queued_) wire += q->wire;
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

  // The write owns its bytes: a server may answer (and the request be
  // finished) before the write completes.
  void write_raw(std::string bytes) {
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

  // https: the handshake starts as soon as TCP is up; the request waits in the
  // session until it is done.
  bool start_tls() {
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

  // Readies the connection for `p`'s answer (the next one, when pipelined).
  void begin(std::unique_ptr<Pending> p) {
    current_ = std::move(p);
    response_ = ClientResponse{};
    header_value_next_ = false;
    llhttp_init(&parser_, HTTP_RESPONSE, settings_);
    parser_.data = this;
    if (current_->request.timeout_ms > 0) {
      timer_->start(current_->request.timeout_ms, [this] { fail(UV_ETIMEDOUT, "request timed out"); });
    } else {
      timer_->stop();
    }
  }

  void complete() {
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

  static void on_resolved(uv_getaddrinfo_t* req, int status, addrinfo* res) {
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

  static void on_connected(uv_connect_t* req, int status) {
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

  static void on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) {
    static char buffer[64 * 1024];  // one loop thread; consumed before the next read
    *buf = uv_buf_init(buffer, sizeof buffer);
  }

  static void on_read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
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

  void consume(const char* data, size_t len) {
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

  static void on_closed(uv_handle_t* h) {
    auto* self = static_cast<Connection*>(h->data);
    self->client_->connection_closed(self);
    delete self;
  }

  static Connection* from(llhttp_t* p) { return static_cast<Connection*>(p->data); }

  static int on_status(llhttp_t* p, const char*, size_t) {
    from(p)->response_.status = p->status_code;
    return HPE_OK;
  }
  static int on_header_field(llhttp_t* p, const char* at, size_t len) {
    auto* self = from(p);
    auto& headers = self->response_.headers;
    if (headers.empty() || self->header_value_next_) {
      headers.emplace_back();
      self->header_value_next_ = false;
    }
    headers.back().name.append(at, len);
    return HPE_OK;
  }
  static int on_header_value(llhttp_t* p, const char* at, size_t len) {
    auto* self = from(p);
    self->header_value_next_ = true;
    if (!self->response_.headers.empty()) self->response_.headers.back().value.append(at, len);
    return HPE_OK;
  }
  static int on_body(llhttp_t* p, const char* at, size_t len) {
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
  static int on_message_complete(llhttp_t* p) {
    from(p)->response_.status = p->status_code;
    return HPE_PAUSED;  // complete() runs after llhttp_execute returns
  }

  HttpClient* client_;
  Pool* pool_;
  const llhttp_settings_t* settings_ = nullptr;
  uv_tcp_t tcp_;
  uv_getaddrinfo_t gai_;
  uv_connect_t connect_req_;
  llhttp_t parser_;
  std::unique_ptr<Timer> timer_;
  std::unique_ptr<TlsSession> tls_;  // https only
  std::unique_ptr<Pending> current_;
  std::deque<std::unique_ptr<Pending>> queued_;  // pipelined behind current_, answered in order
  ClientResponse response_;
  bool header_value_next_ = false;
  bool got_bytes_ = false;
  bool connected_ = false;
  bool resolving_ = false;
  bool reading_ = false;
  bool reused_ = false;
  bool closing_ = false;
  bool abandoned_ = false;
};

HttpClient::HttpClient(uv_loop_t* loop, Clock& clock, ClientOptions options)
    : loop_(loop), clock_(clock), options_(options), defer_timer_(clock.new_timer()) {}

// Its connections own libuv handles that call back into it: close() must have
// finished (or none been opened) before it goes.
HttpClient::~HttpClient() { assert(open_connections() == 0 && "HttpClient destroyed before close() finished"); }

void HttpClient::use_tls(const TlsContext* tls) { tls_ = tls; }

bool HttpClient::prepare_tls(std::string* error) {
  if (tls_context() != nullptr) return true;
  *error = tls_error_;
  return false;
}

// Without a context of its own, https trusts the system's CAs (OpenSSL's
// default paths, which SSL_CERT_FILE and SSL_CERT_DIR can point elsewhere).
const TlsContext* HttpClient::tls_context() {
  if (tls_) return tls_;
  if (!default_tls_ && tls_error_.empty()) {
    default_tls_ = TlsContext::client("", &tls_error_);
    if (!default_tls_) log_warn("tls client context").kv("error", tls_error_);
  }
  return default_tls_.get();
}

size_t HttpClient::open_connections() const {
  size_t n = 0;
  for (const auto& [origin, pool] : pools_) n += pool.all.size();
  return n;
}

std::unique_ptr<HttpClient::Pending> HttpClient::make_pending(ClientRequest request, ClientCallback callback) {
  auto p = std::make_unique<Pending>();
  p->id = next_id_++;
  p->callback = std::move(callback);
  auto url = parse_url(request.url);
  if (closing_ || !url) {
    ClientResponse r;
    r.error = closing_ ? UV_ECANCELED : UV_EINVAL;
    r.error_text = closing_ ? "client is closing" : "bad URL: " + request.url;
    defer(std::move(p->callback), std::move(r));
    return nullptr;
  }
  p->url = std::move(*url);
  p->pool_key = p->url.base();
  append_request(p->wire, request.method, p->url.target, p->url.origin(), request.headers, request.body);
  p->request = std::move(request);
  p->request.body.clear();  // it is in the wire bytes now
  return p;
}

HttpClient::RequestId HttpClient::request(ClientRequest request, ClientCallback callback) {
  RequestId id = next_id_;
  if (auto p = make_pending(std::move(request), std::move(callback))) dispatch(std::move(p));
  return id;
}

std::vector<HttpClient::RequestId> HttpClient::pipeline(std::vector<std::pair<ClientRequest, ClientCallback>> requests) {
  std::vector<RequestId> ids;
  std::unique_ptr<Pending> head;
  for (auto& [request, callback] : requests) {
    ids.push_back(next_id_);
    auto p = make_pending(std::move(request), std::move(callback));
    if (!p) continue;
    if (!head) {
      head = std::move(p);
    } else if (p->pool_key == head->pool_key && !p->request.on_body && !head->request.on_body) {
      head->followers.push_back(std::move(p));
    } else {
      dispatch(std::move(p));  // another origin, or a stream: on its own
    }
  }
  if (head) dispatch(std::move(head));
  return ids;
}

void HttpClient::dispatch(std::unique_ptr<Pending> p) {
  Pool& pool = pools_[p->pool_key];
  if (pool.all.empty() && pool.waiting.empty()) pool.base = p->url;
  if (!pool.idle.empty()) {
    Connection* conn = pool.idle.back();
    pool.idle.pop_back();
    conn->start(std::move(p));
    return;
  }
  if (pool.all.size() < options_.max_connections_per_origin) {
    pool.base = p->url;
    auto* conn = new Connection(this, &pool);
    pool.all.push_back(conn);
    conn->start(std::move(p));
    conn->open();
    return;
  }
  pool.waiting.push_back(std::move(p));
}

void HttpClient::connection_idle(Connection* conn) {
  Pool& pool = *conn->pool();
  if (!pool.waiting.empty()) {
    auto p = std::move(pool.waiting.front());
    pool.waiting.pop_front();
    conn->start(std::move(p));
    return;
  }
  pool.idle.push_back(conn);
  conn->park();
}

void HttpClient::connection_closed(Connection* conn) {
  Pool& pool = *conn->pool();
  std::erase(pool.all, conn);
  std::erase(pool.idle, conn);
  // A waiting request may now have room for a connection of its own.
  if (!pool.waiting.empty() && !closing_) {
    auto p = std::move(pool.waiting.front());
    pool.waiting.pop_front();
    dispatch(std::move(p));
  }
  maybe_closed();
}

void HttpClient::cancel(RequestId id) {
  for (auto& [origin, pool] : pools_) {
    for (auto it = pool.waiting.begin(); it != pool.waiting.end(); ++it) {
      if ((*it)->id == id) {
        auto followers = std::move((*it)->followers);
        pool.waiting.erase(it);
        for (auto& f : followers) dispatch(std::move(f));  // still wanted, on their own
        return;
      }
    }
    for (Connection* conn : pool.all) {
      if (conn->current() && conn->current()->id == id) {
        conn->abandon();
        return;
      }
    }
  }
}

void HttpClient::defer(ClientCallback cb, ClientResponse&& r) {
  if (!cb) return;
  deferred_.emplace_back(std::move(cb), std::move(r));
  if (!defer_timer_->active()) defer_timer_->start(0, [this] { run_deferred(); });
}

void HttpClient::run_deferred() {
  auto batch = std::move(deferred_);
  deferred_.clear();
  for (auto& [cb, r] : batch) cb(std::move(r));
  maybe_closed();
}

void HttpClient::close(std::function<void()> done) {
  closing_ = true;
  closed_cb_ = std::move(done);
  for (auto& [origin, pool] : pools_) {
    while (!pool.waiting.empty()) {
      auto p = std::move(pool.waiting.front());
      pool.waiting.pop_front();
      for (auto& f : p->followers) {  // pipelined behind it: they were waiting too
        ClientResponse r;
        r.error = UV_ECANCELED;
        r.error_text = "client closed";
        defer(std::move(f->callback), std::move(r));
      }
      ClientResponse r;
      r.error = UV_ECANCELED;
      r.error_text = "client closed";
      defer(std::move(p->callback), std::move(r));
    }
    auto conns = pool.all;
    for (Connection* c : conns) {
      if (c->busy()) {
        c->fail(UV_ECANCELED, "client closed");
      } else {
        c->close();
      }
    }
  }
  maybe_closed();
}

void HttpClient::maybe_closed() {
  if (!closing_ || !closed_cb_ || open_connections() != 0 || !deferred_.empty()) return;
  auto cb = std::move(closed_cb_);
  closed_cb_ = nullptr;
  cb();
}

}  // namespace uvsched
