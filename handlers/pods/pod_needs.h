// What a pod asks of an agent, read from its spec: cpus and memory summed
// over containers (request, else limit, else the default), host ports,
// nodeName and nodeSelector.
#pragma once

#include "handlers/json_value.h"
#include "policy/placement.h"

namespace uvsched {

PodNeeds pod_needs(const JsonValue& pod);

}  // namespace uvsched
