// The pools: requests wait for a connection of their origin, pipelined ones
// go together, idle connections are kept for the next request.
#include "reactor/http_client.h"

#include <cassert>

#include <algorithm>

#include "reactor/http_client_connection.h"
#include "reactor/http_wire.h"
#include "reactor/log.h"
#include "reactor/tls.h"

namespace uvsched {

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

namespace {

// What net/http's Transport sends twice (Request.isReplayable): the methods
// RFC 9110 makes safe, and requests the caller marked idempotent. PUT and
// DELETE are idempotent in the RFC's words but Go does not replay them, and
// neither do we: etcd's gateway takes every call, compare-and-swaps
// included, as a POST.
bool is_replayable(const ClientRequest& r) {
  return r.method == "GET" || r.method == "HEAD" || r.method == "OPTIONS" || r.method == "TRACE" ||
         find_header(r.headers, "Idempotency-Key") != nullptr || find_header(r.headers, "X-Idempotency-Key") != nullptr;
}

}  // namespace

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
  p->replayable = is_replayable(request);
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

std::vector<HttpClient::RequestId> HttpClient::pipeline(
    std::vector<std::pair<ClientRequest, ClientCallback>> requests) {
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
  while (!pool.idle.empty()) {
    Connection* conn = pool.idle.back();
    pool.idle.pop_back();
    if (!p->replayable && conn->closed_by_peer()) {
      conn->close();  // (it stays in pool.all until its close callback)
      continue;
    }
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
