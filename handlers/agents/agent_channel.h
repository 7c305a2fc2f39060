// The event stream down to one agent: newline-delimited JSON events on the
// response of its subscribe. An interface so that the hub, and the pod
// scheduler behind it, can be driven by a unit test through a channel that
// records what it is sent, with no socket.
#pragma once

#include <functional>
#include <initializer_list>
#include <memory>
#include <string_view>

#include "reactor/http_server.h"

namespace uvsched {

class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  // One event line, in pieces (the line, then its newline); false when the
  // channel is closed.
  virtual bool write(std::initializer_list<std::string_view> pieces) = 0;
  bool write(std::string_view line) { return write({line}); }
  // Ends the stream (the agent will subscribe again).
  virtual void end() = 0;
  virtual bool open() const = 0;
  // `cb` runs once when the agent goes away.
  virtual void on_close(std::function<void()> cb) = 0;
};

// The channel of a subscribe's chunked response.
std::shared_ptr<AgentChannel> stream_channel(ResponseStream stream);

}  // namespace uvsched
