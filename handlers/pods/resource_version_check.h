// A Kubernetes read (get, list or watch) from a resourceVersion the store has
// not reached is answered as the API server answers one: 504 Timeout, "Too
// large resource version", with the ResourceVersionTooLarge cause that
// client-go's reflector takes as its cue to list again. Without it a list
// would answer older data than asked for, and a watch would wait, silently
// skipping every change, until the store reached that revision: as after
// the store was replaced (a new data directory, an etcd restored from a
// snapshot) under clients that kept their resourceVersions.
//
// The store's revision as this daemon last saw it may lag (another daemon on
// the same etcd wrote since): a request ahead of it is held for one read of
// the store, whose revision is the store's own, and refused only if it is
// still ahead of that.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "reactor/http_server.h"
#include "storage/store.h"

namespace uvsched {

class ResourceVersionCheck final : public RequestHandler {
 public:
  explicit ResourceVersionCheck(RequestHandler& next) : next_(next) {}
  // Null (before the store is open): every request is handed on.
  void set_store(Store* store) { store_ = store; }
  void handle(HttpRequest& request, Responder responder) override;
  HttpResponse refusal(int status, std::string_view message, const HttpRequest& head) override {
    return next_.refusal(status, message, head);
  }

 private:
  RequestHandler& next_;
  Store* store_ = nullptr;
};

// The resourceVersion a Kubernetes GET asks to be at least as new as: nullopt
// for none, "0" (any), or one the handlers will refuse as malformed.
std::optional<int64_t> requested_resource_version(const HttpRequest& request);
// The API server's 504 for `requested` when the store is at `current`.
HttpResponse too_large_resource_version(int64_t requested, int64_t current);

}  // namespace uvsched
