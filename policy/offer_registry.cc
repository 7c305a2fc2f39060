#include "policy/offer_registry.h"

#include <algorithm>

namespace uvsched {

// FNV-1a, 64 bits: std::hash's value is not specified to be 64 bits wide.
uint64_t OfferRegistry::id_hash(std::string_view id) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : id) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

bool OfferRegistry::add(Offer offer, uint64_t now) {
  if (lingering_.contains(id_hash(offer.id))) return false;
  auto [it, added] = entries_.try_emplace(offer.id);
  if (!added) return false;
  Entry& e = it->second;
  e.offer = std::move(offer);
  e.expires_at = now + settings_.ttl_ms;
  e.seq = seq_++;
  e.live_it = live_.insert(live_.end(), &e);
  e.in_live = true;
  index(it);
  return true;
}

uint64_t OfferRegistry::next_for(const Entry& e) const {
  uint64_t next = 0;
  auto consider = [&](uint64_t t) {
    if (t != 0 && (next == 0 || t < next)) next = t;
  };
  if (e.state == State::kLive) consider(e.expires_at);
  if (e.state != State::kClaimed) consider(e.decline_at);
  if (e.state == State::kExpired) consider(e.purge_at);
  return next;
}

void OfferRegistry::unindex(Entry& e) {
  if (!e.has_deadline) return;
  deadlines_.erase(e.deadline_it);
  e.has_deadline = false;
}

void OfferRegistry::index(Entries::iterator it) {
  const std::string& id = it->first;
  Entry& e = it->second;
  unindex(e);
  if (e.state == State::kExpired && e.decline_at == 0) {
    // Nothing left to do but remember the id until it is purged: keep only
    // that (agents re-offer every few seconds, so thousands linger at a time).
    lingering_[id_hash(id)] = e.purge_at;
    purges_.emplace_back(e.purge_at, id_hash(id));
    unlink_live(e);
    entries_.erase(it);
    return;
  }
  if (uint64_t t = next_for(e)) {
    e.deadline_it = deadlines_.emplace(t, id);
    e.has_deadline = true;
  }
}

void OfferRegistry::unlink_live(Entry& e) {
  if (!e.in_live) return;
  live_.erase(e.live_it);
  e.in_live = false;
}

const Offer* OfferRegistry::find_first(const Filter& fits, uint64_t now) const {
  for (const Entry* e : live_) {
    if (e->expires_at > now && fits(e->offer)) return &e->offer;  // (an expired one: tick() is behind)
  }
  return nullptr;
}

const Offer* OfferRegistry::acquire_first(const Filter& fits, const std::string& claimant, uint64_t now) {
  for (Entry* found : live_) {
    Entry& e = *found;
    if (e.expires_at <= now) continue;  // tick() has not caught up with it yet
    if (!fits(e.offer)) continue;
    unlink_live(e);
    e.state = State::kClaimed;
    e.claimant = claimant;
    e.decline_at = 0;
    claims_[claimant] = e.offer.id;
    return &e.offer;
  }
  return nullptr;
}

const Offer* OfferRegistry::held_by(const std::string& claimant) const {
  auto c = claims_.find(claimant);
  if (c == claims_.end()) return nullptr;
  auto it = entries_.find(c->second);
  if (it == entries_.end() || it->second.state != State::kClaimed) return nullptr;
  return &it->second.offer;
}

void OfferRegistry::release(const std::string& id, uint64_t now) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state != State::kClaimed) return;
  Entry& e = it->second;
  claims_.erase(e.claimant);
  e.claimant.clear();
  e.decline_at = now + 2 * settings_.ttl_ms;
  if (e.expires_at > now && !e.rescinded) {
    // Still good: others may have it until the deferred decline.
    e.state = State::kLive;
    // Back in arrival order, so FCFS stays first-come.
    auto pos = std::find_if(live_.begin(), live_.end(), [&](const Entry* other) { return other->seq > e.seq; });
    e.live_it = live_.insert(pos, &e);
    e.in_live = true;
  } else {
    e.state = State::kExpired;  // rescinded or out of time while held: linger
    e.purge_at = now + settings_.linger_ms;
  }
  index(it);
}

bool OfferRegistry::still_held(const std::string& id, const std::string& claimant, uint64_t now) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  const Entry& e = it->second;
  return e.state == State::kClaimed && e.claimant == claimant && !e.rescinded && e.expires_at > now;
}

bool OfferRegistry::rescinded(const std::string& id) const {
  auto it = entries_.find(id);
  return it != entries_.end() && it->second.rescinded;
}

void OfferRegistry::consume(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (!it->second.claimant.empty()) claims_.erase(it->second.claimant);
  unlink_live(it->second);
  unindex(it->second);
  entries_.erase(it);
}

void OfferRegistry::expire(Entry& e, uint64_t now, bool decline) {
  unlink_live(e);
  if (e.state == State::kClaimed) {
    // The claimant still holds it: it expires when released.
    e.expires_at = std::min(e.expires_at, now);
    if (!decline) e.decline_at = 0;
    return;
  }
  e.state = State::kExpired;
  e.purge_at = now + settings_.linger_ms;
  e.decline_at = decline ? now : 0;
}

void OfferRegistry::rescind(const std::string& id, uint64_t now) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state == State::kExpired) return;
  it->second.rescinded = true;
  expire(it->second, now, true);
  index(it);
}

void OfferRegistry::invalidate(const std::string& id, uint64_t now) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (!it->second.claimant.empty()) {
    claims_.erase(it->second.claimant);
    it->second.claimant.clear();
    it->second.state = State::kLive;
  }
  if (it->second.state != State::kExpired) expire(it->second, now, false);
  it->second.decline_at = 0;
  index(it);
}

// Ids first: invalidating may move an entry out of entries_.
void OfferRegistry::invalidate_agent(const std::string& agent, uint64_t now) {
  std::vector<std::string> ids;
  for (const auto& [id, e] : entries_) {
    if (e.offer.agent == agent) ids.push_back(id);
  }
  for (const auto& id : ids) invalidate(id, now);
}

void OfferRegistry::invalidate_all(uint64_t now) {
  std::vector<std::string> ids;
  for (const auto& [id, e] : entries_) ids.push_back(id);
  for (const auto& id : ids) invalidate(id, now);
}

bool OfferRegistry::step(Entries::iterator it, uint64_t now, std::vector<Declined>* declined) {
  Entry& e = it->second;
  if (e.state == State::kLive && e.expires_at <= now) {
    // Never claimed: declined at expiry. Released: its deferred decline stands.
    uint64_t deferred = e.decline_at;
    expire(e, now, deferred == 0);
    if (deferred != 0) e.decline_at = deferred;
  }
  if (e.state != State::kClaimed && e.decline_at != 0 && e.decline_at <= now) {
    declined->push_back({it->first, e.offer.agent});
    e.decline_at = 0;
    if (e.state == State::kLive) {
      unlink_live(e);
      e.state = State::kExpired;
      e.purge_at = now + settings_.linger_ms;
    }
  }
  if (e.state == State::kExpired && e.decline_at == 0 && e.purge_at <= now) {
    unlink_live(e);
    unindex(e);
    entries_.erase(it);
    return false;
  }
  return true;
}

std::vector<OfferRegistry::Declined> OfferRegistry::tick(uint64_t now) {
  std::vector<Declined> declined;
  // Purge times come in the order they were set (linger is one constant).
  while (!purges_.empty() && purges_.front().first <= now) {
    auto it = lingering_.find(purges_.front().second);
    if (it != lingering_.end() && it->second <= now) lingering_.erase(it);
    purges_.pop_front();
  }
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    uint64_t at = deadlines_.begin()->first;
    std::string id = std::move(deadlines_.begin()->second);
    deadlines_.erase(deadlines_.begin());
    auto it = entries_.find(id);
    if (it == entries_.end()) continue;  // (cannot be: an entry takes its item out as it goes)
    it->second.has_deadline = false;     // that was its one item
    uint64_t current = next_for(it->second);
    if (current != at && current > now) {  // its deadline moved later without an index (a claim): filed again
      index(it);
      continue;
    }
    if (step(it, now, &declined)) index(it);
  }
  return declined;
}

std::optional<uint64_t> OfferRegistry::next_deadline() const {
  std::optional<uint64_t> next;
  if (!deadlines_.empty()) next = deadlines_.begin()->first;  // may be stale: a tick then finds nothing to do
  if (!purges_.empty() && (!next || purges_.front().first < *next)) next = purges_.front().first;
  return next;
}

void OfferRegistry::listen(const std::string& waiter, Filter filter) {
  unlisten(waiter);
  uint64_t seq = listen_seq_++;
  listeners_.emplace(seq, std::make_pair(waiter, std::move(filter)));
  listener_seq_[waiter] = seq;
}

void OfferRegistry::unlisten(const std::string& waiter) {
  auto it = listener_seq_.find(waiter);
  if (it == listener_seq_.end()) return;
  listeners_.erase(it->second);
  listener_seq_.erase(it);
}

std::vector<std::string> OfferRegistry::wake(const std::string& id) {
  std::vector<std::string> woken;
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state != State::kLive) return woken;
  const Offer& offer = it->second.offer;
  for (auto l = listeners_.begin(); l != listeners_.end(); ++l) {
    if (l->second.second(offer)) {
      woken.push_back(l->second.first);
      listener_seq_.erase(l->second.first);
      listeners_.erase(l);
      break;
    }
  }
  return woken;
}

std::optional<OfferRegistry::State> OfferRegistry::state(const std::string& id) const {
  auto it = entries_.find(id);
  if (it != entries_.end()) return it->second.state;
  if (lingering_.count(id_hash(id))) return State::kExpired;
  return std::nullopt;
}

const std::string* OfferRegistry::agent_of(const std::string& id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second.offer.agent;
}

Resources OfferRegistry::free_total(const Filter& counts) const {
  Resources total;
  for (const Entry* e : live_) {
    const Offer& o = e->offer;
    if (counts && !counts(o)) continue;
    total.cpus += o.resources.cpus;
    total.mem_mib += o.resources.mem_mib;
  }
  return total;
}

std::vector<std::pair<const Offer*, OfferRegistry::State>> OfferRegistry::all() const {
  std::vector<std::pair<const Offer*, State>> out;
  for (const auto& [id, e] : entries_) out.emplace_back(&e.offer, e.state);
  std::sort(out.begin(), out.end(),
            [&](const auto& a, const auto& b) { return entries_.at(a.first->id).seq < entries_.at(b.first->id).seq; });
  return out;
}

}  // namespace uvsched
