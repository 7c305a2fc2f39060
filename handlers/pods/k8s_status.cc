#include "handlers/pods/k8s_status.h"

#include "handlers/json_response.h"
#include "reactor/json_writer.h"

namespace uvsched {

HttpResponse k8s_object(int status, std::string json) { return json_response(status, std::move(json)); }

std::string k8s_status_json(int code, std::string_view reason, std::string_view message, std::string_view kind,
                            std::string_view name) {
  JsonWriter w;
  w.begin_object().key("kind").value("Status").key("apiVersion").value("v1");
  w.key("metadata").begin_object().end_object();
  w.key("status").value(code < 400 ? "Success" : "Failure");
  w.key("message").value(message).key("reason").value(reason);
  // apimachinery's NotFound, AlreadyExists, Conflict, Forbidden and
  // MethodNotAllowed always carry details, `{}` when they name nothing (a
  // path the server does not serve): `kubectl debug` reads .details.name of a
  // 404 without checking they are there, and dies of a nil pointer.
  bool always = reason == "NotFound" || reason == "AlreadyExists" || reason == "Conflict" || reason == "Forbidden" ||
                reason == "MethodNotAllowed";
  if (always || !kind.empty() || !name.empty()) {
    w.key("details").begin_object();
    if (!name.empty()) w.key("name").value(name);
    if (!kind.empty()) w.key("kind").value(kind);
    w.end_object();
  }
  w.key("code").value(code).end_object();
  return w.take();
}

HttpResponse k8s_error(int code, std::string_view reason, std::string_view message, std::string_view kind,
                       std::string_view name) {
  HttpResponse r = k8s_object(code, k8s_status_json(code, reason, message, kind, name));
  if (code == 503 || code == 429) r.headers.push_back({"Retry-After", "1"});
  return r;
}

std::string_view k8s_reason_for(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 408:
      return "Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "";
  }
}

HttpResponse k8s_bad_request(std::string_view message, const std::vector<FieldIssue>& causes, std::string_view kind,
                             std::string_view name) {
  return k8s_error_with_causes(400, "BadRequest", message, causes, kind, name);
}

HttpResponse k8s_error_with_causes(int code, std::string_view reason, std::string_view message,
                                   const std::vector<FieldIssue>& causes, std::string_view kind,
                                   std::string_view name) {
  JsonWriter w;
  w.begin_object().key("kind").value("Status").key("apiVersion").value("v1");
  w.key("metadata").begin_object().end_object().key("status").value("Failure");
  w.key("message").value(message).key("reason").value(reason);
  w.key("details").begin_object();
  if (!name.empty()) w.key("name").value(name);
  if (!kind.empty()) w.key("kind").value(kind);
  w.key("causes").begin_array();
  for (const auto& c : causes) {
    w.begin_object().key("reason").value(c.reason).key("message").value(c.message);
    if (!c.field.empty()) w.key("field").value(c.field);  // a cause about no one field has none (omitempty)
    w.end_object();
  }
  w.end_array().end_object().key("code").value(code).end_object();
  return k8s_object(code, w.take());
}

HttpResponse k8s_request_invalid(std::string_view message) {
  JsonWriter w;
  w.begin_object().key("kind").value("Status").key("apiVersion").value("v1");
  w.key("metadata").begin_object().end_object().key("status").value("Failure");
  w.key("message").value(message).key("reason").value("Invalid");
  w.key("details").begin_object().key("causes").begin_array();
  w.begin_object().key("reason").value("UnexpectedServerResponse").key("message").value(message).end_object();
  w.end_array().end_object().key("code").value(422).end_object();
  return k8s_object(422, w.take());
}

}  // namespace uvsched
