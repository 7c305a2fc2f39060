// Kubernetes-shaped replies: objects as application/json, and every error as
// a meta/v1 Status with reason and code, as kubectl and the clients expect.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reactor/http_message.h"

namespace uvsched {

HttpResponse k8s_object(int status, std::string json);
// reason: NotFound, AlreadyExists, Conflict, Invalid, BadRequest, MethodNotAllowed,
// UnsupportedMediaType, ServiceUnavailable, Expired, InternalError.
HttpResponse k8s_error(int code, std::string_view reason, std::string_view message, std::string_view kind = {},
                       std::string_view name = {});
// The StatusReason the API server gives a code (metav1's): RequestEntityTooLarge
// for 413, Timeout for 408, and so on; "" (Unknown) for a code it has none for.
std::string_view k8s_reason_for(int code);
// A 422 Invalid that is about the request rather than one field (a JSON patch
// that cannot be applied): as the API server's generic 422, its message is
// also its one cause, which is what kubectl before 1.2x prints.
HttpResponse k8s_request_invalid(std::string_view message);
// One cause of a Status: a field and what is wrong with it.
struct FieldIssue {
  std::string field;    // e.g. spec.containers[0].image
  std::string reason;   // FieldValueRequired, FieldValueInvalid, FieldValueTypeInvalid, ...
  std::string message;  // e.g. Required value
};
// 400 BadRequest with every cause (a body the typed decoder refused).
HttpResponse k8s_bad_request(std::string_view message, const std::vector<FieldIssue>& causes, std::string_view kind,
                             std::string_view name);
// Any failure with its causes (a server-side apply's 409 names each field and its manager).
HttpResponse k8s_error_with_causes(int code, std::string_view reason, std::string_view message,
                                   const std::vector<FieldIssue>& causes, std::string_view kind, std::string_view name);
std::string k8s_status_json(int code, std::string_view reason, std::string_view message, std::string_view kind = {},
                            std::string_view name = {});

}  // namespace uvsched
