// A list of pods (a PodList, or a Table when asked for one) written from the
// range read that is its snapshot, a slice at a time: each slice parses a
// bounded number of pods, so a list of 100k pods neither stalls the loop nor
// is made all at once. Selectors, limit and continue are the query's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "handlers/pods/pod_query.h"
#include "handlers/pods/pod_table.h"
#include "handlers/pods/stored_object.h"
#include "storage/store.h"

namespace uvsched {

class PodListBody {
 public:
  PodListBody(RangeResult range, std::shared_ptr<const PodQuery> query, int64_t now_unix_ms);

  // Appends about `budget` bytes (SIZE_MAX: the rest at once) to `out`;
  // true while more remains.
  bool slice(std::string& out, size_t budget);
  // The bytes of the stored values not yet made into items, and of them all.
  size_t unread_bytes() const { return unread_bytes_; }
  size_t stored_bytes() const { return stored_bytes_; }

 private:
  static constexpr size_t kParsedPerSlice = 256;  // ~10 us each: a slice stays near a few milliseconds

  RangeResult range_;
  std::shared_ptr<const PodQuery> query_;
  size_t next_ = 0;
  ListWriter items_{"PodList"};
  std::optional<PodTableWriter> table_;
  size_t rows_ = 0;
  std::string last_key_;
  size_t unread_bytes_ = 0;
  size_t stored_bytes_ = 0;
};

}  // namespace uvsched
