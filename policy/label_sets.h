// Label sets interned: each distinct set of labels kept once, by number,
// with a count of its holders. The placed pods' labels are what inter-pod
// affinity and topology spread count, and at 100k pods a copy each would
// cost megabytes, while the pods of one workload share one set (a
// ReplicaSet's pods differ in name, not labels). Set 0 is the empty set and
// is never freed. Pure.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <string>
#include <vector>

#include "policy/label_selector.h"

namespace uvsched {

class LabelSets {
 public:
  LabelSets();
  // The number of `labels`, held once more (0 for no labels).
  uint32_t acquire(const Labels& labels);
  // Held once less: freed (and its number reused) when no one holds it.
  void release(uint32_t id);
  const Labels& get(uint32_t id) const { return sets_.at(id).labels; }
  // When the set now numbered `id` was made (a count of the sets made): a
  // number is reused once its set is freed, and what was learnt of the old
  // set (by number) must not be taken for the new one.
  uint64_t born(uint32_t id) const { return sets_.at(id).born; }
  // Distinct sets held, the empty one not counted.
  size_t size() const { return ids_.size(); }

 private:
  struct Set {
    Labels labels;
    std::string text;  // its key in ids_
    uint32_t holders = 0;
    uint64_t born = 0;
  };
  std::vector<Set> sets_;
  std::vector<uint32_t> free_;
  uint64_t births_ = 0;
  absl::flat_hash_map<std::string, uint32_t> ids_;
};

}  // namespace uvsched
