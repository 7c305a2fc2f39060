// JSON replies and the uniform error body {"error":..., "field":...}.
#pragma once

#include <string>
#include <string_view>

#include "reactor/http_message.h"

namespace uvsched {

HttpResponse json_response(int status, std::string body);
HttpResponse json_error(int status, std::string_view message, std::string_view field = {});
HttpResponse text_response(int status, std::string body);

}  // namespace uvsched
