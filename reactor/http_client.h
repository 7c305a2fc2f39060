// A non-blocking HTTP/1.1 client on the loop: a keep-alive connection pool per
// origin (http or https), a time-out per request, streamed (chunked) response bodies, async
// DNS. Callbacks run on the loop, never from inside request().
#pragma once

#include <uv.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reactor/clock.h"
#include "reactor/http_message.h"
#include "reactor/http_requester.h"
#include "reactor/url.h"

namespace uvsched {

class TlsContext;

struct ClientOptions {
  size_t max_connections_per_origin = 32;
  uint64_t idle_timeout_ms = 30'000;  // an unused pooled connection is closed after
  size_t max_response_bytes = 64 * 1024 * 1024;
  // A response's status line and headers: a peer sending headers without end
  // must not take the daemon's memory (Go's transport allows 10 MB).
  size_t max_response_header_bytes = 1024 * 1024;
};

class HttpClient final : public HttpRequester {
 public:
  HttpClient(uv_loop_t* loop, Clock& clock, ClientOptions options = {});
  ~HttpClient() override;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  RequestId request(ClientRequest request, ClientCallback callback) override;
  // Sends the requests back to back on one connection (HTTP/1.1 pipelining):
  // one write for all, answers read in order, callbacks in order. For
  // requests to one origin that are ready together (an agent's status and
  // its new offer); others go out one by one. When the connection fails
  // after bytes came back, the requests not answered fail too: they may
  // have been served, so they are not sent again.
  // Their ids, in order (cancelling the first while it waits for a
  // connection sends the rest on their own).
  std::vector<RequestId> pipeline(std::vector<std::pair<ClientRequest, ClientCallback>> requests);
  // The callback of a cancelled request is never called.
  void cancel(RequestId id) override;
  // Fails what is pending with UV_ECANCELED, closes every connection, then done().
  void close(std::function<void()> done);

  size_t open_connections() const;

  // https requests verify servers with this context (which must outlive the
  // client) instead of the system's CAs.
  void use_tls(const TlsContext* tls);
  // Makes the context https uses now (OpenSSL loaded, the system's CAs found),
  // so a program that will call https servers pays those file reads while it
  // starts, not on the first request on a running loop. False, with *error,
  // when it cannot be made.
  bool prepare_tls(std::string* error);

 private:
  class Connection;
  struct Pending;
  struct Pool {
    Url base;
    std::vector<Connection*> idle;
    std::vector<Connection*> all;
    std::deque<std::unique_ptr<Pending>> waiting;
  };

  // The request ready to dispatch, or null when it failed at once (its callback is deferred).
  std::unique_ptr<Pending> make_pending(ClientRequest request, ClientCallback callback);
  void dispatch(std::unique_ptr<Pending> p);
  void connection_idle(Connection* conn);
  void connection_closed(Connection* conn);
  void defer(ClientCallback cb, ClientResponse&& r);
  void run_deferred();
  void maybe_closed();
  const TlsContext* tls_context();

  uv_loop_t* loop_;
  Clock& clock_;
  ClientOptions options_;
  RequestId next_id_ = 1;
  std::map<std::string, Pool> pools_;
  std::unique_ptr<Timer> defer_timer_;
  std::vector<std::pair<ClientCallback, ClientResponse>> deferred_;
  bool closing_ = false;
  std::function<void()> closed_cb_;
  const TlsContext* tls_ = nullptr;
  std::unique_ptr<TlsContext> default_tls_;
  std::string tls_error_;
};

}  // namespace uvsched
