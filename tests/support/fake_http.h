// An HttpRequester with no sockets: every request is kept, in order, until the
// test answers it (or fails it), so an orchestration test decides what a
// peer says and when, and sees every call that was made and every cancel.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "reactor/http_requester.h"

namespace uvsched::test {

class FakeHttp final : public HttpRequester {
 public:
  struct Call {
    RequestId id = 0;
    ClientRequest request;
    ClientCallback callback;
    bool cancelled = false;
    bool answered = false;
    bool open() const { return !cancelled && !answered; }
    // The URL's path and query (what follows the origin).
    std::string target() const;
  };

  RequestId request(ClientRequest request, ClientCallback callback) override;
  void cancel(RequestId id) override;

  // Every call made, oldest first.
  const std::vector<std::unique_ptr<Call>>& calls() const { return calls_; }
  // "METHOD /target" of every call, in order: what a peer saw.
  std::vector<std::string> log() const;
  // The oldest open call whose "METHOD /target" starts with `prefix`; null when none.
  Call* next(const std::string& prefix);
  size_t open_calls() const;
  // Answers the call (its callback runs now); false when it is not open.
  bool answer(Call* call, int status, std::string body = {});
  // Fails the call with a transport error; `sent` says the request had been
  // written before it (as HttpClient's ClientResponse::sent).
  bool fail(Call* call, int error, std::string text, bool sent = false);

 private:
  bool finish(Call* call, ClientResponse&& r);

  std::vector<std::unique_ptr<Call>> calls_;  // calls_[k]->id == k + 1
  // Every call before calls_[first_open_] is closed, and a closed call never
  // opens again, so the searches start there: tools/ml_trace_sim answers each
  // call as it is made, and scanning from the oldest made a run quadratic in
  // its calls.
  size_t first_open_ = 0;
};

}  // namespace uvsched::test
