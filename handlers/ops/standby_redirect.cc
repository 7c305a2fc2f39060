#include "handlers/ops/standby_redirect.h"

#include <simdjson.h>

#include "handlers/json_response.h"
#include "reactor/json_writer.h"

namespace uvsched {

void StandbyRedirect::handle(HttpRequest& request, Responder responder) {
  std::optional<std::optional<std::string>> standby = view_ ? view_() : std::nullopt;
  std::string_view path = request.path();
  if (!standby || path == "/health" || path == "/healthz" || path == "/readyz" || path == "/metrics" ||
      path == "/v1/status") {
    return next_.handle(request, std::move(responder));
  }
  if (!*standby) {
    HttpResponse r = json_error(503, "this uvsched is a standby and no leader is known yet; try again");
    r.headers.push_back({"Retry-After", "1"});
    return responder.send(std::move(r));
  }
  std::string location = **standby + request.target;
  HttpResponse r = json_error(307, "this uvsched is a standby; the leader is " + **standby);
  r.headers.push_back({"Location", std::move(location)});
  responder.send(std::move(r));
}

std::string leader_record(const std::string& identity, const std::string& url) {
  JsonWriter w;
  w.begin_object().key("id").value(identity).key("url").value(url).end_object();
  return w.take();
}

std::optional<std::string> leader_record_url(const std::string& record) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  std::string_view url;
  if (parser.parse(record).get(doc) || doc["url"].get(url) || url.empty()) return std::nullopt;
  return std::string(url);
}

}  // namespace uvsched
