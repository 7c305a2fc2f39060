#include "storage/kv_table.h"

#include <new>

namespace uvsched {

KvTable& KvTable::operator=(KvTable&& o) noexcept {
  if (this != &o) {
    clear();
    set_ = std::move(o.set_);
    o.set_.clear();
  }
  return *this;
}

KvTable::Entry* KvTable::make(std::string_view key, std::string_view packed, const Meta& meta) {
  void* raw = ::operator new(sizeof(Entry) + key.size() + packed.size());
  Entry* e = new (raw) Entry();
  e->meta = meta;
  e->key_size_ = static_cast<uint32_t>(key.size());
  e->value_size_ = static_cast<uint32_t>(packed.size());
  if (!key.empty()) std::memcpy(e->bytes(), key.data(), key.size());
  if (!packed.empty()) std::memcpy(e->bytes() + key.size(), packed.data(), packed.size());
  return e;
}

void KvTable::destroy(Entry* e) {
  e->~Entry();
  ::operator delete(e);
}

const KvTable::Entry* KvTable::find(std::string_view key) const {
  auto it = set_.find(key);
  return it == set_.end() ? nullptr : it->entry;
}

const KvTable::Entry& KvTable::put(std::string_view key, std::string_view packed, const Meta& meta) {
  auto it = set_.find(key);
  if (it == set_.end()) return *set_.insert(Slot{make(key, packed, meta)}).first->entry;
  Entry* old = it->entry;
  it->entry = make(old->key(), packed, meta);  // the same key: the order holds
  retire(old);
  return *it->entry;
}

void KvTable::erase(std::string_view key) {
  auto it = set_.find(key);
  if (it == set_.end()) return;
  Entry* e = it->entry;
  set_.erase(it);
  retire(e);
}

void KvTable::clear() {
  for (const Slot& s : set_) retire(s.entry);
  set_.clear();
}

void KvTable::retire(Entry* e) {
  if (pinned_) {
    retired_.push_back(e);
  } else {
    destroy(e);
  }
}

void KvTable::unpin() {
  pinned_ = false;
  for (Entry* e : retired_) destroy(e);
  retired_.clear();
  retired_.shrink_to_fit();
}

}  // namespace uvsched
