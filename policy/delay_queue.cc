#include "policy/delay_queue.h"

#include <algorithm>

namespace uvsched {

uint64_t PodBackoff::next_delay(const std::string& pod, uint64_t now) {
  auto it = entries_.find(pod);
  if (it == entries_.end() || now - it->second.last > s_.forget_after_ms) {
    entries_[pod] = Entry{s_.initial_ms, now};
    return s_.initial_ms;
  }
  it->second.delay = std::min(it->second.delay * 2, s_.max_ms);
  it->second.last = now;
  return it->second.delay;
}

void PodBackoff::gc(uint64_t now) {
  if (now < next_gc_) return;
  next_gc_ = now + 1'000;
  std::erase_if(entries_, [&](const auto& e) { return now - e.second.last > s_.forget_after_ms; });
}

void DelayQueue::add(const std::string& pod, uint64_t due, Mode mode) {
  auto it = due_of_.find(pod);
  if (it != due_of_.end()) {
    if (mode == Mode::kKeepExisting) return;
    by_due_.erase(it->second);
  }
  auto key = std::make_pair(due, seq_++);
  by_due_[key] = pod;
  due_of_[pod] = key;
}

bool DelayQueue::breakout(const std::string& pod, uint64_t now) {
  auto it = due_of_.find(pod);
  if (it == due_of_.end() || it->second.first <= now) return false;
  add(pod, now, Mode::kReplaceExisting);
  return true;
}

bool DelayQueue::remove(const std::string& pod) {
  auto it = due_of_.find(pod);
  if (it == due_of_.end()) return false;
  by_due_.erase(it->second);
  due_of_.erase(it);
  return true;
}

std::vector<std::string> DelayQueue::pop_due(uint64_t now) {
  std::vector<std::string> out;
  while (!by_due_.empty() && by_due_.begin()->first.first <= now) {
    out.push_back(by_due_.begin()->second);
    due_of_.erase(by_due_.begin()->second);
    by_due_.erase(by_due_.begin());
  }
  return out;
}

std::vector<std::pair<std::string, uint64_t>> DelayQueue::in_order(size_t limit) const {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (auto it = by_due_.begin(); it != by_due_.end() && out.size() < limit; ++it) {
    out.emplace_back(it->second, it->first.first);
  }
  return out;
}

std::optional<size_t> DelayQueue::position(const std::string& pod, size_t limit) const {
  auto mine = due_of_.find(pod);
  if (mine == due_of_.end()) return std::nullopt;
  size_t n = 1;
  for (auto it = by_due_.begin(); it != by_due_.end() && n <= limit; ++it, ++n) {
    if (it->first == mine->second) return n;
  }
  return std::nullopt;
}

std::optional<uint64_t> DelayQueue::next_due() const {
  if (by_due_.empty()) return std::nullopt;
  return by_due_.begin()->first.first;
}

}  // namespace uvsched
