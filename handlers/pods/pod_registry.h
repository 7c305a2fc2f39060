// The pod registry: Kubernetes core/v1 pods, namespaces and nodes, enough for
// kubectl and the official clients. Pods live in the store at
// /registry/pods/<namespace>/<name> as JSON; metadata.resourceVersion is the
// key's mod revision, so a write with a stale one is a 409. Watches are fed by
// the store's watch, so pods written by another uvsched (or straight into
// etcd) show up too.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "handlers/json_value.h"
#include "handlers/ops/metrics_registry.h"
#include "handlers/pods/pod_query.h"
#include "handlers/pods/pod_writer.h"
#include "handlers/router.h"
#include "policy/label_edits.h"
#include "policy/label_selector.h"
#include "policy/taints.h"
#include "reactor/clock.h"
#include "storage/store.h"

namespace uvsched {

class PodRegistry {
 public:
  static constexpr const char* kPodPrefix = "/registry/pods/";
  static constexpr const char* kNamespacePrefix = "/registry/namespaces/";
  // Cordoned agents (kubectl cordon), by hostname: a key each.
  static constexpr const char* kCordonPrefix = "/registry/cordoned/";
  // The operator's label edits of each node (kubectl label node), by
  // hostname: node_label_edits.h.
  static constexpr const char* kNodeLabelsPrefix = "/registry/nodelabels/";
  // The taints put on each node (kubectl taint), by hostname: node_taints.h.
  static constexpr const char* kNodeTaintsPrefix = "/registry/nodetaints/";
  // Nodes are views of the pod scheduler's agents; none until it exists.
  using NodeLister = std::function<std::vector<JsonValue>()>;

  PodRegistry(Store& store, Clock& clock, PodWriter& writer, std::function<bool()> is_leader);
  // `version`, when given, moves whenever `nodes` would answer otherwise: a
  // node watch reads the nodes only when it has moved.
  void set_nodes(NodeLister nodes, std::function<uint64_t()> version = nullptr) {
    nodes_ = std::move(nodes);
    nodes_version_ = std::move(version);
  }
  // Told once a node's cordon (spec.unschedulable) is stored changed.
  using CordonHook = std::function<void(const std::string& node, bool cordoned)>;
  void set_cordon_hook(CordonHook hook) { cordon_hook_ = std::move(hook); }
  // Told once a node's label edits (kubectl label node) are stored: all of them.
  using NodeLabelsHook = std::function<void(const std::string& node, LabelEdits edits)>;
  void set_node_labels_hook(NodeLabelsHook hook) { node_labels_hook_ = std::move(hook); }
  // Told once a node's new taints (kubectl taint) are stored.
  using TaintsHook = std::function<void(const std::string& node, std::vector<Taint> taints)>;
  void set_taints_hook(TaintsHook hook) { taints_hook_ = std::move(hook); }
  // Asked before a pod is deleted; true when it took the request over (a
  // launched pod: KILL first, the object goes once its task is gone) and
  // will call `done` with the answer.
  using DeleteDone = std::function<void(HttpResponse&&)>;
  // `grace`: the DeleteOptions' gracePeriodSeconds, when the client gave one.
  using DeleteHook = std::function<bool(const std::string& ns, const std::string& name, std::optional<int64_t> grace,
                                        DeleteDone done)>;
  void set_delete_hook(DeleteHook hook) { delete_hook_ = std::move(hook); }
  // Told once an update that changed a pod's container images is stored (a
  // kubelet restarts those containers; its task must be launched again).
  using ImagesHook = std::function<void(const std::string& ns, const std::string& name)>;
  void set_images_hook(ImagesHook hook) { images_hook_ = std::move(hook); }
  // Told once an update that moved when a pod's active deadline passes is
  // stored (activeDeadlineSeconds lowered or set, or startTime written).
  using DeadlineHook =
      std::function<void(const std::string& ns, const std::string& name, std::optional<int64_t> deadline_unix_ms)>;
  void set_deadline_hook(DeadlineHook hook) { deadline_hook_ = std::move(hook); }
  // Asked before a new pod is stored; may change the pod (bind it) and hand
  // back what to call with the create's outcome (nullptr: nothing).
  using CreateOutcome = std::function<void(bool written, int64_t revision, const std::string& json)>;
  using CreateHook = std::function<CreateOutcome(const std::string& ns, const std::string& name, JsonValue& pod)>;
  void set_create_hook(CreateHook hook) { create_hook_ = std::move(hook); }
  // Where a pod would be placed now (an agent's name) or why it would wait:
  // what a dry-run create says in kDryRunPlacementAnnotation.
  using PreviewHook = std::function<std::string(const JsonValue& pod)>;
  // Asked of a new pod once it is validated and defaulted: `admit` may
  // complete it (its priority, from its PriorityClass) or refuse it with the
  // answer to send. Until `ready` (the classes are read), creates wait for it
  // (`when_ready`) rather than fail.
  struct Admission {
    std::function<bool()> ready;
    std::function<void(std::function<void()>)> when_ready;
    std::function<std::optional<HttpResponse>(JsonValue& pod)> admit;
  };
  void set_admission(Admission a) { admission_ = std::move(a); }
  // Asked before a pod is evicted (the pod as stored): nullopt lets the
  // eviction go, else the refusal is the answer (its disruption budget).
  using EvictionVerdict = std::function<void(std::optional<HttpResponse> refusal)>;
  using EvictionCheck =
      std::function<void(const std::string& ns, const JsonValue& pod, bool dry_run, EvictionVerdict verdict)>;
  void set_eviction_check(EvictionCheck check) { eviction_check_ = std::move(check); }
  void set_preview_hook(PreviewHook hook) { preview_hook_ = std::move(hook); }
  static constexpr const char* kDryRunPlacementAnnotation = "uvsched.io/dry-run-placement";
  void add_routes(Router& router);
  // Makes sure the namespaces every cluster has (default, kube-system) exist.
  void start();

 private:
  using Query = PodQuery;
  struct Watch;
  struct WatchSnapshot;

  void create_pod(RequestContext& ctx);
  void get_pod(RequestContext& ctx);
  void list_pods(RequestContext& ctx, const std::string& ns);
  void list_events(RequestContext& ctx, const std::string& ns);
  void replace_pod(RequestContext& ctx, bool status_only);
  void patch_pod(RequestContext& ctx, bool status_only);
  void delete_pod(RequestContext& ctx);
  // DELETE on a namespace's pods (the Python client's
  // delete_collection_namespaced_pod): each pod the selectors pick is deleted
  // as by its own DELETE; the answer lists them, as the API server's does.
  void delete_pods(RequestContext& ctx);
  void delete_one(const std::string& ns, const std::string& name, std::optional<int64_t> grace, DeleteDone done);
  void bind_pod(RequestContext& ctx);
  // POST pods/{name}/eviction (pod_eviction.cc): weighed against its
  // disruption budget, marked, then deleted.
  void evict_pod(RequestContext& ctx);
  void mark_and_delete(Responder res, const std::string& ns, const std::string& name, std::optional<int64_t> grace);
  void end_watch(Watch& w);
  void watch_pods(RequestContext& ctx, const std::string& prefix, std::shared_ptr<Query> q);
  using WatchSend = std::function<bool(std::string_view type, const std::string& object)>;
  void read_snapshot(const std::string& prefix, std::function<bool()> wanted, std::function<void(RangeResult&&)> done);
  void start_snapshot_reads();
  void send_snapshot(const std::shared_ptr<Watch>& w, const std::shared_ptr<WatchSnapshot>& snap,
                     const std::string& prefix, const WatchSend& send, const WatchCallback& on_events);

  void list_namespaces(RequestContext& ctx);
  void create_namespace(RequestContext& ctx);
  void get_namespace(RequestContext& ctx);
  void delete_namespace(RequestContext& ctx);
  void apply_namespace(RequestContext& ctx);
  void list_nodes(RequestContext& ctx);
  // kubectl get nodes -w / get namespaces -w (node_namespace_watch.cc).
  struct ViewWatch;
  void watch_nodes(RequestContext& ctx);
  void watch_namespaces(RequestContext& ctx);
  // Events made from the pods, followed through the pods' watch (event_watch.cc).
  void watch_events(RequestContext& ctx, const std::string& ns, std::vector<FieldRequirement> fields);
  void get_node(RequestContext& ctx);
  void patch_node(RequestContext& ctx);
  // The node's label edits with the change from `before` to `after` added,
  // stored (a compare-and-swap, tried again if another write came between),
  // then `done` with nothing, or the failure to answer.
  using LabelsStored = std::function<void(std::optional<HttpResponse> failure)>;
  void store_label_edits(const std::string& node, Labels before, Labels after, LabelsStored done, int tries = 0);
  // The node of that name (an agent), as /api/v1/nodes lists it.
  std::optional<JsonValue> node_named(const std::string& name) const;
  static HttpResponse node_not_found(const std::string& name);

  // How a write of a pod is answered and whom it tells.
  struct PodWrite {
    int ok_status = 200;
    bool answer_status = false;         // a Binding is answered with a Status, not the pod
    CreateOutcome created;              // hears whether a create was written
    std::vector<std::string> warnings;  // Warning headers for the answer (fields the decoder dropped)
    std::function<void()> on_missing;   // update_pod found no pod: do this instead of 404 (an apply creates)
    // More, filled by the change (a patch's dropped fields).
    std::shared_ptr<const std::vector<std::string>> change_warnings;
    bool dry_run = false;  // dryRun=All: answered as written, nothing stored
  };
  // Validates, defaults and creates a new pod (a POST, or an apply of a pod not there yet).
  void create_checked(Responder res, const std::string& ns, JsonValue pod, std::vector<std::string> warnings,
                      bool dry_run = false);
  void dry_run_create(Responder res, const std::string& ns, const std::string& name, JsonValue pod,
                      std::vector<std::string> warnings);
  // Server-side apply (PATCH, application/apply-patch+yaml): see field_manager.h.
  void apply_pod(RequestContext& ctx);
  // Stores a new pod (its name and namespace checked in the same txn) and answers.
  void store_new_pod(Responder res, const std::string& ns, const std::string& name, JsonValue pod, PodWrite how);
  static void answer_written(Responder& res, const PodWrite& how, const std::string& json, int64_t revision);

  // A guarded update (PodWriter) answered as the API server answers: `change`
  // turns the pod read into its next version, or refuses with the answer to
  // send; a pod that other writers kept changing (the scheduler, an agent's
  // status) is a 409 after PodWriter::kAttempts tries. A client's
  // resourceVersion precondition is the change's to check: a refusal ends it.
  using PodChange = std::function<std::optional<HttpResponse>(JsonValue& pod, int64_t revision)>;
  void update_pod(Responder res, const std::string& ns, const std::string& name, PodChange change, PodWrite how);
  bool refuse_unless_leader(RequestContext& ctx);

  Store& store_;
  Clock& clock_;
  PodWriter& writer_;
  std::function<bool()> is_leader_;
  // The bytes of every pod, as the last read of them all found them plus
  // what was created since (namespaced reads only raise it): what a list or
  // watch is assumed to hold before its snapshot is read (Responder::hold).
  size_t snapshot_bytes_ = 0;
  struct SnapshotRead {
    std::string prefix;
    std::function<bool()> wanted;  // false: its reader left while it waited
    std::function<void(RangeResult&&)> done;
  };
  std::deque<SnapshotRead> snapshot_queue_;
  size_t snapshots_in_flight_ = 0;
  NodeLister nodes_;
  std::function<uint64_t()> nodes_version_;
  CordonHook cordon_hook_;
  NodeLabelsHook node_labels_hook_;
  DeleteHook delete_hook_;
  ImagesHook images_hook_;
  DeadlineHook deadline_hook_;
  TaintsHook taints_hook_;
  CreateHook create_hook_;
  PreviewHook preview_hook_;
  Admission admission_;
  EvictionCheck eviction_check_;
};

// The store key of pod `name` in namespace `ns`.
std::string pod_key(const std::string& ns, const std::string& name);
// The API server's 404 for a pod not there.
HttpResponse pod_not_found(const std::string& name);
// The API server's 409 message for an update another writer got in before.
std::string pod_conflict_message(const std::string& name);

}  // namespace uvsched
