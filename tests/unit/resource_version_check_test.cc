// ResourceVersionCheck: a Kubernetes read from a revision the store has not
// reached is the API server's 504 once the store, asked, is still short of
// it; every other request goes on to the routes untouched. A fake store, a
// router standing for the registry's routes, no sockets.
#include "handlers/pods/resource_version_check.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "handlers/json_response.h"
#include "handlers/router.h"
#include "tests/support/fake_store.h"
#include "tests/support/forwarding_store.h"
#include "tests/support/recording_channel.h"

namespace uvsched {
namespace {

using test::status_of;

// The fake store, as a daemon that has not seen its latest writes sees it.
class LaggingView final : public test::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  int64_t revision() const override { return seen_ ? *seen_ : inner_.revision(); }
  void stop_seeing() { seen_ = inner_.revision(); }

 private:
  std::optional<int64_t> seen_;
};

class ResourceVersionCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* path : {"/api/v1/pods", "/apis/policy/v1/poddisruptionbudgets", "/v1/jobs"}) {
      router_.add("GET", path, [this](RequestContext& ctx) {
        handled_.push_back(ctx.request.target);
        ctx.reply(text_response(200, "listed"));
      });
    }
    check_.set_store(&view_);
    write();  // the store is at revision 1
  }
  void write() {
    store_.put("/registry/pods/default/p" + std::to_string(writes_++), "{}", 0, [](WriteResult&&) {});
    store_.run();
  }
  std::shared_ptr<detail::Exchange> get(const std::string& target) {
    HttpRequest req;
    req.method = "GET";
    req.target = target;
    auto ex = std::make_shared<detail::Exchange>();
    check_.handle(req, Responder(ex));
    return ex;
  }

  test::FakeStore store_;
  LaggingView view_{store_};
  Router router_;
  ResourceVersionCheck check_{router_};
  std::vector<std::string> handled_;
  int writes_ = 0;
};

TEST_F(ResourceVersionCheckTest, ReadsTheStoreHasReachedGoOnAtOnce) {
  const int64_t now = store_.revision();
  for (const std::string& target : std::vector<std::string>{
           "/api/v1/pods", "/api/v1/pods?resourceVersion=0", "/api/v1/pods?resourceVersion=" + std::to_string(now),
           "/api/v1/pods?resourceVersion=x", "/apis/policy/v1/poddisruptionbudgets?resourceVersion=1",
           "/v1/jobs?resourceVersion=999"}) {
    auto ex = get(target);
    EXPECT_EQ(status_of(ex->out), 200) << target;
  }
  EXPECT_EQ(handled_.size(), 6u);
  EXPECT_EQ(store_.queued(), 0u) << "no read of the store for them";
}

TEST_F(ResourceVersionCheckTest, AReadAheadOfTheStoreIsTooLarge) {
  const int64_t now = store_.revision();
  auto ex = get("/api/v1/pods?watch=1&resourceVersion=" + std::to_string(now + 5));
  EXPECT_EQ(ex->out, "") << "held for one read of the store";
  store_.run();
  EXPECT_EQ(status_of(ex->out), 504) << ex->out;
  EXPECT_NE(ex->out.find(R"("reason":"Timeout")"), std::string::npos) << ex->out;
  EXPECT_NE(ex->out.find(R"("causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}])"),
            std::string::npos)
      << ex->out;
  EXPECT_NE(ex->out.find("Timeout: Too large resource version: " + std::to_string(now + 5) +
                         ", current: " + std::to_string(now)),
            std::string::npos)
      << ex->out;
  EXPECT_NE(ex->out.find("Retry-After: 1"), std::string::npos) << ex->out;
  EXPECT_TRUE(handled_.empty());
}

// What this daemon knows of the store may lag the store (another daemon
// wrote): the read tells, and a request the store has reached goes on, whole.
TEST_F(ResourceVersionCheckTest, ARequestAheadOfWhatThisDaemonSawButNotOfTheStoreGoesOn) {
  view_.stop_seeing();
  write();  // another daemon's write
  const std::string target = "/api/v1/pods?resourceVersion=" + std::to_string(store_.revision());
  auto ex = get(target);
  EXPECT_EQ(ex->out, "") << "held for one read of the store";
  store_.run();
  EXPECT_EQ(status_of(ex->out), 200) << ex->out;
  EXPECT_EQ(handled_, std::vector<std::string>{target});
}

TEST_F(ResourceVersionCheckTest, AStoreThatCannotSayLeavesTheAnswerToTheRoutes) {
  store_.set_down("etcd unreachable");
  auto ex = get("/api/v1/pods?resourceVersion=" + std::to_string(store_.revision() + 1));
  store_.run();
  EXPECT_EQ(status_of(ex->out), 200) << "the route answers as it does with the store down";
  EXPECT_EQ(handled_.size(), 1u);
}

}  // namespace
}  // namespace uvsched
