// Plain HTTP request/response values shared by the server and the client.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace uvsched {

struct HttpHeader {
  std::string name;
  std::string value;
};

using HttpHeaders = std::vector<HttpHeader>;

// Case-insensitive header lookup; nullptr when absent.
const std::string* find_header(const HttpHeaders& headers, std::string_view name);
bool iequals(std::string_view a, std::string_view b);

struct HttpRequest {
  std::string_view method;  // static string from llhttp ("GET", "POST", ...)
  std::string target;       // request-target as sent: path plus optional ?query
  HttpHeaders headers;
  std::string body;
  bool keep_alive = true;
  std::string peer_name;      // common name of a verified TLS client certificate
  std::string peer_address;   // the client's IP address, as text
  bool head_checked = false;  // the server's handler passed its head (check_head) before the body came
  std::string principal;      // what check_head said the credentials named

  std::string_view path() const;
  std::string_view query() const;  // without the '?'; empty when none
  const std::string* header(std::string_view name) const { return find_header(headers, name); }
};

struct HttpResponse {
  int status = 200;
  std::string content_type;  // empty: no Content-Type header
  HttpHeaders headers;
  std::string body;
};

std::string_view status_reason(int status);

}  // namespace uvsched
