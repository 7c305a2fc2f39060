// The offers agents make of their free resources (Mesos semantics with the
// upstream scheduler's bugs fixed). Pure: callers pass the time in.
//  - An offer is live for ttl; expired or rescinded offers linger for
//    linger_ttl as expired entries, then are purged (upstream never purged).
//  - At most one claimant holds an offer. An offer that expires or is
//    rescinded unclaimed is declined; a claimed one is declined 2×ttl after
//    its claimant releases it, unless it was used (consumed) first.
//  - invalidate(id | agent | all) expires without declining.
//  - Walks go in arrival order (upstream's were random).
//  - Listeners: a pod that found no fit registers a filter; a new offer that
//    passes it wakes the pod early. One offer is consumed by one pod, so an
//    offer wakes the longest-waiting pod it fits, not every one (no herd).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/node_hash_map.h>

namespace uvsched {

struct PortRange {
  uint32_t begin = 0;
  uint32_t end = 0;  // inclusive
};

struct Resources {
  double cpus = 0;
  double mem_mib = 0;
  std::vector<PortRange> ports;
};

struct Offer {
  std::string id;
  std::string agent;  // the agent's hostname
  Resources resources;
};

class OfferRegistry {
 public:
  struct Settings {
    uint64_t ttl_ms = 5'000;
    uint64_t linger_ms = 120'000;
  };
  using Filter = std::function<bool(const Offer&)>;

  explicit OfferRegistry(Settings settings) : settings_(settings) {}

  // A new live offer. False when the id is already known (live or lingering).
  bool add(Offer offer, uint64_t now);
  // Claims the first live, unclaimed offer (in arrival order) that `fits`.
  const Offer* acquire_first(const Filter& fits, const std::string& claimant, uint64_t now);
  // The offer acquire_first would claim, left unclaimed.
  const Offer* find_first(const Filter& fits, uint64_t now) const;
  // The offer `claimant` holds, if it is still live.
  const Offer* held_by(const std::string& claimant) const;
  // Whether `claimant` still holds `id` and it still promises its resources:
  // not rescinded, not invalidated (its agent lost), not past its ttl. Asked
  // again before a launch, since the binding took a store write.
  bool still_held(const std::string& id, const std::string& claimant, uint64_t now) const;
  // Whether the agent took `id` back.
  bool rescinded(const std::string& id) const;
  // The claimant lets go without using it: declined 2×ttl later unless re-used.
  void release(const std::string& id, uint64_t now);
  // Used for a launch: gone, never declined.
  void consume(const std::string& id);
  // The agent took it back (OfferRescinded).
  void rescind(const std::string& id, uint64_t now);
  // Expire without declining.
  void invalidate(const std::string& id, uint64_t now);
  void invalidate_agent(const std::string& agent, uint64_t now);
  void invalidate_all(uint64_t now);

  // Moves time: expires, declines and purges what is due. Returns the offers
  // declined, with their agents (to be told: DECLINE).
  struct Declined {
    std::string id;
    std::string agent;
  };
  std::vector<Declined> tick(uint64_t now);
  // When tick() next has something to do; nullopt when nothing is pending.
  std::optional<uint64_t> next_deadline() const;

  void listen(const std::string& waiter, Filter filter);
  void unlisten(const std::string& waiter);
  // The longest-waiting waiter whose filter the offer `id` passes (it stops
  // listening); empty when none fits.
  std::vector<std::string> wake(const std::string& id);

  enum class State { kLive, kClaimed, kExpired };
  std::optional<State> state(const std::string& id) const;
  // The agent whose offer `id` is; null for an id not held in full (lingering or unknown).
  const std::string* agent_of(const std::string& id) const;
  size_t live_count() const { return live_.size(); }
  size_t size() const { return entries_.size() + lingering_.size(); }
  // Free resources on offer now (live and unclaimed), for the ML capacity cap;
  // only the offers `counts` takes, when given (a cordoned agent's are no room).
  Resources free_total(const Filter& counts = nullptr) const;
  // Each live, unclaimed offer in arrival order, without the copy and the
  // sort of all() (preemption sums them by agent).
  void for_each_live(const std::function<void(const Offer&)>& fn) const {
    for (const Entry* e : live_) fn(e->offer);
  }
  // Every offer still held in full, for operators: (offer, state) in arrival
  // order. Lingering ones are remembered by id only and are not listed.
  std::vector<std::pair<const Offer*, State>> all() const;

 private:
  struct Entry {
    Offer offer;
    State state = State::kLive;
    std::string claimant;
    uint64_t expires_at = 0;
    uint64_t decline_at = 0;  // 0: no decline pending
    uint64_t purge_at = 0;    // lingering until
    bool rescinded = false;
    uint64_t seq = 0;
    std::list<Entry*>::iterator live_it;
    bool in_live = false;
    // Its one item in deadlines_, if any: taken out when the entry changes
    // or goes, so the index holds no stale items (an offer consumed by a
    // launch left its expiry there for the TTL: 60k items, ~7 MB, while
    // 100k pods were placed).
    std::multimap<uint64_t, std::string>::iterator deadline_it;
    bool has_deadline = false;
  };

  void unlink_live(Entry& e);
  void unindex(Entry& e);
  void expire(Entry& e, uint64_t now, bool decline);
  // Handles one entry at `now`; false when it was purged.
  using Entries = absl::node_hash_map<std::string, Entry>;
  bool step(Entries::iterator it, uint64_t now, std::vector<Declined>* declined);
  uint64_t next_for(const Entry& e) const;
  void index(Entries::iterator it);  // files the entry under its next deadline, or keeps only its id

  Settings settings_;
  uint64_t seq_ = 0;
  // By id, hashed: every launch and re-offer looks one up. Arrival order is
  // kept by live_ and by each entry's seq. Nodes, for live_'s pointers.
  Entries entries_;
  // Live and unclaimed, in arrival order. Entries, not ids: a walk over 5k
  // offers for a pod that fits none did a map lookup per offer. (Map nodes
  // stay put, rehashing or not; an entry leaves this list before it leaves
  // the map.)
  std::list<Entry*> live_;
  absl::flat_hash_map<std::string, std::string> claims_;  // claimant -> offer id
  // Waiting pods in the order they started to wait (an offer wakes the
  // longest-waiting one it fits), found by pod too: with 100k pods waiting,
  // a linear search on every listen made a pod storm quadratic.
  std::map<uint64_t, std::pair<std::string, Filter>> listeners_;  // by sequence
  absl::flat_hash_map<std::string, uint64_t> listener_seq_;
  uint64_t listen_seq_ = 0;
  // Every entry's next deadline, so tick() touches only what is due (offers
  // linger for minutes: a registry holds far more entries than live offers).
  // One item per entry at most (Entry::deadline_it).
  std::multimap<uint64_t, std::string> deadlines_;
  // Expired offers with nothing pending, until purged: their ids stay taken
  // for the linger time, the rest of the entry is gone. Agents re-offer every
  // few seconds, so 5k agents keep ~150k ids lingering: each is remembered by
  // a 64-bit hash (~20 B in a flat table, not ~130 B with the string). A
  // colliding new id would be refused as known: at 2^-64 per pair, never.
  static uint64_t id_hash(std::string_view id);
  absl::flat_hash_map<uint64_t, uint64_t> lingering_;  // id hash -> purge at
  std::deque<std::pair<uint64_t, uint64_t>> purges_;   // (purge at, id hash) in purge order
};

}  // namespace uvsched
