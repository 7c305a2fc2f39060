// The pods of followed namespaces as budgets read them (NamespacePods):
// one read, then the watch; a read answered after the watch already told of
// newer changes (etcd answers a range and a watch on different streams)
// neither brings a deleted pod back nor an old version of a changed one; a
// lost watch reads everything again.
#include "handlers/pods/namespace_pods.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "reactor/log.h"
#include "reactor/manual_clock.h"
#include "tests/support/fake_store.h"
#include "tests/support/forwarding_store.h"

namespace uvsched {
namespace {

using test::FakeStore;

// A FakeStore whose range answers can be held back, to come after watch deliveries.
class HeldReads final : public test::ForwardingStore {
 public:
  explicit HeldReads(FakeStore& inner) : ForwardingStore(inner) {}
  void get(std::string key, RangeOptions options, RangeCallback cb) override {
    if (!hold_) return inner_.get(std::move(key), options, std::move(cb));
    inner_.get(std::move(key), options, [this, cb = std::move(cb)](RangeResult&& r) mutable {
      held_.push_back([cb = std::move(cb), r = std::move(r)]() mutable { cb(std::move(r)); });
    });
  }
  WatchId watch(std::string prefix, int64_t start, WatchCallback cb, bool deleted_values) override {
    ++watches_;
    return inner_.watch(std::move(prefix), start, std::move(cb), deleted_values);
  }
  using Store::watch;

  void hold(bool on) { hold_ = on; }
  void release() {
    auto held = std::move(held_);
    held_.clear();
    for (auto& fn : held) fn();
  }
  int watches() const { return watches_; }

 private:
  bool hold_ = false;
  std::deque<std::function<void()>> held_;
  int watches_ = 0;
};

std::string labelled_pod(const std::string& name, const std::string& app) {
  return R"({"metadata":{"name":")" + name + R"(","labels":{"app":")" + app + R"("}},"status":{"phase":"Running"}})";
}

class NamespacePodsTest : public ::testing::Test {
 protected:
  void SetUp() override { log_configure(LogLevel::kOff, LogFormat::kText); }
  void put(const std::string& ns, const std::string& name, const std::string& app) {
    fake_.put("/registry/pods/" + ns + "/" + name, labelled_pod(name, app), 0, [](WriteResult&&) {});
    fake_.run();
  }
  void del(const std::string& ns, const std::string& name) {
    fake_.del("/registry/pods/" + ns + "/" + name, false, [](WriteResult&&) {});
    fake_.run();
  }
  // "name=app,..." of what is known of `ns` (pods not gone), or "<unread>".
  std::string known(const std::string& ns) const {
    const auto* pods = pods_.pods(ns);
    if (!pods) return "<unread>";
    std::string out;
    for (const auto& [name, p] : *pods) {
      if (p.gone) continue;
      auto app = p.view.labels.find("app");
      out += (out.empty() ? "" : ",") + name + "=" + (app == p.view.labels.end() ? "" : app->second);
    }
    return out;
  }

  FakeStore fake_;
  HeldReads store_{fake_};
  ManualClock clock_;
  std::vector<std::string> changed_;
  NamespacePods pods_{store_, clock_, [this](const std::string& ns) { changed_.push_back(ns); }};
};

TEST_F(NamespacePodsTest, KeepsAFollowedNamespaceFromOneReadAndTheWatch) {
  put("default", "a", "web");
  put("other", "x", "web");
  pods_.follow("default");
  EXPECT_EQ(known("default"), "<unread>");
  fake_.run();
  EXPECT_EQ(known("default"), "a=web");
  EXPECT_EQ(changed_, std::vector<std::string>{"default"});
  put("default", "b", "db");
  put("default", "a", "api");
  put("other", "y", "web");  // not followed: not kept, not told
  del("default", "b");
  EXPECT_EQ(known("default"), "a=api");
  EXPECT_EQ(known("other"), "<unread>");
  EXPECT_EQ(changed_.size(), 4u);
  pods_.unfollow("default");
  EXPECT_EQ(known("default"), "<unread>");
  put("default", "c", "web");
  EXPECT_EQ(changed_.size(), 4u) << "nothing is followed, nothing watched";
}

TEST_F(NamespacePodsTest, AReadAnsweredAfterNewerChangesDoesNotUndoThem) {
  put("default", "a", "web");
  put("default", "b", "web");
  store_.hold(true);
  pods_.follow("default");
  fake_.run();  // the read is answered (a, b as they were) but held back
  del("default", "a");
  put("default", "b", "api");
  put("default", "c", "new");
  store_.hold(false);
  store_.release();
  EXPECT_EQ(known("default"), "b=api,c=new") << "a stays deleted; b keeps its newer version";
  put("default", "a", "back");  // a later create of the same name is not mistaken for the old one
  EXPECT_EQ(known("default"), "a=back,b=api,c=new");
}

TEST_F(NamespacePodsTest, ALostWatchReadsEverythingAgain) {
  put("default", "a", "web");
  pods_.follow("default");
  fake_.run();
  ASSERT_EQ(known("default"), "a=web");
  // The watch breaks: a second later it watches and reads again, finding
  // what changed meanwhile (unseen: no watch).
  int before = store_.watches();
  fake_.end_watches(StoreStatus::unavailable("etcd unreachable"));
  fake_.run();
  del("default", "a");
  put("default", "b", "web");
  EXPECT_EQ(known("default"), "a=web");
  clock_.advance(1000);
  fake_.run();
  EXPECT_EQ(store_.watches(), before + 1);
  EXPECT_EQ(known("default"), "b=web");
}

}  // namespace
}  // namespace uvsched
