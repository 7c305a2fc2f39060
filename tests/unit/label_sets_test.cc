#include "policy/label_sets.h"

#include <gtest/gtest.h>

#include "policy/pod_task_registry.h"

namespace uvsched {
namespace {

TEST(LabelSets, EachDistinctSetIsKeptOnceWhileHeld) {
  LabelSets sets;
  EXPECT_EQ(sets.acquire({}), 0u);
  uint32_t web = sets.acquire({{"app", "web"}});
  EXPECT_EQ(sets.acquire({{"app", "web"}}), web);
  uint32_t db = sets.acquire({{"app", "db"}});
  EXPECT_NE(db, web);
  // Keys and values are told apart: "a"="bc" is not "ab"="c".
  EXPECT_NE(sets.acquire({{"a", "bc"}}), sets.acquire({{"ab", "c"}}));
  EXPECT_EQ(sets.size(), 4u);
  EXPECT_EQ(sets.get(web), (Labels{{"app", "web"}}));
  sets.release(web);
  EXPECT_EQ(sets.get(web), (Labels{{"app", "web"}})) << "held once more";
  sets.release(web);
  EXPECT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets.acquire({{"tier", "x"}}), web) << "its number is reused";
  sets.release(0);  // the empty set is never freed
  EXPECT_TRUE(sets.get(0).empty());
}

TEST(LabelSets, ATasksLabelsGoWithIt) {
  PodTaskRegistry tasks;
  PodTask t;
  t.agent = tasks.intern_agent("a");
  Labels web{{"app", "web"}};
  tasks.add("default/one", t, &web);
  tasks.add("default/two", t, &web);
  EXPECT_EQ(tasks.label_sets(), 1u);
  EXPECT_EQ(tasks.labels_of(*tasks.by_pod("default/two")), web);
  tasks.add("default/two", *tasks.by_pod("default/two"));  // replaced without labels: keeps its own
  EXPECT_EQ(tasks.labels_of(*tasks.by_pod("default/two")), web);
  Labels db{{"app", "db"}};
  tasks.add("default/two", t, &db);
  EXPECT_EQ(tasks.label_sets(), 2u);
  tasks.erase_pod("default/one");
  EXPECT_EQ(tasks.label_sets(), 1u);
  tasks.erase_pod("default/two");
  EXPECT_EQ(tasks.label_sets(), 0u);
}

}  // namespace
}  // namespace uvsched
