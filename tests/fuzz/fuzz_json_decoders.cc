// Every JSON decoder of a wire type on arbitrary bytes: KubeML's TrainRequest,
// TrainTask and InferRequest, and a pod through validation, defaults, the
// scheduler's needs and a merge patch with itself; the input as a strategic
// merge patch and as a JSON patch of a pod, and the update check between the
// pod and its patched self; the typed decoder as a pod, a namespace and each
// kind of the object registry (what it keeps decodes again without a type
// error), and the bytes as a protobuf Namespace; the input as a server-side apply configuration over a
// pod (forced or not, and again) and as managedFields' FieldsV1; the input
// as a PodDisruptionBudget (admitted as a create and as an update, read as
// a budget, its status computed and written) and as a pod a budget counts,
// and the bytes as a protobuf PodDisruptionBudget. Errors, never crashes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "handlers/json_body.h"
#include "handlers/json_value.h"
#include "handlers/ml/kubeml_types.h"
#include "handlers/pods/disruption_budget_objects.h"
#include "handlers/pods/field_manager.h"
#include "handlers/pods/json_patch.h"
#include "handlers/pods/k8s_protobuf.h"
#include "handlers/pods/pod_needs.h"
#include "handlers/pods/pod_validation.h"
#include "handlers/pods/strategic_merge.h"
#include "handlers/pods/typed_decode.h"

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
  if (auto ns = uvsched::namespace_from_protobuf(text, &error)) ns->dump();
  if (auto review = uvsched::self_review_from_protobuf(text, &error)) review->dump();
  if (auto pdb = uvsched::pod_disruption_budget_from_protobuf(text, &error)) pdb->dump();
  auto pod = uvsched::JsonValue::parse(text, &error);
  if (pod) {
    for (const char* type : {"io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.Namespace",
                             "io.k8s.api.policy.v1.PodDisruptionBudget", "io.k8s.api.scheduling.v1.PriorityClass",
                             "io.x-k8s.scheduling.v1alpha1.PodGroup"}) {
      uvsched::JsonValue typed = *pod;
      auto decoded = uvsched::decode_typed(typed, *uvsched::schema_type(type));
      decoded.message("Pod", uvsched::FieldValidation::kStrict);
      decoded.warnings();
      if (decoded.type_errors.empty()) {
        auto again = uvsched::decode_typed(typed, *uvsched::schema_type(type));
        if (!again.type_errors.empty() || !again.unknown.empty() || !again.duplicate.empty()) __builtin_trap();
      }
    }
    if (pod->is_object()) {
      static const uvsched::ObjectKind kBudgets = uvsched::pod_disruption_budget_kind();
      uvsched::JsonValue created = *pod, updated = *pod;
      kBudgets.admit(created, nullptr);
      kBudgets.admit(updated, &*pod);
      if (auto budget = uvsched::read_budget(created)) {
        uvsched::BudgetPodView view = uvsched::budget_pod_view(*pod);
        std::vector<uvsched::BudgetPod> pods;
        if (budget->selects(view.labels)) pods.push_back(view.pod);
        uvsched::BudgetStatus st = uvsched::budget_status(budget->spec, pods, budget->disrupted, 1'800'000'000'000);
        uvsched::check_eviction(budget->spec, st, view.pod.healthy);
        uvsched::budget_status_json(st, budget->generation, created.get("status"), 1'800'000'000'000).dump();
      }
      for (const auto& c : kBudgets.columns) c.cell(created);  // kubectl get pdb's row
    }
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
    static const uvsched::JsonValue kPod = *uvsched::JsonValue::parse(
        R"({"metadata":{"name":"p","labels":{"a":"1"},"finalizers":["f"]},"spec":{"containers":[{"name":"c",)"
        R"("image":"i","ports":[{"containerPort":80}],"env":[{"name":"E","value":"v"}]}],"tolerations":[{"key":"k"}]},)"
        R"("status":{"conditions":[{"type":"Ready","status":"True"}]}})",
        &error);
    uvsched::JsonValue merged = kPod;
    if (uvsched::strategic_merge(merged, *pod, "", &error)) uvsched::validate_pod_update(kPod, merged);
    uvsched::JsonValue status = *kPod.get("status");
    uvsched::strategic_merge(status, *pod, "status", &error);
    for (bool force : {false, true}) {
      uvsched::JsonValue live = kPod;
      uvsched::apply_config(live, kPod, "a", false, "t");
      if (uvsched::apply_config(live, *pod, "b", force, "t").empty()) {
        uvsched::managed_entries(live);
        uvsched::record_update(&kPod, live, "c", "t");
        if (!uvsched::JsonValue::parse(live.dump(), &error)) __builtin_trap();
      }
    }
    if (auto fields = uvsched::FieldSet::from_v1(*pod)) {
      for (const auto& p : fields->paths()) {
        uvsched::value_at(kPod, p);
        uvsched::display_path(p);
      }
      if (uvsched::FieldSet::from_v1(fields->to_v1())->paths() != fields->paths()) __builtin_trap();
    }
    uvsched::JsonValue patched = kPod;
    if (uvsched::apply_json_patch(patched, *pod, &error)) uvsched::validate_pod_update(kPod, patched);
  }
  return 0;
}
