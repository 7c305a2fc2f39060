#include "handlers/pods/pod_deletion.h"

#include <utility>

namespace uvsched {

bool has_finalizers(const JsonValue& pod) {
  const JsonValue* f = pod.find({"metadata", "finalizers"});
  return f && f->is_array() && !f->items().empty();
}

bool ready_to_go(const JsonValue& pod) {
  return pod.find({"metadata", "deletionTimestamp"}) != nullptr && !has_finalizers(pod);
}

void delete_pod_object(Store& store, std::string key, std::string now, bool hold,
                       std::function<void(PodDeletion&&)> done, int attempts) {
  store.get(key, {}, [&store, key, now, hold, done = std::move(done), attempts](RangeResult&& r) mutable {
    if (!r.status.ok()) return done(PodDeletion{r.status});
    if (r.kvs.empty()) return done(PodDeletion{});
    const KeyValue& kv = r.kvs[0];
    std::string error;
    auto pod = JsonValue::parse(kv.value, &error);
    if (hold && !pod) return done(PodDeletion{{StoreCode::kInvalid, "the stored pod is unreadable: " + error}});
    bool keep = hold || (pod && has_finalizers(*pod));
    if (keep && pod->find({"metadata", "deletionTimestamp"})) {
      return done(PodDeletion{StoreStatus{}, true, false, kv.value, r.revision});  // marked already
    }
    std::string object = kv.value;
    TxnRequest t;
    t.compares.push_back({key, Compare::Target::kModRevision, Compare::Op::kEqual, kv.mod_revision, {}});
    if (keep) {
      pod->ensure({"metadata"}).set("deletionTimestamp", JsonValue::string(now));
      object = pod->dump();
      t.success.push_back({TxnOp::Type::kPut, key, object, 0, false});
    } else {
      t.success.push_back({TxnOp::Type::kDelete, key, {}, 0, false});
    }
    store.txn(std::move(t), [&store, key, now, hold, done = std::move(done), attempts, keep,
                             object = std::move(object)](TxnResult&& tr) mutable {
      if (!tr.status.ok()) return done(PodDeletion{tr.status});
      if (tr.succeeded) return done(PodDeletion{StoreStatus{}, true, !keep, std::move(object), tr.revision});
      if (attempts > 1) return delete_pod_object(store, key, now, hold, std::move(done), attempts - 1);
      done(PodDeletion{StoreStatus::unavailable("the pod kept changing while it was being deleted")});
    });
  });
}

}  // namespace uvsched
