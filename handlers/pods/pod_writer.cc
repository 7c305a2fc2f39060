#include "handlers/pods/pod_writer.h"

#include <memory>

#include "reactor/log.h"

namespace uvsched {
namespace {

// Results made field by field: GCC 12's release build takes a braced
// StoreStatus{} inside an aggregate for maybe-uninitialized.
PodWriter::Result result(PodWriter::Outcome o, int64_t revision = 0, std::string stored = {}) {
  PodWriter::Result r;
  r.outcome = o;
  r.revision = revision;
  r.stored = std::move(stored);
  return r;
}

PodWriter::Result store_down_result(const StoreStatus& status) {
  PodWriter::Result r;
  r.outcome = PodWriter::Outcome::kStoreDown;
  r.status = status;
  return r;
}

}  // namespace

// One record for every try of an update, shared by its callbacks instead of
// copying the key, the change and the callback into each.
struct PodWriter::Attempt {
  Update u;
  int left = kAttempts;
  void finish(Result&& r) const {
    if (u.done) u.done(std::move(r));
  }
  void finish(Outcome o) const { finish(result(o)); }
};

const char* PodWriter::outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kWritten:
      return "written";
    case Outcome::kDeleted:
      return "deleted";
    case Outcome::kDeclined:
      return "declined";
    case Outcome::kMissing:
      return "missing";
    case Outcome::kUnreadable:
      return "unreadable";
    case Outcome::kConflict:
      return "conflict";
    case Outcome::kStoreDown:
      return "store_down";
  }
  return "?";
}

void PodWriter::update(Update u) { attempt(std::make_shared<Attempt>(Attempt{std::move(u)})); }

void PodWriter::attempt(std::shared_ptr<Attempt> a) {
  if (a->u.cached) {
    if (auto it = kept_.find(a->u.key); it != kept_.end()) {
      // (Copied: the write below may refresh the kept copy it was read from.)
      std::string stored = it->second.second;
      return write(std::move(a), it->second.first, stored);
    }
  }
  std::string key = a->u.key;
  store_.get(key, {}, [this, a = std::move(a)](RangeResult&& r) mutable {
    if (!r.status.ok()) return a->finish(store_down_result(r.status));
    if (r.kvs.empty()) return a->finish(Outcome::kMissing);
    write(std::move(a), r.kvs[0].mod_revision, r.kvs[0].value);
  });
}

void PodWriter::write(std::shared_ptr<Attempt> a, int64_t revision, const std::string& stored) {
  std::optional<std::string> next = a->u.edit ? a->u.edit(stored) : std::nullopt;
  Verdict verdict = Verdict::kPut;
  if (!next) {
    std::string error;
    std::optional<JsonValue> pod = JsonValue::parse(stored, &error);
    if (!pod) return a->finish(Outcome::kUnreadable);
    verdict = a->u.change(*pod, revision);
    if (verdict == Verdict::kDecline) return a->finish(Outcome::kDeclined);
    next = pod->dump();
  }
  if (a->u.dry_run) {
    return a->finish(
        result(verdict == Verdict::kDelete ? Outcome::kDeleted : Outcome::kWritten, revision, std::move(*next)));
  }
  auto text = std::make_shared<const std::string>(std::move(*next));
  TxnRequest t;
  t.compares.push_back({a->u.key, Compare::Target::kModRevision, Compare::Op::kEqual, revision, {}});
  t.success.push_back(verdict == Verdict::kDelete ? TxnOp{TxnOp::Type::kDelete, a->u.key, {}, 0, false}
                                                  : TxnOp{TxnOp::Type::kPut, a->u.key, *text, 0, false});
  if (a->u.own) own_writes_[a->u.key] = *text;
  store_.txn(std::move(t), [this, a = std::move(a), text, verdict](TxnResult&& tr) mutable {
    const std::string& key = a->u.key;
    bool written = tr.status.ok() && tr.succeeded;
    if (!written && a->u.own) {
      if (auto own = own_writes_.find(key); own != own_writes_.end() && own->second == *text) own_writes_.erase(own);
    }
    if (written) {
      if (verdict == Verdict::kDelete) {
        kept_.erase(key);
        return a->finish(result(Outcome::kDeleted, tr.revision, *text));
      }
      refresh(key, tr.revision, *text);
      return a->finish(result(Outcome::kWritten, tr.revision, *text));
    }
    if (!tr.status.ok()) return a->finish(store_down_result(tr.status));
    kept_.erase(key);  // stale: the next try reads the store
    if (--a->left <= 0) return a->finish(Outcome::kConflict);
    attempt(std::move(a));
  });
}

void PodWriter::keep(const std::string& key, int64_t revision, std::string_view value) {
  auto [it, inserted] = kept_.try_emplace(key, revision, std::string(value));
  if (!inserted && revision >= it->second.first) it->second = {revision, std::string(value)};
}

bool PodWriter::refresh(const std::string& key, int64_t revision, std::string_view value) {
  auto it = kept_.find(key);
  if (it == kept_.end()) return false;
  if (revision >= it->second.first) it->second = {revision, std::string(value)};
  return true;
}

bool PodWriter::own_write_returned(const std::string& key, const std::string* value) {
  auto own = own_writes_.find(key);
  if (own == own_writes_.end()) return false;
  bool ours = value && own->second == *value;
  own_writes_.erase(own);
  return ours;
}

void PodWriter::clear() {
  kept_.clear();
  own_writes_.clear();
}

PodWriter::Update kept_pod_update(const std::string& key, PodWriter::TextEdit edit,
                                  std::function<bool(JsonValue&)> mutate, bool own, PodWriter::Done done) {
  PodWriter::Update u;
  u.key = key;
  u.edit = std::move(edit);
  u.change = [mutate = std::move(mutate)](JsonValue& pod, int64_t) {
    return mutate(pod) ? PodWriter::Verdict::kPut : PodWriter::Verdict::kDecline;
  };
  u.cached = true;
  u.own = own;
  u.done = [key, done = std::move(done)](PodWriter::Result&& r) {
    using Outcome = PodWriter::Outcome;
    if (r.outcome == Outcome::kMissing) {
      log_debug("pod_update_skipped").kv("pod", key).kv("why", "the pod is gone");
    } else if (!r.written() && r.outcome != Outcome::kDeclined) {
      log_warn("pod_update_failed")
          .kv("pod", key)
          .kv("outcome", PodWriter::outcome_name(r.outcome))
          .kv("error", r.status.message);
    }
    if (done) done(std::move(r));
  };
  return u;
}

}  // namespace uvsched
