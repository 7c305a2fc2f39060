#include "handlers/pods/resource_version_check.h"

#include <charconv>
#include <memory>
#include <string>

#include "handlers/pods/k8s_status.h"
#include "reactor/json_writer.h"
#include "reactor/url.h"

namespace uvsched {

std::optional<int64_t> requested_resource_version(const HttpRequest& request) {
  if (request.method != "GET") return std::nullopt;
  std::string_view path = request.path();
  if (!path.starts_with("/api/") && !path.starts_with("/apis/")) return std::nullopt;
  auto rv = query_param(request.query(), "resourceVersion");
  if (!rv || rv->empty()) return std::nullopt;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(rv->data(), rv->data() + rv->size(), n);
  if (ec != std::errc() || end != rv->data() + rv->size() || n <= 0) return std::nullopt;
  return n;
}

HttpResponse too_large_resource_version(int64_t requested, int64_t current) {
  JsonWriter w;
  w.begin_object().key("kind").value("Status").key("apiVersion").value("v1");
  w.key("metadata").begin_object().end_object().key("status").value("Failure");
  w.key("message").value("Timeout: Too large resource version: " + std::to_string(requested) +
                         ", current: " + std::to_string(current));
  w.key("reason").value("Timeout").key("details").begin_object();
  w.key("causes").begin_array().begin_object().key("reason").value("ResourceVersionTooLarge");
  w.key("message").value("Too large resource version").end_object().end_array();
  w.key("retryAfterSeconds").value(1).end_object().key("code").value(504).end_object();
  HttpResponse r = k8s_object(504, w.take());
  r.headers.push_back({"Retry-After", "1"});
  return r;
}

void ResourceVersionCheck::handle(HttpRequest& request, Responder responder) {
  std::optional<int64_t> rv = requested_resource_version(request);
  if (!store_ || !rv || *rv <= store_->revision()) return next_.handle(request, std::move(responder));
  // Ahead of what this daemon has seen: ask the store where it is.
  auto held = std::make_shared<HttpRequest>(std::move(request));
  RangeOptions probe;
  probe.keys_only = true;
  probe.limit = 1;
  store_->get("/registry/namespaces/default", probe, [this, held, responder, requested = *rv](RangeResult&& r) mutable {
    // A store that cannot say is the handler's to answer (503).
    if (r.status.ok() && requested > r.revision)
      return responder.send(too_large_resource_version(requested, r.revision));
    next_.handle(*held, std::move(responder));
  });
}

}  // namespace uvsched
