// An agent's event stream that keeps what it is sent (an AgentChannel with no
// connection), and an agent's request through routes on an exchange with no
// connection: orchestration tests of the hub and the pod scheduler.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "handlers/agents/agent_channel.h"
#include "handlers/router.h"
#include "reactor/http_server.h"

namespace uvsched::test {

class RecordingChannel final : public AgentChannel {
 public:
  bool write(std::initializer_list<std::string_view> pieces) override;
  void end() override { open_ = false; }
  bool open() const override { return open_; }
  void on_close(std::function<void()> cb) override { on_close_ = std::move(cb); }
  // The agent goes away (its connection closes).
  void hang_up();
  // The event lines of `type`, in order.
  std::vector<std::string> events(const std::string& type) const;
  // The type of every event line, in order.
  std::vector<std::string> types() const;

 private:
  bool open_ = true;
  std::string text_;
  std::function<void()> on_close_;
};

// A request through `router` on an exchange with no connection, kept so an
// answer that comes later (after the store or a peer answered) is seen:
// its bytes are in `out` once it is sent.
std::shared_ptr<detail::Exchange> exchange(Router& router, const std::string& method, const std::string& target,
                                           std::string body = {});
// The same, for an answer made at once: its bytes.
std::string route(Router& router, const std::string& method, const std::string& target, std::string body = {});
inline std::string post(Router& router, const std::string& target, std::string body) {
  return route(router, "POST", target, std::move(body));
}
// The status code of an answer route() gave (0 when there was none).
int status_of(const std::string& answer);

}  // namespace uvsched::test
