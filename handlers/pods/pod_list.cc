#include "handlers/pods/pod_list.h"

#include "storage/base64.h"

namespace uvsched {

PodListBody::PodListBody(RangeResult range, std::shared_ptr<const PodQuery> query, int64_t now_unix_ms)
    : range_(std::move(range)), query_(std::move(query)) {
  if (query_->table) table_.emplace(std::to_string(range_.revision), now_unix_ms, query_->row);
  for (const auto& kv : range_.kvs) unread_bytes_ += kv.value.size();
  stored_bytes_ = unread_bytes_;
}

bool PodListBody::slice(std::string& out, size_t budget) {
  const PodQuery& q = *query_;
  size_t parsed = 0;
  bool cut = false;
  bool whole = budget == SIZE_MAX;
  while (next_ < range_.kvs.size()) {
    if (!whole && (out.size() >= budget || parsed >= kParsedPerSlice)) {
      out += table_ ? table_->take_written() : items_.take();
      return true;
    }
    const KeyValue& kv = range_.kvs[next_++];
    unread_bytes_ -= kv.value.size();
    if (!q.continue_after.empty() && kv.key <= q.continue_after) continue;
    std::optional<JsonValue> pod;
    if (q.filters() || q.table) {
      ++parsed;
      pod = parse_stored(kv);
      if (!pod || !q.selects(*pod)) continue;
    }
    if (q.limit > 0 && static_cast<int64_t>(items_.size() + rows_) >= q.limit) {
      cut = true;  // another match exists: hand out a continue token
      break;
    }
    if (table_) {
      table_->add(*pod);
      ++rows_;
      out += table_->take_written();
    } else {
      items_.add(kv.value, kv.mod_revision);
      out += items_.take();
    }
    last_key_ = kv.key;
  }
  std::string token = cut ? base64_encode(last_key_) : "";
  if (table_) {
    out += table_->finish(token);
  } else {
    items_.finish(range_.revision, token);
    out += items_.take();
  }
  next_ = range_.kvs.size();
  return false;
}

}  // namespace uvsched
