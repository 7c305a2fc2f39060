// How a pod leaves the store, as in Kubernetes: a pod with finalizers is only
// marked (metadata.deletionTimestamp) when it is deleted, and goes when an
// update takes its last finalizer away; a pod without goes at once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "handlers/json_value.h"
#include "storage/store.h"

namespace uvsched {

bool has_finalizers(const JsonValue& pod);

// A pod being deleted that no finalizer holds any more: an update must remove
// it rather than store it.
bool ready_to_go(const JsonValue& pod);

struct PodDeletion {
  StoreStatus status;  // not ok: the store failed (or the pod kept changing)
  bool found = false;
  bool removed = false;  // found but not removed: kept, marked, for its finalizers
  std::string object;    // the pod as removed, or as marked
  int64_t revision = 0;  // the store's revision after it
};

// Deletes the pod stored at `key`, or marks it (deletionTimestamp = `now`)
// when it has finalizers or `hold` (its task is still being killed). A pod
// marked already keeps its mark. Compare-and-swap, tried again when the pod
// changes in between. `store` must outlive the call.
void delete_pod_object(Store& store, std::string key, std::string now, bool hold,
                       std::function<void(PodDeletion&&)> done, int attempts = 5);

}  // namespace uvsched
