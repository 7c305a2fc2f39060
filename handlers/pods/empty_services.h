// Services, which uvsched does not run (no kube-proxy, no endpoints: a pod is
// reached on the agent that runs it), served as the API server would serve
// a cluster that has none: list and get (none found), and a clear 405 for a
// create. kubectl cluster-info lists the kube-system services to say where
// the control plane is, and fails without the resource.
#pragma once

#include "handlers/router.h"

namespace uvsched {

void add_empty_service_routes(Router& router);

}  // namespace uvsched
