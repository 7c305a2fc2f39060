// The embedded store's keys, in key order, each with its packed value and
// metadata in one heap block, found through a B-tree of pointers to the
// blocks: 100k pods cost one block each plus ~10 B of tree, where a std::set
// node added ~48 B with its malloc header (and a std::map<std::string, ...>
// with a string value took four allocations, ~350 B). Blocks are replaced
// whole when a value changes; the key inside stays the same, so the order
// does. Blocks never move (the tree's slots do): an Entry* stays valid until
// its key is put again or erased.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/btree_set.h>

namespace uvsched {

class KvTable {
 public:
  // A key's lease is not here: few keys have one, and the store finds it
  // through its leases (8 B less on each of 100k pods).
  struct Meta {
    int64_t create_revision = 0;
    int64_t mod_revision = 0;
    int64_t version = 0;
  };

  // One key's block: Meta, then the key's bytes, then the packed value's.
  class Entry {
   public:
    Meta meta;
    std::string_view key() const { return {bytes(), key_size_}; }
    std::string_view packed() const { return {bytes() + key_size_, value_size_}; }

   private:
    friend class KvTable;
    const char* bytes() const { return reinterpret_cast<const char*>(this + 1); }
    char* bytes() { return reinterpret_cast<char*>(this + 1); }
    uint32_t key_size_ = 0;
    uint32_t value_size_ = 0;
  };

 private:
  struct Slot {
    // mutable: a put swaps in a new block for the same key (the order is kept).
    mutable Entry* entry;
    std::string_view key() const { return entry->key(); }
  };
  struct Less {
    using is_transparent = void;
    bool operator()(const Slot& a, const Slot& b) const { return a.key() < b.key(); }
    bool operator()(const Slot& a, std::string_view b) const { return a.key() < b; }
    bool operator()(std::string_view a, const Slot& b) const { return a < b.key(); }
  };
  using Set = absl::btree_set<Slot, Less>;

 public:
  class Iterator {
   public:
    explicit Iterator(Set::const_iterator it) : it_(it) {}
    const Entry& operator*() const { return *it_->entry; }
    const Entry* operator->() const { return it_->entry; }
    Iterator& operator++() {
      ++it_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return it_ == o.it_; }

   private:
    friend class KvTable;
    Set::const_iterator it_;
  };

  KvTable() = default;
  KvTable(const KvTable&) = delete;
  KvTable& operator=(const KvTable&) = delete;
  KvTable(KvTable&& o) noexcept : set_(std::move(o.set_)) {
    o.set_.clear();
    o.last_ = nullptr;
  }
  KvTable& operator=(KvTable&& o) noexcept;
  ~KvTable() {
    clear();
    unpin();
  }

  size_t size() const { return set_.size(); }
  Iterator begin() const { return Iterator(set_.begin()); }
  Iterator end() const { return Iterator(set_.end()); }
  Iterator lower_bound(std::string_view key) const { return Iterator(set_.lower_bound(key)); }
  const Entry* find(std::string_view key) const;

  // Sets the key's packed value and metadata, adding the key if it is new.
  const Entry& put(std::string_view key, std::string_view packed, const Meta& meta) { return put(key, {packed}, meta); }
  // The same with the packed value given in pieces, laid end to end (a tag
  // and a value, without first copying them into one string).
  const Entry& put(std::string_view key, std::initializer_list<std::string_view> packed, const Meta& meta);
  void erase(std::string_view key);
  void clear();

  // While pinned, no block is freed: the blocks that puts replace and erases
  // drop are kept until unpin(). Blocks never change once made, so a
  // snapshot can read the pinned ones on another thread while the table goes
  // on changing, without a copy of the state.
  void pin() { pinned_ = true; }
  void unpin();

 private:
  static Entry* make(std::string_view key, std::initializer_list<std::string_view> packed, const Meta& meta);
  static void destroy(Entry* e);
  void retire(Entry* e);  // destroy, or keep until unpin()
  const Slot* locate(std::string_view key) const;

  Set set_;
  // The slot last found or put. A write looks its key up three times (the
  // txn's compare, the previous value, the put): the two after the first
  // are one key compare here, not a walk down the tree comparing the key
  // with a dozen others in blocks all over the heap. Slots move only when
  // the tree adds or drops one, and then this is forgotten.
  mutable const Slot* last_ = nullptr;
  bool pinned_ = false;
  std::vector<Entry*> retired_;
};

}  // namespace uvsched
