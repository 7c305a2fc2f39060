// The embedded store on a small tmpfs that fills up, as an unlucky operator's
// disk does: writes are refused with a clear reason, nothing acknowledged is
// lost, reads go on, and writes work again once space is freed, without a
// restart. Needs root to mount the tmpfs (CI runs as root); skipped otherwise.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "tests/support/daemon_process.h"
#include "tests/support/raw_http.h"
#include "tests/support/store_fixture.h"

namespace uvsched::test {
namespace {

class FullDiskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "mounting a tmpfs needs root";
    if (::mount("tmpfs", mnt_.path().c_str(), "tmpfs", 0, "size=4m") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs here: " << strerror(errno);
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (daemon_ && daemon_->running()) {
      EXPECT_EQ(daemon_->stop(SIGTERM), 0) << daemon_->log();
    }
    daemon_.reset();
    if (mounted_) ::umount2(mnt_.path().c_str(), MNT_DETACH);
  }
  void start() {
    daemon_ = std::make_unique<DaemonProcess>(std::vector<std::string>{"--store", "embedded:" + mnt_.path() + "/data"});
    ASSERT_TRUE(daemon_->start()) << daemon_->log();
  }
  int create(const std::string& name, std::string* body = nullptr) {
    const std::string pad(1500, 'x');
    auto r = http_request(daemon_->port(), "POST", "/api/v1/namespaces/default/pods",
                          R"({"metadata":{"name":")" + name + R"(","annotations":{"pad":")" + pad +
                              R"("}},"spec":{"containers":[{"name":"c","image":"i"}]}})");
    if (body && r) *body = r->body;
    return r ? r->status : 0;
  }

  TempDir mnt_;
  bool mounted_ = false;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(FullDiskTest, AFullDiskRefusesWritesLosesNothingAndRecoversWhenFreed) {
  // Most of the filesystem taken by something else.
  std::string filler = mnt_.path() + "/filler";
  std::ofstream(filler) << std::string(3 * 1024 * 1024, 'f');
  start();
  std::set<std::string> acknowledged;
  std::string refusal;
  for (int i = 0; i < 2000 && refusal.empty(); ++i) {
    std::string name = "p-" + std::to_string(i), body;
    int status = create(name, &body);
    if (status == 201) {
      acknowledged.insert(name);
    } else if (status == 503) {
      refusal = body;
    } else if (status != 0) {
      ADD_FAILURE() << status << " " << body;
      break;
    }
  }
  ASSERT_FALSE(refusal.empty()) << "the disk never filled";
  EXPECT_NE(refusal.find("No space left on device"), std::string::npos) << refusal;
  ASSERT_TRUE(daemon_->wait_for_log("event=store_write_failed")) << daemon_->log();
  ASSERT_FALSE(acknowledged.empty());
  // Reads go on: every acknowledged pod is there.
  auto list = http_request(daemon_->port(), "GET", "/api/v1/pods");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->status, 200) << list->body.substr(0, 300);
  for (const auto& name : acknowledged)
    ASSERT_NE(list->body.find("\"name\":\"" + name + "\""), std::string::npos) << name;
  EXPECT_EQ(answered(http_request(daemon_->port(), "GET", "/healthz")).status, 200);
  // Space freed: writes work again, without a restart.
  ASSERT_EQ(::unlink(filler.c_str()), 0);
  ASSERT_TRUE(daemon_->wait_for_log("event=store_write_recovered", 10s)) << daemon_->log();
  int status = 0;
  auto until = std::chrono::steady_clock::now() + 10s;
  while ((status = create("after")) != 201 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(50ms);  // pacing the retries of a refused create, not waiting for an event
  }
  ASSERT_EQ(status, 201);
  acknowledged.insert("after");
  // And after a restart, everything acknowledged is still there.
  ASSERT_EQ(daemon_->stop(SIGTERM), 0) << daemon_->log();
  start();
  list = http_request(daemon_->port(), "GET", "/api/v1/pods");
  ASSERT_TRUE(list && list->status == 200);
  for (const auto& name : acknowledged)
    EXPECT_NE(list->body.find("\"name\":\"" + name + "\""), std::string::npos) << name;
}

}  // namespace
}  // namespace uvsched::test
