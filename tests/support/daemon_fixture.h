// A test fixture that runs the real daemon for one test and stops it with
// SIGTERM afterwards, expecting a clean exit.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"

namespace uvsched::test {

class DaemonFixture : public ::testing::Test {
 protected:
  void start(std::vector<std::string> args = {}) {
    daemon_ = std::make_unique<DaemonProcess>(std::move(args));
    ASSERT_TRUE(daemon_->start()) << daemon_->log();
  }
  void TearDown() override {
    if (daemon_ && daemon_->running()) {
      EXPECT_EQ(daemon_->stop(SIGTERM), 0) << daemon_->log();
    }
  }
  uint16_t port() const { return daemon_->port(); }

  std::unique_ptr<DaemonProcess> daemon_;
};

}  // namespace uvsched::test
