#include "handlers/auth_gate.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include <fstream>
#include <memory>
#include <sstream>

#include "handlers/json_response.h"
#include "handlers/pods/k8s_status.h"
#include "reactor/log.h"

namespace uvsched {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool read_whole(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

HttpResponse deny(std::string_view path, int code, std::string_view message) {
  bool kube = path.substr(0, 5) == "/api/" || path == "/api" || path.substr(0, 5) == "/apis";
  const char* reason = code == 400   ? "BadRequest"
                       : code == 401 ? "Unauthorized"
                       : code == 429 ? "TooManyRequests"
                                     : "Forbidden";
  HttpResponse r = kube ? k8s_error(code, reason, message) : json_error(code, message);
  if (code == 401) r.headers.push_back({"WWW-Authenticate", "Bearer"});
  return r;
}

// The token of an "Authorization: Bearer <token>" header (the scheme in any
// case, as RFC 9110 has it), or nullopt when there is none.
std::optional<std::string_view> bearer_token(const std::string* header) {
  constexpr std::string_view kBearer = "Bearer ";
  if (header == nullptr || header->size() <= kBearer.size() ||
      !iequals(std::string_view(*header).substr(0, kBearer.size()), kBearer)) {
    return std::nullopt;
  }
  return std::string_view(*header).substr(kBearer.size());
}

}  // namespace

std::optional<std::vector<TokenEntry>> parse_token_file(std::string_view text, std::string* error) {
  std::vector<TokenEntry> out;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    size_t c1 = line.find(','), c2 = c1 == std::string_view::npos ? c1 : line.find(',', c1 + 1);
    if (c2 == std::string_view::npos || line.find(',', c2 + 1) != std::string_view::npos) {
      *error = "line " + std::to_string(line_no) + ": expected token,name,role";
      return std::nullopt;
    }
    std::string_view token = trim(line.substr(0, c1)), name = trim(line.substr(c1 + 1, c2 - c1 - 1)),
                     role = trim(line.substr(c2 + 1));
    auto r = parse_role(role);
    if (token.size() < 16) {
      *error = "line " + std::to_string(line_no) + ": a token must be at least 16 characters";
      return std::nullopt;
    }
    if (name.empty() || !r) {
      *error = "line " + std::to_string(line_no) + ": needs a name and a role of admin, agent, ml or reader";
      return std::nullopt;
    }
    out.push_back({std::string(token), std::string(name), *r});
  }
  return out;
}

bool AuthGate::load(const std::string& path, std::string* error) {
  std::string text;
  if (!read_whole(path, &text)) {
    *error = "cannot read token file " + path;
    return false;
  }
  auto tokens = parse_token_file(text, error);
  if (!tokens) {
    *error = path + ": " + *error;
    return false;
  }
  // Tokens are compared as SHA-256 digests with CRYPTO_memcmp: a fixed length
  // and a fixed time, whatever the stored or presented token is.
  std::string why;
  crypto_ = OpenSsl::get(&why);
  if (!crypto_) {
    *error = "the token file needs OpenSSL's libcrypto: " + why;
    return false;
  }
  warn_if_others_can_read(path);
  path_ = path;
  tokens_ = std::move(*tokens);
  for (auto& t : tokens_) digest_token(t);
  return true;
}

void AuthGate::digest_token(TokenEntry& t) const {
  crypto_->SHA256(reinterpret_cast<const unsigned char*>(t.token.data()), t.token.size(), t.digest.data());
}

void AuthGate::warn_if_others_can_read(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRGRP | S_IROTH)) != 0) {
    log_warn("token_file_readable_by_others")
        .kv("path", path)
        .kv("mode", std::to_string(st.st_mode & 0777))
        .kv("fix", "chmod 600");
  }
}

void AuthGate::reload(uv_loop_t* loop, std::function<void(const std::string& error)> done) {
  if (path_.empty()) return done("no --token-file to reload");
  struct Job {
    uv_work_t req;
    AuthGate* gate;
    std::string path, text;
    bool ok = false;
    bool missing = false;  // the file is not there at all
    std::function<void(const std::string&)> done;
  };
  auto* job = new Job{{}, this, path_, {}, false, false, std::move(done)};
  job->req.data = job;
  uv_queue_work(
      loop, &job->req,
      [](uv_work_t* r) {
        auto* j = static_cast<Job*>(r->data);
        j->ok = read_whole(j->path, &j->text);  // on the threadpool: file I/O stays off the loop
        struct stat st {};
        j->missing = !j->ok && ::stat(j->path.c_str(), &st) != 0 && errno == ENOENT;
      },
      [](uv_work_t* r, int) {
        std::unique_ptr<Job> j(static_cast<Job*>(r->data));
        std::string error;
        if (!j->ok && j->missing) {
          // The file is gone: so is every token it held, not the last copy in memory.
          log_error("token_file_gone")
              .kv("path", j->path)
              .kv("revoked", static_cast<uint64_t>(j->gate->tokens_.size()));
          j->gate->tokens_.clear();
          j->gate->revoke_dropped();
          return j->done("");
        }
        if (!j->ok) return j->done("cannot read token file " + j->path);
        auto tokens = parse_token_file(j->text, &error);
        if (!tokens) return j->done(j->path + ": " + error);
        for (auto& t : *tokens) j->gate->digest_token(t);
        j->gate->tokens_ = std::move(*tokens);
        j->gate->revoke_dropped();
        warn_if_others_can_read(j->path);
        j->done("");
      });
}

const TokenEntry* AuthGate::find(std::string_view token) const {
  // Every entry is compared, digest to digest in fixed time, whatever matches.
  std::array<unsigned char, 32> presented{};
  crypto_->SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), presented.data());
  const TokenEntry* found = nullptr;
  for (const auto& t : tokens_) {
    if (crypto_->CRYPTO_memcmp(t.digest.data(), presented.data(), presented.size()) == 0 && found == nullptr)
      found = &t;
  }
  return found;
}

HeadCheck AuthGate::judge(const HttpRequest& request) const {
  if (!enabled()) return {std::nullopt, true};  // no credentials to show: everyone is in
  if (is_open_path(request.path())) return {};
  std::string_view name;
  Role role;
  const TokenEntry* who = nullptr;
  const std::string* header = request.header("Authorization");
  size_t authorizations = 0;
  for (const auto& h : request.headers) authorizations += iequals(h.name, "Authorization") ? 1 : 0;
  if (authorizations > 1) {
    // Which one a proxy on the way read is anyone's guess: refuse, as the API server does.
    return {deny(request.path(), 400, "more than one Authorization header"), false};
  }
  if (granted_) {
    if (allowed(*granted_, "", request.method, request.path())) return {std::nullopt, true};
    return {deny(request.path(), 403,
                 granted_serves_ + "; not " + std::string(request.method) + " " + std::string(request.path())),
            false};
  }
  if (header == nullptr && client_certificates_ && !request.peer_name.empty()) {
    // A client certificate the TLS layer verified against --tls-client-ca:
    // its common name is the agent's host.
    name = request.peer_name;
    role = Role::kAgent;
  } else if (auto token = bearer_token(header); !token) {
    return {deny(request.path(), 401, "a bearer token is required"), false};
  } else {
    who = find(*token);
    if (who == nullptr) return {deny(request.path(), 401, "the token is not valid"), false};
    name = who->name;
    role = who->role;
  }
  std::string principal = who ? std::string(reinterpret_cast<const char*>(who->digest.data()), who->digest.size()) : "";
  if (!allowed(role, name, request.method, request.path()) && !is_self_review(request.method, request.path())) {
    log_warn("access_denied")
        .kv("name", name)
        .kv("role", role_name(role))
        .kv("method", std::string(request.method))
        .kv("path", std::string(request.path()));
    return {deny(request.path(), 403,
                 std::string(role_name(role)) + " " + std::string(name) + " may not " + std::string(request.method) +
                     " " + std::string(request.path())),
            true, std::move(principal)};
  }
  return {std::nullopt, true, std::move(principal)};
}

// Judged on the head, before any of the body is read.
// Credentials first, then the client's rate: a bucket per token, per agent
// certificate, or per address without either.
HeadCheck AuthGate::check_head(const HttpRequest& head) {
  HeadCheck check = judge(head);
  if (check.refusal) return check;
  check.serve_over_limit = over_limit_paths_ && over_limit_paths_(head.path());
  if (limiter_ == nullptr || !limiter_->enabled()) return check;
  std::string client = !check.principal.empty()  ? "token:" + check.principal
                       : !head.peer_name.empty() ? "cert:" + head.peer_name
                                                 : "addr:" + head.peer_address;
  if (auto wait_s = limiter_->admit(client, head.path())) {
    check.refusal =
        deny(head.path(), 429, "too many requests from this client; retry after " + std::to_string(*wait_s) + " s");
    check.refusal->headers.push_back({"Retry-After", std::to_string(*wait_s)});
  }
  return check;
}

void AuthGate::handle(HttpRequest& request, Responder responder) {
  // Judged on its head already, unless it came some other way (an embedder, a test).
  std::string principal = request.principal;
  if (!request.head_checked) {
    HeadCheck check = judge(request);
    if (check.refusal) return responder.send(std::move(*check.refusal));
    principal = std::move(check.principal);
  }
  if (!principal.empty()) admit(principal, responder);
  if (is_self_review(request.method, request.path())) {
    return responder.send(answer_self_review(request, caller_of(request)));
  }
  next_.handle(request, std::move(responder));
}

// Who the credentials of a request judge() let in name.
Caller AuthGate::caller_of(const HttpRequest& request) const {
  if (!enabled()) return {"", Role::kAdmin, "none: without a token file every caller is admin"};
  if (granted_) return {"", *granted_, granted_serves_};
  if (auto token = bearer_token(request.header("Authorization"))) {
    if (const TokenEntry* who = find(*token)) return {who->name, who->role, "token"};
  }
  return {request.peer_name, Role::kAgent, "client certificate"};
}

void AuthGate::admit(const std::string& token_digest, const Responder& responder) {
  admitted_[token_digest].push_back(responder.watch());
  if (++admitted_count_ < prune_at_) return;
  admitted_count_ = 0;
  for (auto it = admitted_.begin(); it != admitted_.end();) {
    auto& list = it->second;
    list.erase(std::remove_if(list.begin(), list.end(), [](const auto& w) { return w.expired(); }), list.end());
    admitted_count_ += list.size();
    it = list.empty() ? admitted_.erase(it) : std::next(it);
  }
  prune_at_ = std::max<size_t>(1024, admitted_count_ * 2);
}

// After a reload: what a token no longer in the file let in, and is still
// open (an agent's stream, a reader's watch), is closed now.
void AuthGate::revoke_dropped() {
  size_t closed = 0;
  for (auto it = admitted_.begin(); it != admitted_.end();) {
    bool kept = std::any_of(tokens_.begin(), tokens_.end(), [&](const TokenEntry& t) {
      return std::equal(t.digest.begin(), t.digest.end(), it->first.begin(), it->first.end(),
                        [](unsigned char a, char b) { return a == static_cast<unsigned char>(b); });
    });
    if (kept) {
      ++it;
      continue;
    }
    for (const auto& w : it->second) closed += Responder::close_connection(w) ? 1 : 0;
    it = admitted_.erase(it);
  }
  if (closed > 0) log_warn("revoked_connections_closed").kv("connections", static_cast<uint64_t>(closed));
}

}  // namespace uvsched
