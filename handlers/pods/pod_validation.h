// What the API server checks and fills in before a pod is stored: DNS-1123
// names, containers with a name and an image, well-formed quantities and
// ports, and the defaults (uid, creationTimestamp, namespace, phase Pending,
// restartPolicy Always).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "handlers/json_value.h"
#include "handlers/pods/k8s_status.h"  // FieldIssue

namespace uvsched {

bool is_dns1123_label(std::string_view s);
bool is_dns1123_subdomain(std::string_view s);

// Kubernetes' qualified name (a label or annotation key, a finalizer):
// [prefix/]name, the prefix a DNS subdomain, the name up to 63 alphanumerics,
// '-', '_' or '.'. The API server's messages; empty when valid.
std::vector<std::string> qualified_name_errors(std::string_view s);
// A label value: empty or up to 63 of the qualified name's characters.
std::vector<std::string> label_value_errors(std::string_view v);
// A map of label keys to values (metadata.labels, spec.nodeSelector) at `field`.
void validate_labels(const JsonValue* labels, const std::string& field, std::vector<FieldIssue>* out);
// A pod's spec.tolerations as the API server checks them (ValidateTolerations).
void validate_tolerations(const JsonValue* list, const std::string& field, std::vector<FieldIssue>* out);
// A node's spec.taints (validateNodeTaints): key, value, effect, unique by key and effect.
void validate_taints(const JsonValue* list, const std::string& field, std::vector<FieldIssue>* out);

std::vector<FieldIssue> validate_pod(const JsonValue& pod);
// A NodeSelector (a required node affinity) at `at`, as the API server checks one.
void validate_node_affinity(const JsonValue* required, const std::string& at, std::vector<FieldIssue>* out);
// A metav1.LabelSelector at `at` (ValidateLabelSelector): matchLabels as
// labels, each of matchExpressions' keys, operators (In, NotIn, Exists,
// DoesNotExist) and values.
void validate_label_selector(const JsonValue* selector, const std::string& at, std::vector<FieldIssue>* out);
std::vector<FieldIssue> validate_object_name(const JsonValue& obj);
// What the API server checks of every object's metadata: its name (and
// generateName), its labels, its annotations' keys and their 256 KiB in all,
// its finalizers' names.
std::vector<FieldIssue> validate_object_meta(const JsonValue& obj);
// What Kubernetes lets an update change in a stored pod's spec: its
// containers' images, activeDeadlineSeconds (set, or lowered: never raised
// nor taken away), tolerations (additions only) and
// schedulingGates (removals, before the pod is bound). The pod was placed, and
// its task launched, by everything else. Nor may a pod being deleted gain a
// finalizer. Empty when `next` keeps to that.
std::vector<FieldIssue> validate_pod_update(const JsonValue& old_pod, const JsonValue& next);
// The images of a pod's init containers, then of its containers, in order:
// what a kubelet restarts a container for when an update changes it.
std::vector<std::string> container_images(const JsonValue& pod);

// Fills what a client may leave out. `now_rfc3339` becomes creationTimestamp.
void default_pod(JsonValue& pod, const std::string& ns, const std::string& uid, const std::string& now_rfc3339);

// "Pod \"x\" is invalid: field: message, ..." and the Status causes.
std::string invalid_status_json(std::string_view kind, std::string_view name, const std::vector<FieldIssue>& issues);

std::string rfc3339(int64_t unix_ms);
// A timestamp as RFC 3339 (what rfc3339 writes, and what clients send:
// fractional seconds, "Z" or a "+hh:mm" offset) in Unix milliseconds.
std::optional<int64_t> parse_rfc3339_ms(std::string_view s);
std::string new_uid();

}  // namespace uvsched
