// HttpClient's internals, shared by http_client.cc (the pools) and
// http_client_connection.cc (one connection): what a request is while it
// waits or is on a connection, and the connection itself. Not for users of
// HttpClient.
#pragma once

#include <llhttp.h>
#include <uv.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "reactor/http_client.h"
#include "reactor/tls.h"

namespace uvsched {

struct HttpClient::Pending {
  RequestId id = 0;
  Url url;
  std::string pool_key;  // url.base(), made once: requests are compared and pooled by it
  ClientRequest request;
  ClientCallback callback;
  std::string wire;
  bool replayable = false;  // may be sent twice: see is_replayable
  bool retried = false;
  // Pipelined behind this one, on its connection.
  std::vector<std::unique_ptr<Pending>> followers;
};

// One TCP connection of a pool. Lives until its close callback.
class HttpClient::Connection {
 public:
  Connection(HttpClient* client, Pool* pool);

  Pool* pool() const { return pool_; }
  bool busy() const { return current_ != nullptr && !abandoned_; }
  Pending* current() const { return abandoned_ ? nullptr : current_.get(); }

  // Resolves (unless the host is an address) and connects.
  void open();
  // Sends `p` and those pipelined behind it (at once, or once connected).
  void start(std::unique_ptr<Pending> p);
  // Idle in the pool: closed after the idle time-out unless used again.
  void park();
  // Closes without calling the current request's callback. The request is
  // kept until the close callback: abandon() may run inside its on_body.
  void abandon();
  // Closes and fails the requests on it. One that met a pooled connection the
  // server closed, before any byte came back, is sent once more if it is safe
  // to: it was never written, or it is replayable (Go's rule, net/http's
  // shouldRetryRequest): the server may have acted on what it received.
  void fail(int error, std::string text);
  // An idle connection whose server has already closed it (its end of file
  // waits unread): a request that cannot be sent twice must not be put on it.
  bool closed_by_peer() const;
  void close();

 private:
  void connect(const sockaddr* addr);
  void send();
  // The write owns its bytes: a server may answer (and the request be
  // finished) before the write completes.
  void write_raw(std::string bytes);
  // https: the handshake starts as soon as TCP is up; the request waits in the
  // session until it is done.
  bool start_tls();
  // Readies the connection for `p`'s answer (the next one, when pipelined).
  void begin(std::unique_ptr<Pending> p);
  // An answer is whole: the next pipelined one is awaited, or the connection
  // goes back to the pool or closes; then the request's callback runs.
  void complete();
  void consume(const char* data, size_t len);

  // libuv's callbacks.
  static void on_resolved(uv_getaddrinfo_t* req, int status, addrinfo* res);
  static void on_connected(uv_connect_t* req, int status);
  static void on_alloc(uv_handle_t*, size_t, uv_buf_t* buf);
  static void on_read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf);
  static void on_closed(uv_handle_t* h);

  // Counts a piece of the response's headers; false past the cap.
  bool headers_fit(llhttp_t* p, size_t len);
  // llhttp's callbacks.
  static Connection* from(llhttp_t* p) { return static_cast<Connection*>(p->data); }
  static int on_status(llhttp_t* p, const char*, size_t);
  static int on_header_field(llhttp_t* p, const char* at, size_t len);
  static int on_header_value(llhttp_t* p, const char* at, size_t len);
  static int on_body(llhttp_t* p, const char* at, size_t len);
  static int on_message_complete(llhttp_t* p);

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
  size_t header_bytes_ = 0;  // of the response being read
  bool got_bytes_ = false;
  bool wrote_ = false;  // the current requests' bytes went to the socket
  bool connected_ = false;
  bool resolving_ = false;
  bool reading_ = false;
  bool reused_ = false;
  bool closing_ = false;
  bool abandoned_ = false;
};

}  // namespace uvsched
