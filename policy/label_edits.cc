#include "policy/label_edits.h"

namespace uvsched {

Labels with_edits(const Labels& own, const LabelEdits& edits) {
  Labels out = own;
  for (const auto& [key, value] : edits) {
    if (value) {
      out[key] = *value;
    } else {
      out.erase(key);
    }
  }
  return out;
}

LabelEdits edits_between(const Labels& before, const Labels& after, LabelEdits current) {
  for (const auto& [key, value] : after) {
    auto was = before.find(key);
    if (was == before.end() || was->second != value) current[key] = value;
  }
  for (const auto& [key, value] : before) {
    if (!after.contains(key)) current[key] = std::nullopt;
  }
  return current;
}

}  // namespace uvsched
