#include "reactor/sliced_response.h"

#include <memory>
#include <utility>

namespace uvsched {
namespace {

struct SlicedBody {
  ResponseStream stream;
  NextSlice next;
  HeldBytes held;
  size_t slice_bytes;
};

// One slice now; the next when the reader has taken this one. The callback
// kept by the stream holds the body; the stream lets it go when it ends or
// its connection closes, and with it the body.
void write_slice(const std::shared_ptr<SlicedBody>& body) {
  std::string out;
  bool more = body->next(out, body->slice_bytes);
  if (!out.empty() && !body->stream.write(out)) return;  // the reader is gone
  if (!more) {
    body->stream.end();
    return;
  }
  if (body->held) body->stream.hold(body->held());  // may cut this reader, if it holds the most
  body->stream.when_drained([body] { write_slice(body); });
}

}  // namespace

void send_sliced(Responder responder, int status, std::string_view content_type, NextSlice next, HeldBytes held,
                 size_t slice_bytes) {
  responder.answer_alone();
  auto body = std::make_shared<SlicedBody>();
  body->stream = responder.start_stream(status, content_type);
  body->next = std::move(next);
  body->held = std::move(held);
  body->slice_bytes = slice_bytes;
  if (!body->stream.open()) return;  // the client left before its answer was ready
  write_slice(body);
}

}  // namespace uvsched
