#include "tests/support/raw_http.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <llhttp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace uvsched::test {
namespace {

struct ParseState {
  RawResponse response;
  bool value_next = false;
  bool complete = false;
};

int on_header_field(llhttp_t* p, const char* at, size_t len) {
  auto* st = static_cast<ParseState*>(p->data);
  if (st->response.headers.empty() || st->value_next) {
    st->response.headers.emplace_back();
    st->value_next = false;
  }
  st->response.headers.back().name.append(at, len);
  return 0;
}
int on_header_value(llhttp_t* p, const char* at, size_t len) {
  auto* st = static_cast<ParseState*>(p->data);
  st->value_next = true;
  st->response.headers.back().value.append(at, len);
  return 0;
}
int on_body(llhttp_t* p, const char* at, size_t len) {
  static_cast<ParseState*>(p->data)->response.body.append(at, len);
  return 0;
}
int on_complete(llhttp_t* p) {
  auto* st = static_cast<ParseState*>(p->data);
  st->complete = true;
  st->response.status = p->status_code;
  return HPE_PAUSED;
}

}  // namespace

RawConnection::~RawConnection() { close(); }

void RawConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawConnection::connect(uint16_t port) {
  close();
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

bool RawConnection::send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool RawConnection::fill(std::chrono::steady_clock::time_point until) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd_, POLLIN, 0};
    int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return false;
    char buf[65536];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
    return true;
  }
}

std::optional<RawResponse> RawConnection::read_response(std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  static const llhttp_settings_t settings = [] {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_header_field = on_header_field;
    s.on_header_value = on_header_value;
    s.on_body = on_body;
    s.on_message_complete = on_complete;
    return s;
  }();
  // One parser over every read, each byte parsed once: a response of many
  // megabytes arrives in thousands of reads.
  ParseState st;
  llhttp_t parser;
  llhttp_init(&parser, HTTP_RESPONSE, &settings);
  parser.data = &st;
  for (;;) {
    if (!buffer_.empty()) {
      llhttp_errno_t err = llhttp_execute(&parser, buffer_.data(), buffer_.size());
      if (err == HPE_PAUSED && st.complete) {
        size_t used = static_cast<size_t>(llhttp_get_error_pos(&parser) - buffer_.data());
        buffer_.erase(0, used);
        return st.response;
      }
      if (err != HPE_OK) return std::nullopt;
      buffer_.clear();  // parsed, and what mattered of it kept in st
    }
    if (!fill(until)) return std::nullopt;
  }
}

std::optional<std::string> RawConnection::read_until(std::string_view needle, std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (buffer_.find(needle) == std::string::npos) {
    if (!fill(until)) return std::nullopt;
  }
  std::string out = std::move(buffer_);
  buffer_.clear();
  return out;
}

bool RawConnection::wait_closed(std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd_, POLLIN, 0};
    int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return false;
    char buf[65536];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n > 0) buffer_.append(buf, static_cast<size_t>(n));
  }
}

std::optional<RawResponse> http_request(uint16_t port, std::string_view method, std::string_view path,
                                        std::string_view body, std::string_view extra_headers,
                                        std::chrono::milliseconds deadline) {
  RawConnection c;
  if (!c.connect(port)) return std::nullopt;
  std::string req = std::string(method) + " " + std::string(path) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  req += extra_headers;
  if (!body.empty() || method == "POST" || method == "PUT")
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n";
  req += body;
  if (!c.send(req)) return std::nullopt;
  return c.read_response(deadline);
}

RawResponse answered(std::optional<RawResponse> r) {
  if (r) return std::move(*r);
  ADD_FAILURE() << "no answer (the connection failed or the deadline passed)";
  return RawResponse{};
}

double metric_value(uint16_t port, const std::string& series) {
  auto r = http_request(port, "GET", "/metrics");
  std::string needle = "\n" + series + " ";  // not its # HELP line
  size_t at = r ? r->body.find(needle) : std::string::npos;
  return at == std::string::npos ? -1 : std::stod(r->body.substr(at + needle.size()));
}

}  // namespace uvsched::test
