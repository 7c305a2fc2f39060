// Every JSON decoder of a wire type on arbitrary bytes: KubeML's TrainRequest,
// TrainTask and InferRequest, and a pod through validation, defaults, the
// scheduler's needs and a merge patch with itself. Errors, never crashes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "handlers/json_body.h"
#include "handlers/json_value.h"
#include "handlers/ml/kubeml_types.h"
#include "handlers/pods/pod_needs.h"
#include "handlers/pods/pod_validation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  static simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (!uvsched::parse_json_object(parser, text, &obj)) {
    uvsched::TrainRequest req;
    uvsched::parse_train_request(obj, "", &req);
    uvsched::TrainTask task;
    uvsched::parse_train_task(obj, &task);
    uvsched::InferRequest infer;
    uvsched::parse_infer_request(obj, &infer);
  }
  std::string error;
  auto pod = uvsched::JsonValue::parse(text, &error);
  if (pod) {
    auto issues = uvsched::validate_pod(*pod);
    uvsched::invalid_status_json("Pod", "x", issues);
    if (pod->is_object()) {
      uvsched::JsonValue copy = *pod;
      uvsched::default_pod(copy, "default", "uid", "2026-01-01T00:00:00Z");
      uvsched::pod_needs(copy);
      copy.merge_patch(*pod);
      auto again = uvsched::JsonValue::parse(copy.dump(), &error);  // what we write, we read back
      if (!again) __builtin_trap();
    }
  }
  return 0;
}
