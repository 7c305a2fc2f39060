// A blocking HTTP/1.1 client for tests: raw bytes out, parsed responses in,
// every wait bounded by a deadline. Never used by the daemon.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "reactor/http_message.h"

namespace uvsched::test {

using namespace std::chrono_literals;

struct RawResponse {
  int status = 0;
  HttpHeaders headers;
  std::string body;
  std::string header(std::string_view name) const {
    const std::string* v = find_header(headers, name);
    return v ? *v : std::string();
  }
};

class RawConnection {
 public:
  RawConnection() = default;
  ~RawConnection();
  RawConnection(RawConnection&& o) noexcept : fd_(o.fd_), buffer_(std::move(o.buffer_)) { o.fd_ = -1; }
  RawConnection(const RawConnection&) = delete;

  bool connect(uint16_t port);
  bool send(std::string_view bytes);
  // One whole response (pipelined ones are read one per call).
  std::optional<RawResponse> read_response(std::chrono::milliseconds deadline = 10s);
  // Reads until `needle` has arrived; returns everything read, or nullopt.
  std::optional<std::string> read_until(std::string_view needle, std::chrono::milliseconds deadline = 10s);
  // True when the server closes the connection before the deadline.
  bool wait_closed(std::chrono::milliseconds deadline = 10s);
  void close();
  int fd() const { return fd_; }

 private:
  // Reads more bytes into buffer_; false on EOF, error or deadline.
  bool fill(std::chrono::steady_clock::time_point until);

  int fd_ = -1;
  std::string buffer_;
};

// One request on a fresh connection; nullopt when no whole answer came within `deadline`.
std::optional<RawResponse> http_request(uint16_t port, std::string_view method, std::string_view path,
                                        std::string_view body = {}, std::string_view extra_headers = {},
                                        std::chrono::milliseconds deadline = 10s);

// A reply the test goes on to read: a missing one (no answer in time) is a
// failure of the test here, and reads as status 0 with an empty body, never
// a dereferenced empty optional.
RawResponse answered(std::optional<RawResponse> r);

// The value of a series in the daemon's /metrics (name and labels, as
// printed), or -1 when absent or unreachable.
double metric_value(uint16_t port, const std::string& series);

}  // namespace uvsched::test
