// A real etcd (Debian's etcd-server) for tests: free loopback ports, a temp
// data dir, started and stopped by the test, waited for with a deadline.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

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

// A real etcd cluster of `members` on loopback (members m0, m1, ...), each on
// free ports with its own data dir; a member can be killed and restarted.
class EtcdCluster {
 public:
  explicit EtcdCluster(int members = 3);
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;

  // Starts every member and waits until each says it is healthy (has a leader).
  bool start(std::chrono::milliseconds deadline = 60s);
  void stop_member(int i, int sig = 9);
  bool restart_member(int i, std::chrono::milliseconds deadline = 30s);
  int size() const { return static_cast<int>(members_.size()); }
  pid_t pid(int i) const { return members_[i].pid; }
  uint16_t client_port(int i) const { return members_[i].client; }
  std::string url(int i) const { return "http://127.0.0.1:" + std::to_string(members_[i].client); }
  // Every member's client URL, comma separated, as --store etcd: takes them.
  std::string urls() const;

 private:
  struct Member {
    uint16_t client = 0, peer = 0, health = 0;
    pid_t pid = -1;
  };
  void spawn(int i, bool fresh);
  bool healthy(int i) const;
  TempDir dir_;
  std::vector<Member> members_;
};

bool etcd_installed();

}  // namespace uvsched::test
