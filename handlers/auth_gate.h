// Bearer-token authentication in front of every route (issue 7). Tokens come
// from a file of `token,name,role` lines; the gate answers 401 without a valid
// token and 403 for a role that may not (policy/access), and lets the open
// health paths through. A verified TLS client certificate stands for an agent
// token named by its common name. Without a token file or client CA it lets
// everything through (the daemon then listens on loopback only). Reloading reads the file on the
// threadpool and swaps the tokens in only if the whole file is valid.
#pragma once

#include <uv.h>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "handlers/ops/rate_limiter.h"
#include "handlers/pods/access_review.h"  // Caller
#include "policy/access.h"
#include "reactor/http_server.h"
#include "reactor/openssl_library.h"

namespace uvsched {

struct TokenEntry {
  std::string token;
  std::string name;
  Role role;
  std::array<unsigned char, 32> digest{};  // SHA-256 of the token: what a presented token is compared with
};

// nullopt with *error naming the line when the file is malformed.
std::optional<std::vector<TokenEntry>> parse_token_file(std::string_view text, std::string* error);

class AuthGate final : public RequestHandler {
 public:
  explicit AuthGate(RequestHandler& next) : next_(next) {}

  // At start-up (before the loop serves anyone): reads the file synchronously.
  bool load(const std::string& path, std::string* error);
  // On SIGHUP: reads it on the threadpool; keeps the old tokens on any error.
  void reload(uv_loop_t* loop, std::function<void(const std::string& error)> done);
  // With --tls-client-ca: a request without a token but with a verified
  // client certificate is the agent its common name names.
  void accept_client_certificates() { client_certificates_ = true; }
  // A listener whose every caller has `role` without showing anything (the
  // --ml-listen one: KubeML's components send no token); tokens and
  // certificates are not looked at there. `serves` says what it serves, in
  // its refusals (403).
  void grant_without_token(Role role, std::string serves) {
    granted_ = role;
    granted_serves_ = std::move(serves);
  }
  bool enabled() const { return !path_.empty() || client_certificates_ || granted_.has_value(); }
  // Requests a second per client (see rate_limiter.h), checked after the
  // credentials; the limiter must outlive the gate.
  void limit_rate(RateLimiter* limiter) { limiter_ = limiter; }
  // Requests on these paths that pass are served even on a connection past
  // --max-connections (HeadCheck::serve_over_limit): their callers take a
  // 503 as their answer and never ask again.
  void serve_over_connection_limit(RateLimiter::PathFilter paths) { over_limit_paths_ = std::move(paths); }
  size_t size() const { return tokens_.size(); }

  // Credentials are judged on the head, before the body is read.
  HeadCheck check_head(const HttpRequest& head) override;
  HttpResponse refusal(int status, std::string_view message, const HttpRequest& head) override {
    return next_.refusal(status, message, head);
  }
  void handle(HttpRequest& request, Responder responder) override;

 private:
  HeadCheck judge(const HttpRequest& request) const;
  Caller caller_of(const HttpRequest& request) const;
  const TokenEntry* find(std::string_view token) const;
  void digest_token(TokenEntry& t) const;
  static void warn_if_others_can_read(const std::string& path);

  RequestHandler& next_;
  RateLimiter* limiter_ = nullptr;
  RateLimiter::PathFilter over_limit_paths_;
  std::string path_;
  std::vector<TokenEntry> tokens_;
  // The requests each token let in, watched (not kept): when a reload drops
  // the token, those still open (streams, watches) are closed. Pruned of the
  // finished ones as the list grows.
  std::map<std::string, std::vector<std::weak_ptr<detail::Exchange>>> admitted_;  // by token digest
  size_t admitted_count_ = 0, prune_at_ = 1024;
  void admit(const std::string& token_digest, const Responder& responder);
  void revoke_dropped();
  const OpenSsl* crypto_ = nullptr;  // SHA-256 and CRYPTO_memcmp, opened with the token file
  bool client_certificates_ = false;
  std::optional<Role> granted_;  // grant_without_token's
  std::string granted_serves_;
};

}  // namespace uvsched
