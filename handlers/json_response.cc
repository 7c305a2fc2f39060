#include "handlers/json_response.h"

#include "reactor/json_writer.h"

namespace uvsched {

HttpResponse json_response(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

HttpResponse json_error(int status, std::string_view message, std::string_view field) {
  JsonWriter w;
  w.begin_object().key("error").value(message);
  if (!field.empty()) w.key("field").value(field);
  w.end_object();
  return json_response(status, w.take());
}

HttpResponse text_response(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

}  // namespace uvsched
