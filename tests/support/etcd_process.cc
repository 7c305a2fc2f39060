#include "tests/support/etcd_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "tests/support/raw_http.h"

namespace uvsched::test {

// A port below the kernel's ephemeral range (32768 and up here), which no
// outgoing connection can be handed: tests run in parallel, and a client's
// local port landing on a port etcd is about to listen on made etcd exit.
uint16_t free_loopback_port() {
  static std::minstd_rand pick(static_cast<unsigned>(getpid()) * 7919u + static_cast<unsigned>(time(nullptr)));
  for (int attempt = 0; attempt < 1000; ++attempt) {
    auto port = static_cast<uint16_t>(20000 + pick() % 12000);
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    if (free) return port;
  }
  return 0;
}

namespace {

// etcd's own output, even at --log-level error, would drown a test's.
pid_t spawn_silenced(std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

bool etcd_installed() { return access("/usr/bin/etcd", X_OK) == 0; }

EtcdProcess::EtcdProcess() = default;

EtcdProcess::~EtcdProcess() { stop(SIGKILL); }

bool EtcdProcess::start(std::chrono::milliseconds deadline) {
  if (!etcd_installed()) return false;
  if (client_port_ != 0) return launch(deadline);  // a restart keeps its address
  // A port taken between our check and etcd's bind: etcd exits at once, and
  // a fresh set of ports is tried.
  for (int attempt = 0; attempt < 3; ++attempt) {
    client_port_ = free_loopback_port();
    peer_port_ = free_loopback_port();
    health_port_ = free_loopback_port();
    if (launch(deadline)) return true;
    if (pid_ > 0) return false;  // running but never healthy: not a port clash
    std::filesystem::remove_all(dir_.path() + "/etcd");
  }
  return false;
}

bool EtcdProcess::launch(std::chrono::milliseconds deadline) {
  std::string client = url();
  std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
  std::vector<std::string> args = {"/usr/bin/etcd",
                                   "--name",
                                   "uvsched-test",
                                   "--data-dir",
                                   dir_.path() + "/etcd",
                                   "--listen-client-urls",
                                   client,
                                   "--advertise-client-urls",
                                   client,
                                   "--listen-peer-urls",
                                   peer,
                                   "--initial-advertise-peer-urls",
                                   peer,
                                   "--initial-cluster",
                                   "uvsched-test=" + peer,
                                   "--listen-metrics-urls",
                                   "http://127.0.0.1:" + std::to_string(health_port_),
                                   "--log-level",
                                   "error"};
  if (!tls_cert_.empty()) {
    for (const std::string& a : {std::string("--cert-file"), tls_cert_, std::string("--key-file"), tls_key_})
      args.push_back(a);
  }
  pid_ = spawn_silenced(args);
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    auto r = http_request(health_port_, "GET", "/health");
    if (r && r->status == 200 && r->body.find("true") != std::string::npos) return true;
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(20ms);  // harness polling for a child's readiness
  }
  return false;
}

void EtcdProcess::stop(int sig) {
  if (pid_ <= 0) return;
  kill(pid_, sig);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

EtcdCluster::EtcdCluster(int members) : members_(static_cast<size_t>(members)) {}

EtcdCluster::~EtcdCluster() {
  for (int i = 0; i < size(); ++i) stop_member(i, SIGKILL);
}

std::string EtcdCluster::urls() const {
  std::string out;
  for (int i = 0; i < size(); ++i) out += (i ? "," : "") + url(i);
  return out;
}

void EtcdCluster::spawn(int i, bool fresh) {
  std::string cluster;
  for (int j = 0; j < size(); ++j) {
    cluster +=
        (j ? "," : "") + std::string("m") + std::to_string(j) + "=http://127.0.0.1:" + std::to_string(members_[j].peer);
  }
  Member& m = members_[i];
  std::string peer = "http://127.0.0.1:" + std::to_string(m.peer);
  std::vector<std::string> args = {"/usr/bin/etcd",
                                   "--name",
                                   "m" + std::to_string(i),
                                   "--data-dir",
                                   dir_.path() + "/m" + std::to_string(i),
                                   "--listen-client-urls",
                                   url(i),
                                   "--advertise-client-urls",
                                   url(i),
                                   "--listen-peer-urls",
                                   peer,
                                   "--initial-advertise-peer-urls",
                                   peer,
                                   "--initial-cluster",
                                   cluster,
                                   "--initial-cluster-state",
                                   fresh ? "new" : "existing",
                                   "--initial-cluster-token",
                                   "uvsched-test-cluster",
                                   "--listen-metrics-urls",
                                   "http://127.0.0.1:" + std::to_string(m.health),
                                   "--log-level",
                                   "error"};
  m.pid = spawn_silenced(args);
}

bool EtcdCluster::healthy(int i) const {
  auto r = http_request(members_[i].health, "GET", "/health");
  return r && r->status == 200 && r->body.find("true") != std::string::npos;
}

bool EtcdCluster::start(std::chrono::milliseconds deadline) {
  if (!etcd_installed()) return false;
  for (auto& m : members_) {
    m.client = free_loopback_port();
    m.peer = free_loopback_port();
    m.health = free_loopback_port();
  }
  // All at once: each waits for the others to form a quorum.
  for (int i = 0; i < size(); ++i) spawn(i, true);
  auto until = std::chrono::steady_clock::now() + deadline;
  for (int i = 0; i < size(); ++i) {
    while (!healthy(i)) {
      int status;
      if (waitpid(members_[i].pid, &status, WNOHANG) == members_[i].pid) {
        members_[i].pid = -1;
        return false;
      }
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(20ms);  // harness polling for a child's readiness
    }
  }
  return true;
}

void EtcdCluster::stop_member(int i, int sig) {
  Member& m = members_[i];
  if (m.pid <= 0) return;
  kill(m.pid, sig);
  waitpid(m.pid, nullptr, 0);
  m.pid = -1;
}

bool EtcdCluster::restart_member(int i, std::chrono::milliseconds deadline) {
  stop_member(i);
  spawn(i, false);
  auto until = std::chrono::steady_clock::now() + deadline;
  while (!healthy(i)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

}  // namespace uvsched::test
