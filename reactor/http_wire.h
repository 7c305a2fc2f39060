// HTTP/1.1 wire encoding: status lines, header blocks and chunk framing.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "reactor/http_message.h"

namespace uvsched {

// A whole response with Content-Length. `head` leaves the body out (HEAD requests).
void append_response(std::string& out, const HttpResponse& r, bool keep_alive, bool head);

// The head of a chunked response that stays open.
void append_stream_head(std::string& out, int status, std::string_view content_type, const HttpHeaders& extra,
                        bool keep_alive);

// One chunk of a chunked body; an empty `data` writes nothing (it would end the body).
void append_chunk(std::string& out, std::string_view data);
// One chunk made of several pieces laid end to end (an event and its newline), without joining them first.
void append_chunk(std::string& out, std::initializer_list<std::string_view> pieces);
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

// A request for the client: Host, Content-Length and any headers given.
void append_request(std::string& out, std::string_view method, std::string_view target, std::string_view host,
                    const HttpHeaders& headers, std::string_view body);

}  // namespace uvsched
