// How a pod leaves the store, as in Kubernetes: a pod with finalizers is only
// marked (metadata.deletionTimestamp) when it is deleted, and goes when an
// update takes its last finalizer away; a pod without goes at once, unless
// its task is still to be stopped (held): then it is marked as the API server
// marks a graceful deletion, and goes once the task has stopped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "handlers/json_value.h"
#include "storage/store.h"

namespace uvsched {

bool has_finalizers(const JsonValue& pod);

// A pod being deleted that no finalizer holds any more: an update must remove
// it rather than store it.
bool ready_to_go(const JsonValue& pod);

// How long a deleted pod's containers get to stop, as the pod strategy's
// CheckGracefulDelete decides: the DeleteOptions' gracePeriodSeconds when
// given, else the pod's spec.terminationGracePeriodSeconds (30 when unset);
// 0 for a pod bound to no node or already ended; a negative period is 1.
int64_t deletion_grace_seconds(const JsonValue& pod, std::optional<int64_t> requested);
// The grace period a running pod's task is killed with: its deletion's when
// it is being deleted (metadata.deletionGracePeriodSeconds), else its
// spec.terminationGracePeriodSeconds (30 when unset; a negative one is 1).
uint32_t termination_grace_seconds(const JsonValue& pod);

struct PodDeletion {
  StoreStatus status;  // not ok: the store failed (or the pod kept changing)
  bool found = false;
  bool removed = false;       // found but not removed: kept, marked, for its finalizers or its task
  std::string object;         // the pod as removed, or as marked
  int64_t revision = 0;       // the store's revision after it
  int64_t grace_seconds = 0;  // held: how long its task gets to stop (its KILL's grace period)
};

// A deletion that waits for the pod's task to stop.
struct DeleteHold {
  std::optional<int64_t> requested_grace;  // DeleteOptions.gracePeriodSeconds, when the client gave one
};

// Deletes the pod stored at `key`, or marks it when it has finalizers or is
// held. A held pod is marked with deletionGracePeriodSeconds and a
// deletionTimestamp that far after `now_unix_ms`; with a grace period of 0 it
// goes at once (a forced delete; its task is still killed). A pod marked
// already keeps its mark, unless this deletion's grace ends sooner (as a
// second `kubectl delete --grace-period` shortens the first). Compare-and-
// swap, tried again when the pod changes in between. `store` must outlive the call.
void delete_pod_object(Store& store, std::string key, int64_t now_unix_ms, std::optional<DeleteHold> hold,
                       std::function<void(PodDeletion&&)> done, int attempts = 5);

}  // namespace uvsched
