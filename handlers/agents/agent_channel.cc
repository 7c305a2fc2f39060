#include "handlers/agents/agent_channel.h"

#include <utility>

namespace uvsched {
namespace {

class StreamChannel final : public AgentChannel {
 public:
  explicit StreamChannel(ResponseStream s) : stream_(std::move(s)) {}
  bool write(std::initializer_list<std::string_view> pieces) override { return stream_.write(pieces); }
  void end() override {
    if (stream_.open()) stream_.end();
  }
  bool open() const override { return stream_.open(); }
  void on_close(std::function<void()> cb) override { stream_.on_close(std::move(cb)); }

 private:
  ResponseStream stream_;
};

}  // namespace

std::shared_ptr<AgentChannel> stream_channel(ResponseStream stream) {
  return std::make_shared<StreamChannel>(std::move(stream));
}

}  // namespace uvsched
