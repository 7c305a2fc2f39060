#include "handlers/pods/pod_binding.h"

namespace uvsched {

void unbind(JsonValue& pod) {
  if (JsonValue* spec = pod.get("spec")) spec->erase("nodeName");
  if (JsonValue* ann = pod.find({"metadata"}) ? pod.get("metadata")->get("annotations") : nullptr) {
    for (const char* k : {kHostAnnotation, kTaskAnnotation, kAgentAnnotation, kOfferAnnotation, kImagesAnnotation}) {
      ann->erase(k);
    }
  }
}

}  // namespace uvsched
