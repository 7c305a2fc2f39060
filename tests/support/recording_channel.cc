#include "tests/support/recording_channel.h"

#include <cstdlib>
#include <memory>

#include "reactor/http_server.h"

namespace uvsched::test {

bool RecordingChannel::write(std::initializer_list<std::string_view> pieces) {
  if (!open_) return false;
  for (std::string_view p : pieces) text_ += p;
  return true;
}

void RecordingChannel::hang_up() {
  open_ = false;
  if (auto cb = std::move(on_close_)) cb();
}

std::vector<std::string> RecordingChannel::events(const std::string& type) const {
  std::vector<std::string> out;
  for (size_t from = 0, nl; (nl = text_.find('\n', from)) != std::string::npos; from = nl + 1) {
    std::string line = text_.substr(from, nl - from);
    if (line.find("{\"type\":\"" + type + "\"") == 0) out.push_back(line);
  }
  return out;
}

std::vector<std::string> RecordingChannel::types() const {
  std::vector<std::string> out;
  const std::string lead = "{\"type\":\"";
  for (size_t from = 0, nl; (nl = text_.find('\n', from)) != std::string::npos; from = nl + 1) {
    if (text_.compare(from, lead.size(), lead) != 0) {
      out.push_back("?");
      continue;
    }
    size_t start = from + lead.size();
    out.push_back(text_.substr(start, text_.find('"', start) - start));
  }
  return out;
}

std::shared_ptr<detail::Exchange> exchange(Router& router, const std::string& method, const std::string& target,
                                           std::string body) {
  HttpRequest req;
  req.method = method;
  req.target = target;
  req.body = std::move(body);
  auto ex = std::make_shared<detail::Exchange>();
  router.handle(req, Responder(ex));
  return ex;
}

std::string route(Router& router, const std::string& method, const std::string& target, std::string body) {
  return exchange(router, method, target, std::move(body))->out;
}

int status_of(const std::string& answer) {
  if (answer.rfind("HTTP/1.1 ", 0) != 0) return 0;
  return std::atoi(answer.c_str() + 9);
}

}  // namespace uvsched::test
