// What binds a pod to its task, written on the pod when it is launched: its
// node (spec.nodeName) and the uvsched.io annotations naming the agent, the
// task, the offer and the images launched. A successor recovers the task
// from them; unbinding takes them off.
#pragma once

#include "handlers/json_value.h"

namespace uvsched {

inline constexpr const char* kHostAnnotation = "uvsched.io/bindingHost";
inline constexpr const char* kTaskAnnotation = "uvsched.io/taskId";
inline constexpr const char* kAgentAnnotation = "uvsched.io/agentId";
inline constexpr const char* kOfferAnnotation = "uvsched.io/offerId";
// The images its task was launched with (a JSON array, init containers
// first): a successor that finds others in the spec restarts the task.
inline constexpr const char* kImagesAnnotation = "uvsched.io/launchedImages";

// The binding taken off a pod: its node and the annotations naming its task.
void unbind(JsonValue& pod);

}  // namespace uvsched
