// The scheduling API objects uvsched serves beside pods, described for the
// ObjectRegistry: PodGroup (scheduling.x-k8s.io/v1alpha1, the coscheduling
// plugin's: spec.minMember, spec.scheduleTimeoutSeconds; status.phase and
// its counts) and PriorityClass (scheduling.k8s.io/v1: value, globalDefault,
// preemptionPolicy; the two system classes built in). And PriorityClassBook:
// the classes as the store has them, resolving a new pod's priority.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "handlers/json_value.h"
#include "handlers/pods/object_registry.h"
#include "policy/priority.h"
#include "reactor/http_server.h"
#include "storage/prefix_informer.h"

namespace uvsched {

ObjectKind pod_group_kind();
ObjectKind priority_class_kind();

// What the scheduler reads of a PodGroup object.
struct PodGroupSpec {
  int64_t min_member = 1;
  uint64_t timeout_s = 0;  // 0: waits as long as it takes
};
PodGroupSpec pod_group_spec(const JsonValue& group);
// What the scheduler reads of a PriorityClass object.
PriorityClassInfo priority_class_info(const JsonValue& pc);

class PriorityClassBook {
 public:
  PriorityClassBook(Store& store, Clock& clock);
  void start() { informer_.start(); }
  bool loaded() const { return informer_.loaded(); }
  // `cb` once the classes are first read (now, if they are).
  void when_loaded(std::function<void()> cb);
  void stop() { informer_.stop(); }
  // Sets spec.priority (and priorityClassName, preemptionPolicy) on a new
  // pod, or the refusal the API server gives (403; 503 if asked before the
  // classes are first read: see when_loaded).
  std::optional<HttpResponse> admit(JsonValue& pod) const;
  const PriorityClasses& classes() const { return classes_; }
  // A class that would be a second globalDefault is refused, as Kubernetes'
  // Priority admission plugin does: the message, or nullopt.
  std::optional<std::string> second_default(const JsonValue& pc) const;

 private:
  PrefixInformer informer_;
  PriorityClasses classes_;
  std::vector<std::function<void()>> waiting_;  // for the first read
};

}  // namespace uvsched
