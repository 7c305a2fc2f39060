// One accepted TCP connection of the HttpServer: reads bytes into llhttp,
// queues one Exchange per request, writes responses back in request order.
// Owned by the server; deletes itself in its close callback.
#pragma once

#include <llhttp.h>
#include <uv.h>

#include <list>
#include <memory>
#include <string>
#include <vector>

#include "reactor/http_server.h"
#include "reactor/tls.h"

namespace uvsched {

class HttpConnection {
 public:
  explicit HttpConnection(HttpServer* server);
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  uv_tcp_t* tcp() { return &tcp_; }
  HttpServer* server() const { return server_; }
  void start();
  void close();
  bool closing() const { return closing_; }
  // Stop taking requests; end streams; close once the queue is written.
  void begin_shutdown();

  // Called by Responder/ResponseStream when an exchange has bytes to write:
  // they go out at the end of the current read, or else on the next turn.
  void exchange_updated();
  // Bytes handed to libuv but not yet written to the socket.
  size_t backlog() const;
  // False once the server is shutting down: responses then say Connection: close.
  bool keep_alive_allowed() const;
  // A stream's bytes still to be made (ResponseStream::hold), counted with
  // the server's buffered output.
  void set_held(detail::Exchange& ex, size_t bytes);
  // What this connection holds of the server's buffered output.
  size_t output_held() const { return queued_bytes_ + held_bytes_; }

 private:
  friend class HttpServer;
  static void on_alloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf);
  static void on_read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf);
  static void on_write(uv_write_t* req, int status);
  static void on_closed(uv_handle_t* h);

  static int on_message_begin(llhttp_t* p);
  static int on_url(llhttp_t* p, const char* at, size_t len);
  static int on_header_field(llhttp_t* p, const char* at, size_t len);
  static int on_header_value(llhttp_t* p, const char* at, size_t len);
  static int on_headers_complete(llhttp_t* p);
  static int on_body(llhttp_t* p, const char* at, size_t len);
  static int on_message_complete(llhttp_t* p);

  void receive_tls(std::string_view cipher);
  void feed(const char* data, size_t len);
  bool count_header_bytes(size_t len, int status);
  void dispatch();
  void fail(int status, std::string_view message);
  void flush();
  void deferred_flush();                // the server's turn for an exchange_updated()
  void write_out(std::string&& bytes);  // plaintext: encrypted first under TLS
  void write_raw(std::string&& bytes);  // bytes for the socket as they are
  void notify_drained();                // a front stream waiting for its reader to catch up, now caught up
  bool has_room() const;                // may another request be read?
  void update_reading();
  void update_timer();
  void refuse(HttpResponse&& response);  // answer now, read nothing more, close once written
  bool drained() const;

  HttpServer* server_;
  uv_tcp_t tcp_;
  llhttp_t parser_;
  // The request being parsed: made at its first byte and gone once
  // dispatched, so an agent's connection, which holds a stream for its whole
  // life, does not carry an empty one (~200 B each, thousands of agents).
  std::unique_ptr<HttpRequest> request_;
  // Folded header lines (obs-fold, RFC 9112 5.2) are refused: llhttp joins
  // them, and a value split over two reads looks the same but for where its
  // pieces lie: a split's first ends the bytes of one read and its second
  // begins the next; a fold's do not.
  const char* input_begin_ = nullptr;  // of the bytes being parsed
  const char* input_end_ = nullptr;
  const char* bad_head_ = nullptr;  // why a head is malformed, when llhttp could not tell
  size_t header_bytes_ = 0;
  uint64_t message_started_ms_ = 0;
  int limit_status_ = 0;  // 413/414/431 when a limit stopped the parser

  // The flags lie together: strewn between the wider members, each took a
  // word of padding (the connection fell into a larger allocation class).
  bool header_value_next_ = false;
  bool value_piece_cut_ = false;  // the header value's last piece ended at input_end_
  bool value_started_ = false;    // a piece of the current header value was seen
  bool in_message_ = false;
  bool parser_paused_ = false;
  bool reading_ = false;
  bool in_read_ = false;         // inside on_read: flush once at its end
  bool flush_deferred_ = false;  // queued with the server for its next turn
  bool no_more_requests_ = false;
  bool authenticated_ = false;  // a request on it showed valid credentials
  bool on_probation_ = false;   // in the server's list of those that have not
  bool over_limit_ = false;     // accepted past max_connections: one request, served only if it must be
  bool closing_ = false;

  // A vector, not a deque: a deque allocates ~600 B up front, and an agent's
  // connection (thousands of them) holds one exchange for its whole life.
  // At most max_pipelined, so taking from the front is cheap.
  std::vector<std::shared_ptr<detail::Exchange>> exchanges_;
  std::string paused_input_;  // unparsed bytes while the pipeline is full
  size_t flush_slot_ = 0;     // the index of its flush_deferred_ entry in the server's list
  std::list<HttpConnection*>::iterator probation_it_;
  size_t writes_in_flight_ = 0;
  size_t queued_bytes_ = 0;  // in those writes: this connection's part of the server's buffered output
  size_t held_bytes_ = 0;    // and its streams' snapshots (set_held)
  std::unique_ptr<Timer> timer_;
  std::unique_ptr<TlsSession> tls_;  // set when the server speaks TLS
  std::string peer_address_;         // read once, at start
};

}  // namespace uvsched
