// GET /ui/: the status page (issue 23), its files served from memory. The
// files hold no data: every figure comes from the API's JSON endpoints, which
// the page calls with the operator's token, so the files are open to anyone
// (policy/access.cc) and the data behind them is not.
#pragma once

#include <string_view>

#include "handlers/router.h"

namespace uvsched {

void add_ui_routes(Router& router);

// Whether an Accept-Encoding value takes gzip (a q of 0 refuses it).
bool accepts_gzip(std::string_view accept_encoding);

}  // namespace uvsched
