#include "policy/reconciler.h"

#include <algorithm>

namespace uvsched {

void Reconciler::request_explicit(const std::string& scope, std::vector<std::string> tasks, uint64_t now) {
  if (auto old = scopes_.find(scope); old != scopes_.end()) {  // cancels the one in progress
    for (const auto& t : old->second) outstanding_.erase(t);
    scopes_.erase(old);
  }
  for (auto& t : tasks) {
    auto [it, inserted] = outstanding_.try_emplace(t, scope);
    if (!inserted && it->second != scope) {  // a task asked about by another scope moves here
      scopes_[it->second].erase(t);
      it->second = scope;
    }
    scopes_[scope].insert(std::move(t));
  }
  if (scopes_.count(scope) && scopes_[scope].empty()) scopes_.erase(scope);
  next_explicit_ = now;
  backoff_ = s_.initial_ms;
}

void Reconciler::reported(const std::string& task) {
  auto it = outstanding_.find(task);
  if (it == outstanding_.end()) return;
  auto scope = scopes_.find(it->second);
  if (scope != scopes_.end()) {
    scope->second.erase(task);
    if (scope->second.empty()) scopes_.erase(scope);
  }
  outstanding_.erase(it);
}

Reconciler::Ask Reconciler::due(uint64_t now) {
  Ask ask;
  if (!outstanding_.empty() && now >= next_explicit_) {
    for (const auto& [scope, tasks] : scopes_) ask.tasks.insert(ask.tasks.end(), tasks.begin(), tasks.end());
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
