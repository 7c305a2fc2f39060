#include "handlers/pods/disruption_budgets.h"

#include <algorithm>

#include "handlers/pods/k8s_request.h"
#include "handlers/pods/k8s_status.h"
#include "handlers/pods/pod_registry.h"
#include "reactor/log.h"

namespace uvsched {
namespace {

// "ns" of "<ns>/<name>", the rest of a key past its prefix.
std::string namespace_of(std::string_view rest) { return std::string(rest.substr(0, rest.find('/'))); }

std::vector<BudgetPodView> read_pods(const std::vector<KeyValue>& kvs) {
  std::vector<BudgetPodView> views;
  views.reserve(kvs.size());
  for (const auto& kv : kvs) {
    std::string error;
    if (auto pod = JsonValue::parse(kv.value, &error); pod && pod->is_object()) views.push_back(budget_pod_view(*pod));
  }
  return views;
}

std::vector<BudgetPod> selected(const Budget& b, const std::vector<BudgetPodView>& views) {
  std::vector<BudgetPod> pods;
  for (const auto& v : views) {
    if (b.selects(v.labels)) pods.push_back(v.pod);
  }
  return pods;
}

HttpResponse would_violate(const Budget& b, const BudgetStatus& st) {
  return k8s_error_with_causes(429, "TooManyRequests",
                               "Cannot evict pod as it would violate the pod's disruption budget.",
                               {{"", "DisruptionBudget",
                                 "The disruption budget " + b.name + " needs " + std::to_string(st.desired_healthy) +
                                     " healthy pods and has " + std::to_string(st.current_healthy) + " currently"}},
                               "", "");
}

}  // namespace

struct DisruptionBudgets::Eviction {
  std::string ns;
  BudgetPodView pod;
  bool dry_run = false;
  Verdict done;
  // What weighing the budget at its latest revision decided (the writer may weigh it more than once).
  std::optional<HttpResponse> refusal;
};

DisruptionBudgets::DisruptionBudgets(Store& store, Clock& clock, PodWriter& writer)
    : store_(store),
      clock_(clock),
      writer_(writer),
      prefix_(pod_disruption_budget_kind().prefix()),
      budgets_(store, clock, prefix_,
               [this](const std::string& key, const std::string* value) { on_budget(key, value); }),
      pods_(store, clock, [this](const std::string& ns) { mark(ns); }),
      settle_(clock.new_timer()),
      expiry_(clock.new_timer()) {}

DisruptionBudgets::~DisruptionBudgets() { stop(); }

void DisruptionBudgets::start() {
  if (running_) return;
  running_ = true;
  // Every budget is computed again once read: what changed while no one led is caught up.
  budgets_.set_on_synced([this] {
    for (const auto& [ns, count] : namespaces_) {
      pods_.follow(ns);  // (budgets read before a stop are not reported again)
      mark(ns);
    }
  });
  budgets_.start();
}

void DisruptionBudgets::stop() {
  if (!running_) return;
  running_ = false;
  budgets_.stop();
  pods_.stop();
  settle_->stop();
  expiry_->stop();
  dirty_.clear();
  expiries_.clear();
}

void DisruptionBudgets::on_budget(const std::string& key, const std::string* value) {
  std::string ns = namespace_of(std::string_view(key).substr(prefix_.size()));
  bool had = specs_.count(key) > 0;
  if (!value) {
    specs_.erase(key);
    if (had && --namespaces_[ns] == 0) {
      namespaces_.erase(ns);
      pods_.unfollow(ns);  // no budget there needs them now
    }
  } else {
    // Its own status writes come back here too: only a new spec (or a new
    // budget) is worth computing again for.
    std::string error;
    auto pdb = JsonValue::parse(*value, &error);
    const JsonValue* spec = pdb ? pdb->get("spec") : nullptr;
    std::string text = spec ? spec->dump() : "";
    // Disruptions recorded by an eviction (here, or by a leader before)
    // are counted again once they time out.
    if (auto b = pdb ? read_budget(*pdb) : std::nullopt) expire_at(ns, b->disrupted);
    if (!had && ++namespaces_[ns] == 1) pods_.follow(ns);  // computed once they are read
    if (had && specs_[key] == text) return;
    specs_[key] = text;
    mark(ns);
  }
}

void DisruptionBudgets::mark(const std::string& ns) {
  dirty_.insert(ns);
  if (!settle_->active()) settle_->start(kSettleMs, [this] { flush(); });
}

void DisruptionBudgets::flush() {
  std::set<std::string> dirty = std::move(dirty_);
  dirty_.clear();
  for (const auto& ns : dirty) {
    if (namespaces_.count(ns)) recompute(ns);
  }
}

std::shared_ptr<const std::vector<BudgetPodView>> DisruptionBudgets::kept_pods(const std::string& ns) const {
  const auto* known = pods_.pods(ns);
  if (!known) return nullptr;
  auto views = std::make_shared<std::vector<BudgetPodView>>();
  views->reserve(known->size());
  for (const auto& [name, p] : *known) {
    if (!p.gone) views->push_back(p.view);
  }
  return views;
}

void DisruptionBudgets::recompute(const std::string& ns) {
  auto views = kept_pods(ns);
  if (!views) return;  // not read yet: computed once they are
  std::string prefix = prefix_ + ns + "/";
  for (auto it = specs_.lower_bound(prefix); it != specs_.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    PodWriter::Update u;
    u.key = it->first;
    // Weighed on the budget as stored when written (a retry after a
    // conflict sees the disruptions an eviction recorded meanwhile).
    u.change = [this, ns, views](JsonValue& pdb, int64_t) {
      auto b = read_budget(pdb);
      if (!b) return PodWriter::Verdict::kDecline;
      int64_t now = clock_.unix_ms();
      BudgetStatus st = budget_status(b->spec, selected(*b, *views), b->disrupted, now);
      expire_at(ns, st.disrupted);
      JsonValue next = budget_status_json(st, b->generation, pdb.get("status"), now);
      if (const JsonValue* old = pdb.get("status"); old && old->dump() == next.dump())
        return PodWriter::Verdict::kDecline;
      pdb.set("status", std::move(next));
      return PodWriter::Verdict::kPut;
    };
    u.done = [key = it->first](PodWriter::Result&& res) {
      using Outcome = PodWriter::Outcome;
      if (res.written() || res.outcome == Outcome::kDeclined || res.outcome == Outcome::kMissing) return;
      log_warn("budget_status_unwritten").kv("budget", key).kv("outcome", PodWriter::outcome_name(res.outcome));
    };
    writer_.update(std::move(u));
  }
}

void DisruptionBudgets::expire_at(const std::string& ns, const DisruptedPods& disrupted) {
  if (disrupted.empty()) return;
  int64_t due = INT64_MAX;
  for (const auto& [pod, at] : disrupted) due = std::min(due, at + kDisruptedPodTimeoutMs);
  auto [it, fresh] = expiries_.emplace(ns, due);
  if (!fresh && due >= it->second) return;
  it->second = due;
  arm_expiry();
}

void DisruptionBudgets::arm_expiry() {
  expiry_->stop();
  if (expiries_.empty()) return;
  int64_t soonest = INT64_MAX;
  for (const auto& [ns, due] : expiries_) soonest = std::min(soonest, due);
  expiry_->start(static_cast<uint64_t>(std::max<int64_t>(0, soonest - clock_.unix_ms())), [this] {
    int64_t now = clock_.unix_ms();
    for (auto e = expiries_.begin(); e != expiries_.end();) {
      if (e->second > now) {
        ++e;
        continue;
      }
      mark(e->first);
      e = expiries_.erase(e);
    }
    arm_expiry();
  });
}

void DisruptionBudgets::admit_eviction(const std::string& ns, const JsonValue& pod, bool dry_run, Verdict done) {
  auto e = std::make_shared<Eviction>();
  e->ns = ns;
  e->pod = budget_pod_view(pod);
  e->dry_run = dry_run;
  e->done = std::move(done);
  // A pod that has not started, has ended or is going already disrupts nothing.
  if (e->pod.pending || e->pod.ended || e->pod.pod.terminating) return e->done(std::nullopt);
  RangeOptions all;
  all.prefix = true;
  store_.get(prefix_ + ns + "/", all, [this, e](RangeResult&& r) {
    if (!r.status.ok()) return e->done(store_down(r.status));
    std::vector<KeyValue> covering;
    for (auto& kv : r.kvs) {
      std::string error;
      auto pdb = JsonValue::parse(kv.value, &error);
      auto b = pdb ? read_budget(*pdb) : std::nullopt;
      if (b && b->selects(e->pod.labels)) covering.push_back(std::move(kv));
    }
    if (covering.empty()) return e->done(std::nullopt);
    if (covering.size() > 1)
      return e->done(k8s_error(500, "InternalError",
                               "Internal error occurred: This pod has more than one PodDisruptionBudget, which the "
                               "eviction subresource does not support."));
    // The pods as kept for the budgets (as the API server weighs an eviction
    // on what its informers saw): a drain's evictions read no namespace each;
    // one that comes before they are read reads them.
    if (auto kept = kept_pods(e->ns)) return weigh(e, covering[0].key, std::move(kept));
    RangeOptions pods;
    pods.prefix = true;
    store_.get(PodRegistry::kPodPrefix + e->ns + "/", pods, [this, e, key = covering[0].key](RangeResult&& p) {
      if (!p.status.ok()) return e->done(store_down(p.status));
      weigh(e, key, std::make_shared<const std::vector<BudgetPodView>>(read_pods(p.kvs)));
    });
  });
}

void DisruptionBudgets::weigh(std::shared_ptr<Eviction> e, const std::string& key,
                              std::shared_ptr<const std::vector<BudgetPodView>> pods) {
  PodWriter::Update u;
  u.key = key;
  u.dry_run = e->dry_run;
  u.change = [this, e, pods = std::move(pods)](JsonValue& pdb, int64_t) {
    e->refusal.reset();
    auto b = read_budget(pdb);
    if (!b) return PodWriter::Verdict::kDecline;
    int64_t now = clock_.unix_ms();
    BudgetStatus st = budget_status(b->spec, selected(*b, *pods), b->disrupted, now);
    switch (check_eviction(b->spec, st, e->pod.pod.healthy)) {
      case EvictionVerdict::kAllowed:
        return PodWriter::Verdict::kDecline;
      case EvictionVerdict::kRefused:
        e->refusal = would_violate(*b, st);
        return PodWriter::Verdict::kDecline;
      case EvictionVerdict::kTooManyUnconfirmed:
        e->refusal = k8s_error(403, "Forbidden",
                               "DisruptedPods map too big - too many evictions not confirmed by PDB controller");
        return PodWriter::Verdict::kDecline;
      case EvictionVerdict::kCounted:
        break;
    }
    // Spent: the pod is not counted healthy until it is seen going.
    st.disrupted[e->pod.pod.name] = now;
    --st.disruptions_allowed;
    pdb.set("status", budget_status_json(st, b->generation, pdb.get("status"), now));
    return PodWriter::Verdict::kPut;
  };
  u.done = [e](PodWriter::Result&& r) {
    using Outcome = PodWriter::Outcome;
    switch (r.outcome) {
      case Outcome::kWritten:
      case Outcome::kDeleted:
      case Outcome::kMissing:  // the budget went meanwhile: nothing holds the pod
        return e->done(std::nullopt);
      case Outcome::kDeclined:
        return e->done(std::move(e->refusal));
      case Outcome::kConflict:
        return e->done(k8s_error(429, "TooManyRequests",
                                 "the disruption budget changed too often while this eviction was weighed; try again"));
      case Outcome::kStoreDown:
        return e->done(store_down(r.status));
      case Outcome::kUnreadable:
        return e->done(k8s_error(500, "InternalError", "the stored PodDisruptionBudget is not JSON"));
    }
  };
  writer_.update(std::move(u));
}

}  // namespace uvsched
