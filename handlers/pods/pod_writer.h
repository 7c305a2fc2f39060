// Kubernetes' GuaranteedUpdate, the one way a stored pod is changed in place:
// the registry's PUT, PATCH, apply and Binding, and the scheduler's bindings,
// conditions and phases all write through one PodWriter. The pod's latest
// copy is read (or, for the scheduler's writes, taken from the copies its
// watch keeps here, as an informer's cache), changed, and written over the
// revision it was read at. Another writer in between means the copy was
// stale: it is read again and the change redone, kAttempts times in all,
// before the update gives up with a conflict.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "handlers/json_value.h"
#include "storage/store.h"

namespace uvsched {

class PodWriter {
 public:
  static constexpr int kAttempts = 5;

  // What a change made of the pod it was given.
  enum class Verdict {
    kPut,      // the changed pod is the next version
    kDelete,   // the pod is done with (its last finalizer went): the key goes
    kDecline,  // nothing is to be written (the change refused, or had nothing to do)
  };
  // Changes `pod` in place; `revision` is the one it was read at (a client's
  // resourceVersion precondition is the change's to check).
  using Change = std::function<Verdict(JsonValue& pod, int64_t revision)>;
  // Tried on the stored text before `change`: when it gives the next text,
  // the pod is not parsed into a tree and written back (most of an update's
  // cost); nullopt leaves the update to `change`.
  using TextEdit = std::function<std::optional<std::string>(std::string_view stored)>;

  enum class Outcome { kWritten, kDeleted, kDeclined, kMissing, kUnreadable, kConflict, kStoreDown };
  struct Result {
    Outcome outcome = Outcome::kStoreDown;
    StoreStatus status;    // kStoreDown: why
    int64_t revision = 0;  // kWritten, kDeleted: the write's revision
    std::string stored;    // kWritten, kDeleted: the pod as written (kDeleted: its last version)
    bool written() const { return outcome == Outcome::kWritten || outcome == Outcome::kDeleted; }
  };
  using Done = std::function<void(Result&&)>;
  static const char* outcome_name(Outcome o);

  struct Update {
    std::string key;
    Change change;
    TextEdit edit;  // optional
    // May start from the kept copy (not for a client's precondition: it names the store's revision).
    bool cached = false;
    bool own = false;      // remembered until the watch brings it back (own_write_returned)
    bool dry_run = false;  // everything but the write: the result says what would be stored
    Done done;             // optional
  };

  explicit PodWriter(Store& store) : store_(store) {}
  PodWriter(const PodWriter&) = delete;
  PodWriter& operator=(const PodWriter&) = delete;

  void update(Update u);

  // The kept copies: the latest revision and text of each pod the scheduler
  // keeps, refreshed by its watch and by the writes made here.
  void keep(const std::string& key, int64_t revision, std::string_view value);
  // Refreshes a kept copy when `revision` is not older; false when none is kept.
  bool refresh(const std::string& key, int64_t revision, std::string_view value);
  void forget(const std::string& key) { kept_.erase(key); }
  bool kept(const std::string& key) const { return kept_.contains(key); }
  size_t kept_count() const { return kept_.size(); }

  // Whether `value` (null: the pod was deleted) is what an update marked
  // `own` last wrote to `key`: the write coming back through the watch. The
  // record goes either way, so each write is recognised once.
  bool own_write_returned(const std::string& key, const std::string* value);

  // Forgets every kept copy and own write (leadership moved).
  void clear();

 private:
  struct Attempt;
  void attempt(std::shared_ptr<Attempt> a);
  void write(std::shared_ptr<Attempt> a, int64_t revision, const std::string& stored);

  Store& store_;
  absl::flat_hash_map<std::string, std::pair<int64_t, std::string>> kept_;
  // The last text an `own` update wrote to each key, until the watch brings it back.
  absl::flat_hash_map<std::string, std::string> own_writes_;
};

// The scheduler's update of a pod it follows, from the copy kept here
// (`cached`): `mutate` false means nothing to write; `own` when the pod
// waits to be placed (its write is known when the watch brings it back).
// Every outcome but a write, or a change with nothing to do, is logged, so
// no failed update goes unseen; then `done`, when given, hears it.
PodWriter::Update kept_pod_update(const std::string& key, PodWriter::TextEdit edit,
                                  std::function<bool(JsonValue&)> mutate, bool own, PodWriter::Done done);

}  // namespace uvsched
