#include "policy/reconciler.h"

#include <algorithm>

namespace uvsched {

void Reconciler::request_explicit(std::vector<std::string> tasks, uint64_t now) {
  outstanding_ = std::set<std::string>(tasks.begin(), tasks.end());  // cancels the one in progress
  next_explicit_ = now;
  backoff_ = s_.initial_ms;
}

Reconciler::Ask Reconciler::due(uint64_t now) {
  Ask ask;
  if (!outstanding_.empty() && now >= next_explicit_) {
    ask.tasks.assign(outstanding_.begin(), outstanding_.end());
    next_explicit_ = now + backoff_;
    backoff_ = std::min(backoff_ * 2, s_.max_ms);
  }
  if (next_implicit_ != 0 && now >= next_implicit_) {
    ask.implicit = true;
    next_implicit_ = s_.implicit_interval_ms > 0 ? now + s_.implicit_interval_ms : 0;
  }
  return ask;
}

std::optional<uint64_t> Reconciler::next_deadline() const {
  std::optional<uint64_t> next;
  if (!outstanding_.empty()) next = next_explicit_;
  if (next_implicit_ != 0 && (!next || next_implicit_ < *next)) next = next_implicit_;
  return next;
}

}  // namespace uvsched
