// What kubectl and the clients ask before anything else: /version, /api,
// /api/v1 (the resources and their verbs) and the OpenAPI
// documents kubectl reads to validate a manifest before it sends it. (/apis
// and its groups are the ObjectRegistry's.)
#pragma once

#include "handlers/router.h"

namespace uvsched {

void add_discovery_routes(Router& router);

}  // namespace uvsched
