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
                                   "--name", "uvsched-test",
                                   "--data-dir", dir_.path() + "/etcd",
                                   "--listen-client-urls", client,
                                   "--advertise-client-urls", client,
                                   "--listen-peer-urls", peer,
                                   "--initial-advertise-peer-urls", peer,
                                   "--initial-cluster", "uvsched-test=" + peer,
                                   "--listen-metrics-urls", "http://127.0.0.1:" + std::to_string(health_port_),
                                   "--log-level", "error"};
  if (!tls_cert_.empty()) {
    for (const std::string& a : {std::string("--cert-file"), tls_cert_, std::string("--key-file"), tls_key_})
      args.push_back(a);
  }
  pid_ = fork();
  if (pid_ == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
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

}  // namespace uvsched::test
