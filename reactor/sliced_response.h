// A large answer made a slice per loop turn, at the pace its reader takes
// it: a list of 100k objects then neither stalls the loop while it is
// written nor sits whole in memory, and a reader that stops reading stops
// its making. Sent chunked, so its length need not be known first.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "reactor/http_server.h"

namespace uvsched {

// Appends the next slice of the body to `out` (about `budget` bytes, more if
// one piece is larger); returns false once the body is complete.
using NextSlice = std::function<bool(std::string& out, size_t budget)>;
// How many bytes the body's maker still holds to make output from (its
// snapshot): counted with the server's buffered output (ResponseStream::hold).
using HeldBytes = std::function<size_t()>;

// Answers with `status` and `content_type`, the body made by `next`. The
// connection reads no later request until the answer is written
// (Responder::answer_alone).
void send_sliced(Responder responder, int status, std::string_view content_type, NextSlice next,
                 HeldBytes held = nullptr, size_t slice_bytes = 64 * 1024);

}  // namespace uvsched
