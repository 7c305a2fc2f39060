// Routes a request to a handler by method and path pattern ("/finish/{id}").
// Answers 404 for an unknown path and 405 with Allow for a known path asked
// with the wrong method. The matched pattern becomes the metrics label.
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <absl/container/inlined_vector.h>

#include "reactor/http_server.h"

namespace uvsched {

struct RequestContext {
  HttpRequest& request;
  Responder responder;
  std::vector<std::pair<std::string_view, std::string>> params;

  // The decoded value of a {name} segment; empty when the route has none.
  const std::string& param(std::string_view name) const;
  void reply(HttpResponse&& r) { responder.send(std::move(r)); }
};

using RouteHandler = std::function<void(RequestContext&)>;

class Router final : public RequestHandler {
 public:
  // pattern: literal segments and {name} segments, e.g. "/v1/agents/{host}/offers/{id}".
  void add(std::string_view method, std::string_view pattern, RouteHandler handler);
  // Answers paths under `prefix` that no route matches (e.g. Kubernetes Status 404s).
  void set_not_found(std::string_view prefix, RouteHandler handler);
  // Words the server's refusals (too large, malformed, too slow) of requests
  // under `prefix` (e.g. as Kubernetes Status objects).
  using Refusal = std::function<HttpResponse(int status, std::string_view message)>;
  void set_refusal(std::string_view prefix, Refusal refusal);

  void handle(HttpRequest& request, Responder responder) override;
  HttpResponse refusal(int status, std::string_view message, const HttpRequest& head) override;

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;  // "{x}" marks a parameter
    RouteHandler handler;
  };

  // A path's segments: held inline, as no route is deeper than this.
  using Segments = absl::InlinedVector<std::string_view, 8>;
  bool match(const Route& route, const Segments& segments,
             std::vector<std::pair<std::string_view, std::string>>* params) const;

  std::deque<Route> routes_;  // deque: stable addresses, patterns double as labels
  struct PathHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, std::vector<Route*>, PathHash, std::equal_to<>> literal_;
  // Routes with parameters, in the order they were added, by their number of
  // segments: a path is matched against the routes of its own depth only.
  std::unordered_map<size_t, std::vector<Route*>> parametric_;
  std::vector<std::pair<std::string, RouteHandler>> not_found_;
  std::vector<std::pair<std::string, Refusal>> refusals_;
};

}  // namespace uvsched
