#include "reactor/url.h"

#include <cctype>

#include <charconv>

#include "reactor/http_message.h"  // iequals

namespace uvsched {

std::string Url::origin() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

std::optional<std::pair<std::string, uint16_t>> parse_host_port(std::string_view text) {
  std::string_view host, port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') return std::nullopt;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return std::nullopt;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  unsigned value = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (host.empty() || port.empty() || ec != std::errc() || p != port.data() + port.size() || value > 65535)
    return std::nullopt;
  return std::make_pair(std::string(host), static_cast<uint16_t>(value));
}

void to_origin_form(std::string& target) {
  if (target.empty() || target.front() == '/') return;
  size_t colon = target.find("://");
  if (colon == std::string::npos) return;
  std::string_view scheme(target.data(), colon);
  if (!iequals(scheme, "http") && !iequals(scheme, "https")) return;
  size_t path = target.find_first_of("/?#", colon + 3);
  if (path == std::string::npos) {
    target = "/";
  } else {
    target.erase(0, path);
    if (target.front() != '/') target.insert(0, "/");
  }
}

std::string Url::base() const { return scheme + "://" + origin(); }

std::optional<Url> parse_url(std::string_view text) {
  Url url;
  std::string_view rest;
  uint16_t default_port;
  if (text.starts_with("http://")) {
    url.scheme = "http";
    rest = text.substr(7);
    default_port = 80;
  } else if (text.starts_with("https://")) {
    url.scheme = "https";
    rest = text.substr(8);
    default_port = 443;
  } else {
    return std::nullopt;
  }
  size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  std::string_view target = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.empty()) return std::nullopt;
  // host, [ipv6], host:port or [ipv6]:port, and nothing else: what follows a
  // bracket is a port or the end, and a bare host holds no colon.
  std::string_view host = authority, port;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && (after.front() != ':' || after.size() == 1)) return std::nullopt;
    if (!after.empty()) port = after.substr(1);
    for (char c : host) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return std::nullopt;
    }
  } else {
    size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      if (port.empty()) return std::nullopt;
    }
    for (char c : host) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return std::nullopt;
    }
  }
  url.host = std::string(host);
  url.port = default_port;
  if (!port.empty()) {
    unsigned value = 0;
    auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || p != port.data() + port.size() || value > 65535) return std::nullopt;
    url.port = static_cast<uint16_t>(value);
  }
  if (url.host.empty()) return std::nullopt;
  url.target = target.empty() ? "/" : (target.front() == '?' ? "/" + std::string(target) : std::string(target));
  return url;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_encode(std::string_view in) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size());
  for (unsigned char c : in) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::optional<std::string> percent_decode(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      int hi = hex_value(in[i + 1]);
      int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<std::string> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    auto key = percent_decode(pair.substr(0, eq), true);
    if (key && *key == name) {
      return eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1), true);
    }
    if (amp == std::string_view::npos) break;
    query = query.substr(amp + 1);
  }
  return std::nullopt;
}

}  // namespace uvsched
