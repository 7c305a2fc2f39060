// URL pieces the server and client need: absolute http(s) URLs, query strings and
// percent-decoding. No I/O, no DNS.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace uvsched {

struct Url {
  std::string scheme;  // "http" or "https"
  std::string host;    // without brackets for IPv6 literals
  uint16_t port = 0;
  std::string target;  // path plus ?query, at least "/"

  std::string origin() const;  // "host:port", as the Host header says it
  std::string base() const;    // "scheme://host:port", the connection-pool key
};

// Parses "http[s]://host[:port][/path][?query]". Returns nullopt on anything else.
std::optional<Url> parse_url(std::string_view text);

// A request-target as the server serves it (RFC 9112 3.2): an absolute-form
// "http[s]://authority/path?query", which a client sends through a proxy and a
// server must accept, becomes "/path?query" (the path "/" when it has none);
// any other target is left as it is.
void to_origin_form(std::string& target);

// Splits "HOST:PORT" (or "[v6]:PORT"); nullopt when the port is missing or bad.
std::optional<std::pair<std::string, uint16_t>> parse_host_port(std::string_view text);

// Decodes %XX and '+' (as space, for query strings). nullopt on a bad escape.
std::optional<std::string> percent_decode(std::string_view in, bool plus_is_space);

// Encodes every byte but RFC 3986's unreserved ones (A-Z a-z 0-9 - . _ ~)
// as %XX: a value that is safe as one path segment or one query value.
std::string percent_encode(std::string_view in);

// The decoded value of the first `name` parameter of a query string.
std::optional<std::string> query_param(std::string_view query, std::string_view name);

}  // namespace uvsched
