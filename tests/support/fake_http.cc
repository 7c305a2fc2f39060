#include "tests/support/fake_http.h"

#include <cassert>
#include <utility>

namespace uvsched::test {

std::string FakeHttp::Call::target() const {
  const std::string& url = request.url;
  size_t scheme = url.find("://");
  size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return path == std::string::npos ? "/" : url.substr(path);
}

HttpRequester::RequestId FakeHttp::request(ClientRequest request, ClientCallback callback) {
  auto c = std::make_unique<Call>();
  c->id = calls_.size() + 1;
  c->request = std::move(request);
  c->callback = std::move(callback);
  calls_.push_back(std::move(c));
  return calls_.back()->id;
}

void FakeHttp::cancel(RequestId id) {
  if (id == 0 || id > calls_.size()) return;
  Call& c = *calls_[id - 1];
  assert(c.id == id);
  if (c.open()) c.cancelled = true;
}

std::vector<std::string> FakeHttp::log() const {
  std::vector<std::string> out;
  for (const auto& c : calls_) out.push_back(c->request.method + " " + c->target());
  return out;
}

FakeHttp::Call* FakeHttp::next(const std::string& prefix) {
  while (first_open_ < calls_.size() && !calls_[first_open_]->open()) ++first_open_;
  for (size_t k = first_open_; k < calls_.size(); ++k) {
    Call& c = *calls_[k];
    if (c.open() && (c.request.method + " " + c.target()).starts_with(prefix)) return &c;
  }
  return nullptr;
}

size_t FakeHttp::open_calls() const {
  size_t n = 0;
  for (size_t k = first_open_; k < calls_.size(); ++k) n += calls_[k]->open() ? 1 : 0;
  return n;
}

bool FakeHttp::answer(Call* call, int status, std::string body) {
  ClientResponse r;
  r.status = status;
  r.body = std::move(body);
  return finish(call, std::move(r));
}

bool FakeHttp::fail(Call* call, int error, std::string text, bool sent) {
  ClientResponse r;
  r.error = error;
  r.error_text = std::move(text);
  r.sent = sent;
  return finish(call, std::move(r));
}

bool FakeHttp::finish(Call* call, ClientResponse&& r) {
  if (call == nullptr || !call->open()) return false;
  call->answered = true;
  if (call->callback) call->callback(std::move(r));
  return true;
}

}  // namespace uvsched::test
