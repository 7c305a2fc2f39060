#include "handlers/pods/api_schema.h"

namespace uvsched {
namespace {

using K = SchemaKind;

constexpr std::string_view kMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

std::vector<SchemaType> describe() {
  return {
      {"io.k8s.api.core.v1.Pod",
       "Pod",
       "A group of containers run together on one node (here: one agent's task).",
       {{"apiVersion", K::kString, {}, K::kString, "The schema version of this object: v1."},
        {"kind", K::kString, {}, K::kString, "The kind of this object: Pod."},
        {"metadata", K::kObject, kMeta, K::kString, "Standard object metadata."},
        {"spec", K::kObject, "io.k8s.api.core.v1.PodSpec", K::kString, "What the pod should run, and where it may."},
        {"status", K::kObject, "io.k8s.api.core.v1.PodStatus", K::kString,
         "What the pod is doing, as the scheduler and its agent report it."}},
       "Pod"},
      {"io.k8s.api.core.v1.PodSpec",
       "PodSpec",
       "The desired state of a pod.",
       {{"activeDeadlineSeconds", K::kInteger, {}, K::kString, "Seconds the pod may run before it is failed."},
        {"affinity", K::kFreeObject, {}, K::kString, "Node, pod and anti-pod affinity rules."},
        {"automountServiceAccountToken", K::kBoolean, {}, K::kString, "Whether a service account token is mounted."},
        {"containers", K::kArray, "io.k8s.api.core.v1.Container", K::kObject,
         "The containers of the pod; at least one.", "name"},
        {"dnsConfig", K::kFreeObject, {}, K::kString, "DNS parameters of the pod."},
        {"dnsPolicy", K::kString, {}, K::kString, "How the pod's DNS is set up."},
        {"enableServiceLinks", K::kBoolean, {}, K::kString, "Whether services are injected as environment variables."},
        {"ephemeralContainers", K::kArray, {}, K::kFreeObject, "Containers added for debugging.", "name"},
        {"hostAliases", K::kArray, {}, K::kFreeObject, "Entries added to the pod's hosts file.", "ip"},
        {"hostIPC", K::kBoolean, {}, K::kString, "Use the host's IPC namespace."},
        {"hostNetwork", K::kBoolean, {}, K::kString, "Use the host's network namespace."},
        {"hostPID", K::kBoolean, {}, K::kString, "Use the host's PID namespace."},
        {"hostUsers", K::kBoolean, {}, K::kString, "Use the host's user namespace."},
        {"hostname", K::kString, {}, K::kString, "The pod's hostname."},
        {"imagePullSecrets", K::kArray, {}, K::kFreeObject, "Secrets for pulling the images.", "name"},
        {"initContainers", K::kArray, "io.k8s.api.core.v1.Container", K::kObject,
         "Containers run one after another before the others start.", "name"},
        {"nodeName",
         K::kString,
         {},
         K::kString,
         "The node (agent) the pod is bound to; set by the scheduler, or by the user to skip it."},
        {"nodeSelector", K::kStringMap, {}, K::kString, "Labels a node must have for the pod to go there."},
        {"os", K::kFreeObject, {}, K::kString, "The operating system the pod needs."},
        {"overhead", K::kQuantityMap, {}, K::kString, "Resources the pod's runtime takes beyond its containers."},
        {"preemptionPolicy", K::kString, {}, K::kString, "Never, or PreemptLowerPriority."},
        {"priority", K::kInteger, {}, K::kString, "The pod's priority, resolved from priorityClassName."},
        {"priorityClassName", K::kString, {}, K::kString, "The PriorityClass giving the pod its priority."},
        {"readinessGates", K::kArray, {}, K::kFreeObject, "Extra conditions for the pod to be ready."},
        {"resourceClaims", K::kArray, {}, K::kFreeObject, "Dynamic resources the pod claims.", "name"},
        {"resources", K::kObject, "io.k8s.api.core.v1.ResourceRequirements", K::kString,
         "Resources for the pod as a whole."},
        {"restartPolicy", K::kString, {}, K::kString, "Always, OnFailure or Never."},
        {"runtimeClassName", K::kString, {}, K::kString, "The RuntimeClass to run the pod with."},
        {"schedulerName", K::kString, {}, K::kString, "The scheduler that places the pod."},
        {"schedulingGates", K::kArray, {}, K::kFreeObject, "While any is present, the pod is not scheduled.", "name"},
        {"securityContext", K::kFreeObject, {}, K::kString, "Security attributes of the pod."},
        {"serviceAccount", K::kString, {}, K::kString, "Deprecated alias of serviceAccountName."},
        {"serviceAccountName", K::kString, {}, K::kString, "The service account the pod runs as."},
        {"setHostnameAsFQDN", K::kBoolean, {}, K::kString, "Whether the hostname is the fully qualified name."},
        {"shareProcessNamespace", K::kBoolean, {}, K::kString, "One process namespace for all containers."},
        {"subdomain", K::kString, {}, K::kString, "The pod's DNS subdomain."},
        {"terminationGracePeriodSeconds", K::kInteger, {}, K::kString, "Seconds the pod gets to stop."},
        {"tolerations", K::kArray, "io.k8s.api.core.v1.Toleration", K::kObject, "Taints the pod tolerates."},
        {"topologySpreadConstraints", K::kArray, {}, K::kFreeObject, "How pods spread over topology domains."},
        {"volumes", K::kArray, {}, K::kFreeObject, "Volumes the containers may mount.", "name"}}},
      {"io.k8s.api.core.v1.Container",
       "Container",
       "One container of a pod.",
       {{"args", K::kArray, {}, K::kString, "Arguments to the entrypoint."},
        {"command", K::kArray, {}, K::kString, "The entrypoint, instead of the image's."},
        {"env", K::kArray, "io.k8s.api.core.v1.EnvVar", K::kObject, "Environment variables.", "name"},
        {"envFrom", K::kArray, {}, K::kFreeObject, "Sources of environment variables."},
        {"image", K::kString, {}, K::kString, "The container image."},
        {"imagePullPolicy", K::kString, {}, K::kString, "Always, Never or IfNotPresent."},
        {"lifecycle", K::kFreeObject, {}, K::kString, "Actions at start and stop."},
        {"livenessProbe", K::kFreeObject, {}, K::kString, "How to tell the container is alive."},
        {"name", K::kString, {}, K::kString, "The container's name, a DNS-1123 label unique in the pod."},
        {"ports", K::kArray, "io.k8s.api.core.v1.ContainerPort", K::kObject, "Ports the container exposes.",
         "containerPort"},
        {"readinessProbe", K::kFreeObject, {}, K::kString, "How to tell the container is ready."},
        {"resizePolicy", K::kArray, {}, K::kFreeObject, "How the container's resources may be resized."},
        {"resources", K::kObject, "io.k8s.api.core.v1.ResourceRequirements", K::kString,
         "The resources the container requests and may not exceed."},
        {"restartPolicy", K::kString, {}, K::kString, "For init containers: Always makes a sidecar."},
        {"securityContext", K::kFreeObject, {}, K::kString, "Security attributes of the container."},
        {"startupProbe", K::kFreeObject, {}, K::kString, "How to tell the container has started."},
        {"stdin", K::kBoolean, {}, K::kString, "Whether the container has a stdin."},
        {"stdinOnce", K::kBoolean, {}, K::kString, "Whether stdin closes after one attach."},
        {"terminationMessagePath", K::kString, {}, K::kString, "Where the container writes its last words."},
        {"terminationMessagePolicy", K::kString, {}, K::kString, "File, or FallbackToLogsOnError."},
        {"tty", K::kBoolean, {}, K::kString, "Whether the container has a TTY."},
        {"volumeDevices", K::kArray, {}, K::kFreeObject, "Block devices the container uses.", "devicePath"},
        {"volumeMounts", K::kArray, {}, K::kFreeObject, "Volumes mounted into the container.", "mountPath"},
        {"workingDir", K::kString, {}, K::kString, "The working directory."}}},
      {"io.k8s.api.core.v1.ContainerPort",
       "ContainerPort",
       "A port a container exposes.",
       {{"containerPort", K::kInteger, {}, K::kString, "The port in the container, 1-65535."},
        {"hostIP", K::kString, {}, K::kString, "The host address to bind."},
        {"hostPort", K::kInteger, {}, K::kString, "The port on the host (the agent must offer it)."},
        {"name", K::kString, {}, K::kString, "A name for the port."},
        {"protocol", K::kString, {}, K::kString, "TCP, UDP or SCTP."}}},
      {"io.k8s.api.core.v1.EnvVar",
       "EnvVar",
       "An environment variable.",
       {{"name", K::kString, {}, K::kString, "The variable's name."},
        {"value", K::kString, {}, K::kString, "Its value."},
        {"valueFrom", K::kFreeObject, {}, K::kString, "Where its value comes from instead."}}},
      {"io.k8s.api.core.v1.ResourceRequirements",
       "ResourceRequirements",
       "Compute resources.",
       {{"claims", K::kArray, {}, K::kFreeObject, "Dynamic resources used.", "name"},
        {"limits", K::kQuantityMap, {}, K::kString, "The most that may be used."},
        {"requests", K::kQuantityMap, {}, K::kString, "What the scheduler reserves: cpu, memory."}}},
      {"io.k8s.api.core.v1.Toleration",
       "Toleration",
       "A taint the pod tolerates.",
       {{"effect", K::kString, {}, K::kString, "The taint effect matched."},
        {"key", K::kString, {}, K::kString, "The taint key matched."},
        {"operator", K::kString, {}, K::kString, "Exists or Equal."},
        {"tolerationSeconds", K::kInteger, {}, K::kString, "How long a NoExecute taint is tolerated."},
        {"value", K::kString, {}, K::kString, "The taint value matched."}}},
      {"io.k8s.api.core.v1.PodStatus",
       "PodStatus",
       "The observed state of a pod.",
       {{"conditions", K::kArray, "io.k8s.api.core.v1.PodCondition", K::kObject, "The pod's conditions.", "type"},
        {"containerStatuses", K::kArray, {}, K::kFreeObject, "What each container is doing."},
        {"ephemeralContainerStatuses", K::kArray, {}, K::kFreeObject, "What each ephemeral container is doing."},
        {"hostIP", K::kString, {}, K::kString, "The address of the pod's host."},
        {"hostIPs", K::kArray, {}, K::kFreeObject, "The addresses of the pod's host.", "ip"},
        {"initContainerStatuses", K::kArray, {}, K::kFreeObject, "What each init container is doing."},
        {"message", K::kString, {}, K::kString, "Why the pod is in this state, for people."},
        {"nominatedNodeName", K::kString, {}, K::kString, "Where the pod goes once preemption makes room."},
        {"phase", K::kString, {}, K::kString, "Pending, Running, Succeeded, Failed or Unknown."},
        {"podIP", K::kString, {}, K::kString, "The pod's address."},
        {"podIPs", K::kArray, {}, K::kFreeObject, "The pod's addresses.", "ip"},
        {"qosClass", K::kString, {}, K::kString, "Guaranteed, Burstable or BestEffort."},
        {"reason", K::kString, {}, K::kString, "Why the pod is in this state, as a word."},
        {"resize", K::kString, {}, K::kString, "The state of a resize."},
        {"resourceClaimStatuses", K::kArray, {}, K::kFreeObject, "The resource claims' state.", "name"},
        {"startTime", K::kTime, {}, K::kString, "When the agent took the pod."}}},
      {"io.k8s.api.core.v1.PodCondition",
       "PodCondition",
       "One condition of a pod.",
       {{"lastProbeTime", K::kTime, {}, K::kString, "When it was last probed."},
        {"lastTransitionTime", K::kTime, {}, K::kString, "When its status last changed."},
        {"message", K::kString, {}, K::kString, "The details, for people."},
        {"reason", K::kString, {}, K::kString, "Why, as a word (Unschedulable, ...)."},
        {"status", K::kString, {}, K::kString, "True, False or Unknown."},
        {"type", K::kString, {}, K::kString, "PodScheduled, Ready, DisruptionTarget, ..."}}},
      {"io.k8s.api.core.v1.Namespace",
       "Namespace",
       "A scope for names.",
       {{"apiVersion", K::kString, {}, K::kString, "The schema version of this object: v1."},
        {"kind", K::kString, {}, K::kString, "The kind of this object: Namespace."},
        {"metadata", K::kObject, kMeta, K::kString, "Standard object metadata."},
        {"spec", K::kObject, "io.k8s.api.core.v1.NamespaceSpec", K::kString, "The namespace's desired state."},
        {"status", K::kObject, "io.k8s.api.core.v1.NamespaceStatus", K::kString, "The namespace's state."}},
       "Namespace"},
      {"io.k8s.api.core.v1.NamespaceSpec",
       "NamespaceSpec",
       "The desired state of a namespace.",
       {{"finalizers", K::kArray, {}, K::kString, "What must happen before the namespace is removed."}}},
      {"io.k8s.api.core.v1.NamespaceStatus",
       "NamespaceStatus",
       "The state of a namespace.",
       {{"conditions", K::kArray, {}, K::kFreeObject, "The namespace's conditions.", "type"},
        {"phase", K::kString, {}, K::kString, "Active or Terminating."}}},
      {"io.k8s.api.core.v1.Binding",
       "Binding",
       "Binds a pod to a node.",
       {{"apiVersion", K::kString, {}, K::kString, "The schema version of this object: v1."},
        {"kind", K::kString, {}, K::kString, "The kind of this object: Binding."},
        {"metadata", K::kObject, kMeta, K::kString, "Standard object metadata."},
        {"target", K::kObject, "io.k8s.api.core.v1.ObjectReference", K::kString, "The node to bind to."}},
       "Binding"},
      {"io.k8s.api.core.v1.ObjectReference",
       "ObjectReference",
       "A reference to an object.",
       {{"apiVersion", K::kString, {}, K::kString, "The referent's API version."},
        {"fieldPath", K::kString, {}, K::kString, "A field within the referent."},
        {"kind", K::kString, {}, K::kString, "The referent's kind."},
        {"name", K::kString, {}, K::kString, "The referent's name."},
        {"namespace", K::kString, {}, K::kString, "The referent's namespace."},
        {"resourceVersion", K::kString, {}, K::kString, "The referent's resource version."},
        {"uid", K::kString, {}, K::kString, "The referent's uid."}}},
      {kMeta,
       "ObjectMeta",
       "Metadata every stored object has.",
       {{"annotations", K::kStringMap, {}, K::kString, "Unstructured key-value data."},
        {"creationTimestamp", K::kTime, {}, K::kString, "When the object was created; set by the server."},
        {"deletionGracePeriodSeconds", K::kInteger, {}, K::kString, "The grace period of a deletion under way."},
        {"deletionTimestamp", K::kTime, {}, K::kString, "When the object's deletion was asked; set by the server."},
        {"finalizers", K::kArray, {}, K::kString, "What must happen before the object is removed."},
        {"generateName", K::kString, {}, K::kString, "A prefix the server completes into a unique name."},
        {"generation", K::kInteger, {}, K::kString, "The generation of the desired state."},
        {"labels", K::kStringMap, {}, K::kString, "Labels, for selectors."},
        {"managedFields", K::kArray, {}, K::kFreeObject, "Which manager set which fields."},
        {"name", K::kString, {}, K::kString, "The object's name, unique in its namespace."},
        {"namespace", K::kString, {}, K::kString, "The namespace the object is in."},
        {"ownerReferences", K::kArray, {}, K::kFreeObject, "Objects this one depends on.", "uid"},
        {"resourceVersion", K::kString, {}, K::kString, "The version of the object, for concurrency and watches."},
        {"selfLink", K::kString, {}, K::kString, "Deprecated."},
        {"uid", K::kString, {}, K::kString, "The object's unique id; set by the server."}}},
  };
}

}  // namespace

const std::vector<SchemaType>& api_schema() {
  static const std::vector<SchemaType> schema = describe();
  return schema;
}

const SchemaType* schema_type(std::string_view name) {
  for (const auto& t : api_schema()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string_view go_type_name(const SchemaField& f) {
  switch (f.kind) {
    case K::kString:
    case K::kTime:
      return "string";
    case K::kInteger:
      return "int64";
    case K::kBoolean:
      return "bool";
    case K::kQuantity:
      return "resource.Quantity";
    case K::kIntOrString:
      return "intstr.IntOrString";
    case K::kObject: {
      std::string_view r = f.ref;
      return r.substr(r.rfind('.') + 1);
    }
    case K::kFreeObject:
      return "object";
    case K::kStringMap:
      return "map[string]string";
    case K::kQuantityMap:
      return "v1.ResourceList";
    case K::kArray:
      return "array";
  }
  return "value";
}

}  // namespace uvsched
