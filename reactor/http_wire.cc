#include "reactor/http_wire.h"

#include <charconv>

namespace uvsched {
namespace {

void append_number(std::string& out, uint64_t n, int base = 10) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n, base);
  (void)ec;
  out.append(buf, end);
}

void append_status_line(std::string& out, int status) {
  out += "HTTP/1.1 ";
  append_number(out, static_cast<uint64_t>(status));
  out += ' ';
  out += status_reason(status);
  out += "\r\n";
}

void append_headers(std::string& out, const HttpHeaders& headers) {
  for (const auto& h : headers) {
    out += h.name;
    out += ": ";
    out += h.value;
    out += "\r\n";
  }
}

// What a response adds besides its body and headers: the status line, the
// content type and length, and the blank line. Room for all of it is made
// once, not grown a piece at a time.
constexpr size_t kResponseFraming = 160;

size_t headers_size(const HttpHeaders& headers) {
  size_t n = 0;
  for (const auto& h : headers) n += h.name.size() + h.value.size() + 4;
  return n;
}

}  // namespace

void append_response(std::string& out, const HttpResponse& r, bool keep_alive, bool head) {
  out.reserve(out.size() + kResponseFraming + r.content_type.size() + headers_size(r.headers) +
              (head ? 0 : r.body.size()));
  append_status_line(out, r.status);
  if (!r.content_type.empty()) {
    out += "Content-Type: ";
    out += r.content_type;
    out += "\r\n";
  }
  append_headers(out, r.headers);
  out += "Content-Length: ";
  append_number(out, r.body.size());
  out += keep_alive ? "\r\n\r\n" : "\r\nConnection: close\r\n\r\n";
  if (!head) out += r.body;
}

void append_stream_head(std::string& out, int status, std::string_view content_type, const HttpHeaders& extra,
                        bool keep_alive) {
  append_status_line(out, status);
  if (!content_type.empty()) {
    out += "Content-Type: ";
    out += content_type;
    out += "\r\n";
  }
  append_headers(out, extra);
  out += "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n";
  out += keep_alive ? "\r\n" : "Connection: close\r\n\r\n";
}

void append_chunk(std::string& out, std::string_view data) { append_chunk(out, {data}); }

void append_chunk(std::string& out, std::initializer_list<std::string_view> pieces) {
  size_t size = 0;
  for (std::string_view p : pieces) size += p.size();
  if (size == 0) return;
  out.reserve(out.size() + size + 20);  // hex length, two CRLFs
  append_number(out, size, 16);
  out += "\r\n";
  for (std::string_view p : pieces) out += p;
  out += "\r\n";
}

void append_request(std::string& out, std::string_view method, std::string_view target, std::string_view host,
                    const HttpHeaders& headers, std::string_view body) {
  out += method;
  out += ' ';
  out += target;
  out += " HTTP/1.1\r\nHost: ";
  out += host;
  out += "\r\n";
  append_headers(out, headers);
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    out += "Content-Length: ";
    append_number(out, body.size());
    out += "\r\n";
  }
  out += "\r\n";
  out += body;
}

}  // namespace uvsched
