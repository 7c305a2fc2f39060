#include "handlers/router.h"

#include <algorithm>
#include <exception>

#include "handlers/json_response.h"
#include "reactor/log.h"
#include "reactor/url.h"

namespace uvsched {
namespace {

template <typename Segments>
Segments split_path(std::string_view path) {
  Segments out;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    out.push_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

bool is_param(std::string_view seg) { return seg.size() > 2 && seg.front() == '{' && seg.back() == '}'; }

}  // namespace

const std::string& RequestContext::param(std::string_view name) const {
  static const std::string kEmpty;
  for (const auto& [k, v] : params) {
    if (k == name) return v;
  }
  return kEmpty;
}

void Router::add(std::string_view method, std::string_view pattern, RouteHandler handler) {
  Route& r = routes_.emplace_back();
  r.method = std::string(method);
  r.pattern = std::string(pattern);
  for (auto seg : split_path<std::vector<std::string_view>>(pattern)) r.segments.emplace_back(seg);
  r.handler = std::move(handler);
  bool literal = std::none_of(r.segments.begin(), r.segments.end(), [](const std::string& s) { return is_param(s); });
  if (literal) {
    literal_[r.pattern].push_back(&r);
  } else {
    parametric_[r.segments.size()].push_back(&r);
  }
}

void Router::set_not_found(std::string_view prefix, RouteHandler handler) {
  not_found_.emplace_back(std::string(prefix), std::move(handler));
}

void Router::set_refusal(std::string_view prefix, Refusal refusal) {
  refusals_.emplace_back(std::string(prefix), std::move(refusal));
}

HttpResponse Router::refusal(int status, std::string_view message, const HttpRequest& head) {
  std::string_view path = head.path();
  for (auto& [prefix, refusal] : refusals_) {
    if (path.substr(0, prefix.size()) == prefix) return refusal(status, message);
  }
  return RequestHandler::refusal(status, message, head);
}

bool Router::match(const Route& route, const Segments& segments,
                   std::vector<std::pair<std::string_view, std::string>>* params) const {
  if (route.segments.size() != segments.size()) return false;
  // Literal segments first: most routes are ruled out without decoding (and
  // allocating) a parameter.
  for (size_t i = 0; i < segments.size(); ++i) {
    if (!is_param(route.segments[i]) && route.segments[i] != segments[i]) return false;
  }
  params->clear();
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string& want = route.segments[i];
    if (!is_param(want)) continue;
    auto decoded = percent_decode(segments[i], false);
    if (!decoded || decoded->empty()) return false;
    params->emplace_back(std::string_view(want).substr(1, want.size() - 2), std::move(*decoded));
  }
  return true;
}

void Router::handle(HttpRequest& request, Responder responder) {
  std::string_view path = request.path();
  RequestContext ctx{request, std::move(responder), {}};

  absl::InlinedVector<Route*, 4> candidates;
  std::vector<std::pair<std::string_view, std::string>> params;
  Route* chosen = nullptr;
  auto consider = [&](Route* r, std::vector<std::pair<std::string_view, std::string>>&& p) {
    candidates.push_back(r);
    bool method_ok = r->method == request.method || (request.method == "HEAD" && r->method == "GET");
    if (method_ok && chosen == nullptr) {
      chosen = r;
      ctx.params = std::move(p);
    }
  };

  if (auto it = literal_.find(path); it != literal_.end()) {
    for (Route* r : it->second) consider(r, {});
  }
  if (chosen == nullptr && !parametric_.empty()) {
    auto segments = split_path<Segments>(path);
    if (auto depth = parametric_.find(segments.size()); depth != parametric_.end()) {
      for (Route* r : depth->second) {
        if (match(*r, segments, &params)) consider(r, std::move(params));
        if (chosen != nullptr) break;  // the others would only name methods for a 405
      }
    }
  }

  if (chosen != nullptr) {
    ctx.responder.set_label(chosen->pattern);
    try {
      chosen->handler(ctx);
    } catch (const std::exception& e) {
      log_error("handler_exception").kv("route", chosen->pattern).kv("what", e.what());
      ctx.reply(json_error(500, "internal error"));
    }
    return;
  }
  if (!candidates.empty()) {
    std::string allow;
    for (Route* r : candidates) {
      if (allow.find(r->method) != std::string::npos) continue;
      if (!allow.empty()) allow += ", ";
      allow += r->method;
    }
    ctx.responder.set_label(candidates.front()->pattern);
    HttpResponse r =
        refusal(405, "method " + std::string(request.method) + " not allowed on " + std::string(path), request);
    r.headers.push_back({"Allow", allow});
    ctx.reply(std::move(r));
    return;
  }
  for (auto& [prefix, handler] : not_found_) {
    if (path.substr(0, prefix.size()) == prefix) {
      handler(ctx);
      return;
    }
  }
  ctx.reply(json_error(404, "no route for " + std::string(request.method) + " " + std::string(path)));
}

}  // namespace uvsched
