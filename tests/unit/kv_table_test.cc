// The embedded store's ordered table, against a std::map doing the same.
#include "storage/kv_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

namespace uvsched {
namespace {

std::string value_of(const KvTable::Entry* e) { return e ? std::string(e->packed()) : "<none>"; }

// Puts, finds and erases over a few hundred keys, in an order that splits
// and merges the tree's nodes while the table remembers the slot it last
// found: whatever that memo holds, every answer must be the map's.
TEST(KvTable, AnswersLikeAnOrderedMapThroughInsertsAndErases) {
  KvTable table;
  std::map<std::string, std::string> want;
  std::mt19937 rng(7);
  auto key = [&] { return "/registry/pods/default/pod-" + std::to_string(rng() % 400); };
  for (int i = 0; i < 20000; ++i) {
    std::string k = key();
    switch (rng() % 4) {
      case 0:
      case 1: {
        std::string v = "v" + std::to_string(i);
        int64_t rev = i + 1;
        const KvTable::Entry& e = table.put(k, {"\x01", v}, KvTable::Meta{rev, rev, 1});
        ASSERT_EQ(e.key(), k);
        want[k] = "\x01" + v;
        break;
      }
      case 2:
        table.erase(k);
        want.erase(k);
        break;
      case 3:
        break;
    }
    // The key just touched, then another: the memo's hit and its miss.
    std::string other = key();
    for (const std::string& probe : {k, other}) {
      auto it = want.find(probe);
      ASSERT_EQ(value_of(table.find(probe)), it == want.end() ? "<none>" : it->second) << "step " << i << " " << probe;
    }
  }
  ASSERT_EQ(table.size(), want.size());
  auto it = want.begin();
  for (const auto& e : table) {
    ASSERT_EQ(e.key(), it->first);
    ASSERT_EQ(e.packed(), it->second);
    ++it;
  }
}

TEST(KvTable, AMovedTableForgetsWhatItLastFound) {
  KvTable a;
  a.put("k", "one", {});
  ASSERT_NE(a.find("k"), nullptr);
  KvTable b(std::move(a));
  EXPECT_EQ(a.find("k"), nullptr);
  EXPECT_EQ(value_of(b.find("k")), "one");
  a.put("j", "two", {});
  a = std::move(b);
  EXPECT_EQ(b.find("k"), nullptr);
  EXPECT_EQ(value_of(a.find("k")), "one");
  EXPECT_EQ(a.find("j"), nullptr);
}

}  // namespace
}  // namespace uvsched
