#include "policy/label_sets.h"

#include <cassert>

namespace uvsched {

LabelSets::LabelSets() { sets_.emplace_back(); }

uint32_t LabelSets::acquire(const Labels& labels) {
  if (labels.empty()) return 0;
  // Keys and values cannot hold NUL: it separates them unambiguously.
  std::string text;
  for (const auto& [k, v] : labels) {
    text.append(k).push_back('\0');
    text.append(v).push_back('\0');
  }
  if (auto it = ids_.find(text); it != ids_.end()) {
    ++sets_[it->second].holders;
    return it->second;
  }
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<uint32_t>(sets_.size());
    sets_.emplace_back();
  }
  sets_[id] = Set{labels, text, 1, ++births_};
  ids_.emplace(std::move(text), id);
  return id;
}

void LabelSets::release(uint32_t id) {
  if (id == 0) return;
  Set& s = sets_.at(id);
  assert(s.holders > 0);
  if (--s.holders > 0) return;
  ids_.erase(s.text);
  s = Set{};
  free_.push_back(id);
}

}  // namespace uvsched
