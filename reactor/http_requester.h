// What a component that calls HTTP servers needs of a client: a request and
// its answer, and a way to take the request back. HttpClient is the one on
// the loop; an orchestration test gives a fake that answers when the test
// says (tests/support/fake_http.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "reactor/http_message.h"

namespace uvsched {

struct ClientRequest {
  std::string method = "GET";
  std::string url;  // absolute: http://host:port/path?query
  HttpHeaders headers;
  std::string body;
  uint64_t timeout_ms = 10'000;  // connect to last byte; 0 = none (long-lived streams)
  // When set, body bytes are handed over as they arrive (chunk framing removed)
  // instead of being collected into ClientResponse::body.
  std::function<void(std::string_view)> on_body;
};

struct ClientResponse {
  int error = 0;  // 0, or a libuv error code: UV_ETIMEDOUT, UV_ECONNREFUSED, UV_ECANCELED...
  std::string error_text;
  int status = 0;
  HttpHeaders headers;
  std::string body;
  // With an error: whether the request's bytes had been handed to the
  // connection. If so the server may have received it and acted on it, and
  // only the caller knows whether sending it again is safe.
  bool sent = false;

  bool ok() const { return error == 0 && status >= 200 && status < 300; }
  const std::string* header(std::string_view name) const { return find_header(headers, name); }
};

using ClientCallback = std::function<void(ClientResponse&&)>;

class HttpRequester {
 public:
  using RequestId = uint64_t;
  virtual ~HttpRequester() = default;
  // The callback runs later (never from inside request()), exactly once,
  // unless the request is cancelled first.
  virtual RequestId request(ClientRequest request, ClientCallback callback) = 0;
  // The callback of a cancelled request is never called.
  virtual void cancel(RequestId id) = 0;
};

}  // namespace uvsched
