// A real etcd (Debian's etcd-server) for tests: free loopback ports, a temp
// data dir, started and stopped by the test, waited for with a deadline.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "tests/support/store_fixture.h"

namespace uvsched::test {

using namespace std::chrono_literals;

uint16_t free_loopback_port();

class EtcdProcess {
 public:
  EtcdProcess();
  ~EtcdProcess();
  EtcdProcess(const EtcdProcess&) = delete;

  // Serve clients over TLS with this certificate (call before start()).
  void use_tls(std::string cert_file, std::string key_file) {
    tls_cert_ = std::move(cert_file);
    tls_key_ = std::move(key_file);
  }
  // False when etcd is not installed or did not become healthy in time.
  bool start(std::chrono::milliseconds deadline = 30s);
  // SIGTERM (or `sig`), then wait for it to exit.
  void stop(int sig = 15);
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }  // to freeze it (SIGSTOP) in a drill
  std::string url() const {
    return (tls_cert_.empty() ? "http://" : "https://") + std::string("127.0.0.1:") + std::to_string(client_port_);
  }
  uint16_t client_port() const { return client_port_; }

 private:
  bool launch(std::chrono::milliseconds deadline);  // on the ports already chosen
  TempDir dir_;
  uint16_t client_port_ = 0;
  uint16_t peer_port_ = 0;
  uint16_t health_port_ = 0;  // plain-HTTP /health, so readiness needs no TLS
  std::string tls_cert_, tls_key_;
  pid_t pid_ = -1;
};

bool etcd_installed();

}  // namespace uvsched::test
