// The etcd backend over https: a real etcd serving TLS with a test CA. With
// the CA (--etcd-ca) reads, writes and watches work; with a CA that did not
// sign etcd's certificate the store is unavailable and says why.
#include <gtest/gtest.h>

#include <optional>

#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "storage/store_factory.h"
#include "tests/support/etcd_process.h"
#include "tests/support/loop_runner.h"
#include "tests/support/test_certs.h"

namespace uvsched::test {
namespace {

class EtcdTls : public ::testing::Test {
 protected:
  void SetUp() override {
    log_configure(LogLevel::kOff, LogFormat::kText);
    ASSERT_TRUE(certs_.ok());
    etcd_.use_tls(certs_.server_cert(), certs_.server_key());
    ASSERT_TRUE(etcd_.start()) << "etcd with TLS did not start";
    ASSERT_EQ(etcd_.url().rfind("https://", 0), 0u);
    uv_loop_init(&loop_);
    clock_ = std::make_unique<LoopClock>(&loop_);
  }
  void TearDown() override {
    if (store_) {
      bool closed = false;
      store_->close([&] { closed = true; });
      EXPECT_TRUE(run_until(&loop_, [&] { return closed; }));
      store_.reset();
    }
    clock_.reset();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }
  WriteResult put(const std::string& key, const std::string& value) {
    std::optional<WriteResult> out;
    store_->put(key, value, 0, [&](WriteResult&& r) { out = std::move(r); });
    EXPECT_TRUE(run_until(
        &loop_, [&] { return out.has_value(); }, 10'000))
        << "a put hung";
    return out ? std::move(*out) : WriteResult{};
  }

  TestCerts certs_;
  EtcdProcess etcd_;
  uv_loop_t loop_;
  std::unique_ptr<LoopClock> clock_;
  std::unique_ptr<Store> store_;
};

TEST_F(EtcdTls, WithTheCaEverythingWorks) {
  std::string error;
  store_ = open_store(&loop_, *clock_, "etcd:" + etcd_.url(), {.etcd_ca = certs_.ca_file()}, &error);
  ASSERT_TRUE(store_) << error;
  auto first = put("/tls/a", "1");
  ASSERT_TRUE(first.status.ok()) << first.status.message;
  std::vector<std::string> seen;
  store_->watch("/tls/", 0, [&](const StoreStatus&, const std::vector<WatchEvent>& evs) {
    for (const auto& e : evs) seen.push_back(e.kv.key + "=" + e.kv.value);
  });
  ASSERT_TRUE(put("/tls/b", "2").status.ok());
  ASSERT_TRUE(run_until(
      &loop_, [&] { return !seen.empty(); }, 10'000));
  EXPECT_EQ(seen[0], "/tls/b=2");
  std::optional<RangeResult> got;
  store_->get("/tls/", RangeOptions{.prefix = true}, [&](RangeResult&& r) { got = std::move(r); });
  ASSERT_TRUE(run_until(&loop_, [&] { return got.has_value(); }));
  EXPECT_EQ(got->kvs.size(), 2u);
}

TEST_F(EtcdTls, AnUntrustedServerCertificateMakesTheStoreUnavailable) {
  std::string error;
  store_ = open_store(&loop_, *clock_, "etcd:" + etcd_.url(), {.etcd_ca = certs_.stranger_ca_file()}, &error);
  ASSERT_TRUE(store_) << error;
  auto r = put("/tls/x", "1");
  EXPECT_EQ(r.status.code, StoreCode::kUnavailable);
  ASSERT_TRUE(store_->unavailable_reason().has_value());
  EXPECT_NE(store_->unavailable_reason()->find("certificate"), std::string::npos) << *store_->unavailable_reason();
}

TEST(EtcdTlsConfig, AMissingCaFileIsAnErrorAtOpen) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  {
    LoopClock clock(&loop);
    std::string error;
    EXPECT_FALSE(open_store(&loop, clock, "etcd:https://127.0.0.1:1", {.etcd_ca = "/nonexistent-ca.pem"}, &error));
    EXPECT_NE(error.find("/nonexistent-ca.pem"), std::string::npos) << error;
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(uv_loop_close(&loop), 0);
}

}  // namespace
}  // namespace uvsched::test
