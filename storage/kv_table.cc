#include "storage/kv_table.h"

#include <new>

namespace uvsched {

KvTable& KvTable::operator=(KvTable&& o) noexcept {
  if (this != &o) {
    clear();
    set_ = std::move(o.set_);
    o.set_.clear();
    o.last_ = nullptr;
  }
  return *this;
}

KvTable::Entry* KvTable::make(std::string_view key, std::initializer_list<std::string_view> packed, const Meta& meta) {
  size_t value_size = 0;
  for (std::string_view piece : packed) value_size += piece.size();
  void* raw = ::operator new(sizeof(Entry) + key.size() + value_size);
  Entry* e = new (raw) Entry();
  e->meta = meta;
  e->key_size_ = static_cast<uint32_t>(key.size());
  e->value_size_ = static_cast<uint32_t>(value_size);
  char* at = e->bytes();
  if (!key.empty()) std::memcpy(at, key.data(), key.size());
  at += key.size();
  for (std::string_view piece : packed) {
    if (!piece.empty()) std::memcpy(at, piece.data(), piece.size());
    at += piece.size();
  }
  return e;
}

void KvTable::destroy(Entry* e) {
  e->~Entry();
  ::operator delete(e);
}

const KvTable::Slot* KvTable::locate(std::string_view key) const {
  if (last_ && last_->key() == key) return last_;
  auto it = set_.find(key);
  if (it == set_.end()) return nullptr;
  return last_ = &*it;
}

const KvTable::Entry* KvTable::find(std::string_view key) const {
  const Slot* slot = locate(key);
  return slot ? slot->entry : nullptr;
}

const KvTable::Entry& KvTable::put(std::string_view key, std::initializer_list<std::string_view> packed,
                                   const Meta& meta) {
  if (const Slot* slot = locate(key)) {
    Entry* old = slot->entry;
    slot->entry = make(old->key(), packed, meta);  // the same key: the order holds
    retire(old);
    return *slot->entry;
  }
  last_ = &*set_.insert(Slot{make(key, packed, meta)}).first;
  return *last_->entry;
}

void KvTable::erase(std::string_view key) {
  auto it = set_.find(key);
  if (it == set_.end()) return;
  Entry* e = it->entry;
  last_ = nullptr;  // the erase may move slots
  set_.erase(it);
  retire(e);
}

void KvTable::clear() {
  for (const Slot& s : set_) retire(s.entry);
  last_ = nullptr;
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
