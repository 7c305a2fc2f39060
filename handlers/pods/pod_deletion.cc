#include "handlers/pods/pod_deletion.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "handlers/pods/pod_validation.h"

namespace uvsched {

bool has_finalizers(const JsonValue& pod) {
  const JsonValue* f = pod.find({"metadata", "finalizers"});
  return f && f->is_array() && !f->items().empty();
}

bool ready_to_go(const JsonValue& pod) {
  return pod.find({"metadata", "deletionTimestamp"}) != nullptr && !has_finalizers(pod);
}

namespace {

// A period as Kubernetes takes it: a negative one is 1.
int64_t at_least_one_if_negative(int64_t seconds) { return seconds < 0 ? 1 : seconds; }

// spec.terminationGracePeriodSeconds, 30 when unset.
int64_t spec_grace_seconds(const JsonValue& pod) {
  const JsonValue* spec = pod.find({"spec", "terminationGracePeriodSeconds"});
  return (spec ? spec->as_integer() : std::nullopt).value_or(30);
}

}  // namespace

int64_t deletion_grace_seconds(const JsonValue& pod, std::optional<int64_t> requested) {
  int64_t period = requested ? *requested : spec_grace_seconds(pod);
  const JsonValue* node = pod.find({"spec", "nodeName"});
  if (!node || !node->is_string() || node->text().empty()) return 0;
  const JsonValue* phase = pod.find({"status", "phase"});
  if (phase && phase->is_string() && (phase->text() == "Succeeded" || phase->text() == "Failed")) return 0;
  return at_least_one_if_negative(period);
}

uint32_t termination_grace_seconds(const JsonValue& pod) {
  const JsonValue* deleting = pod.find({"metadata", "deletionGracePeriodSeconds"});
  std::optional<int64_t> period = deleting ? deleting->as_integer() : std::nullopt;
  return static_cast<uint32_t>(
      std::min<int64_t>(at_least_one_if_negative(period.value_or(spec_grace_seconds(pod))), UINT32_MAX));
}

void delete_pod_object(Store& store, std::string key, int64_t now_unix_ms, std::optional<DeleteHold> hold,
                       std::function<void(PodDeletion&&)> done, int attempts) {
  store.get(key, {}, [&store, key, now_unix_ms, hold, done = std::move(done), attempts](RangeResult&& r) mutable {
    if (!r.status.ok()) return done(PodDeletion{r.status});
    if (r.kvs.empty()) return done(PodDeletion{});
    const KeyValue& kv = r.kvs[0];
    std::string error;
    auto pod = JsonValue::parse(kv.value, &error);
    if (hold && !pod) return done(PodDeletion{{StoreCode::kInvalid, "the stored pod is unreadable: " + error}});
    int64_t grace = hold ? deletion_grace_seconds(*pod, hold->requested_grace) : 0;
    bool finalized = pod && has_finalizers(*pod);
    bool keep = (hold && grace > 0) || finalized;
    int64_t ends_ms = now_unix_ms + grace * 1000;
    if (const JsonValue* marked = pod ? pod->find({"metadata", "deletionTimestamp"}) : nullptr; marked && keep) {
      // Marked already: kept as it is, unless this deletion ends sooner.
      std::optional<int64_t> was = marked->is_string() ? parse_rfc3339_ms(marked->text()) : std::nullopt;
      if (!hold || (was && *was <= ends_ms)) {
        const JsonValue* g = pod->find({"metadata", "deletionGracePeriodSeconds"});
        std::optional<int64_t> kept = g ? g->as_integer() : std::nullopt;
        return done(PodDeletion{StoreStatus{}, true, false, kv.value, r.revision, kept.value_or(grace)});
      }
    }
    std::string object = kv.value;
    TxnRequest t;
    t.compares.push_back({key, Compare::Target::kModRevision, Compare::Op::kEqual, kv.mod_revision, {}});
    if (keep) {
      JsonValue& meta = pod->ensure({"metadata"});
      meta.set("deletionTimestamp", JsonValue::string(rfc3339(ends_ms)));
      if (hold) meta.set("deletionGracePeriodSeconds", JsonValue::integer(grace));
      object = pod->dump();
      t.success.push_back({TxnOp::Type::kPut, key, object, 0, false});
    } else {
      t.success.push_back({TxnOp::Type::kDelete, key, {}, 0, false});
    }
    store.txn(std::move(t), [&store, key, now_unix_ms, hold, done = std::move(done), attempts, keep, grace,
                             object = std::move(object)](TxnResult&& tr) mutable {
      if (!tr.status.ok()) return done(PodDeletion{tr.status});
      if (tr.succeeded) return done(PodDeletion{StoreStatus{}, true, !keep, std::move(object), tr.revision, grace});
      if (attempts > 1) return delete_pod_object(store, key, now_unix_ms, hold, std::move(done), attempts - 1);
      done(PodDeletion{StoreStatus::unavailable("the pod kept changing while it was being deleted")});
    });
  });
}

}  // namespace uvsched
