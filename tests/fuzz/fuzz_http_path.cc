// The whole request path on arbitrary bytes: the input is written to a real
// daemon (router, pod registry, ML scheduler, agents, auth-free) over one
// loopback connection, which is then half-closed; the loop runs until the
// daemon closes it. Whatever the bytes, the daemon must not crash, and all
// it sends back must be HTTP/1.1 responses. Its store is an embedded one in
// a RAM-backed directory, so state built by one input meets the next.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "app/daemon.h"
#include "reactor/log.h"

namespace {

struct Harness {
  uv_loop_t loop;
  uvsched::Daemon* daemon = nullptr;
  uint16_t port = 0;

  Harness() {
    signal(SIGPIPE, SIG_IGN);
    uvsched::log_configure(uvsched::LogLevel::kOff, uvsched::LogFormat::kText);
    char dir[] = "/dev/shm/uvsched-fuzz-XXXXXX";
    char fallback[] = "/tmp/uvsched-fuzz-XXXXXX";
    const char* made = mkdtemp(dir);
    if (!made) made = mkdtemp(fallback);
    if (!made) abort();
    static std::string store_dir = made;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(store_dir, ec);  // RAM is not for leftovers
    });
    uv_loop_init(&loop);
    uvsched::Config config;
    config.listen_port = 0;
    config.store = std::string("embedded:") + made;
    config.ps_url = "http://127.0.0.1:9";  // discard port: deliveries fail into retries
    config.router_url = "http://127.0.0.1:9";
    config.metrics_poll_interval_ms = 0;
    config.limits.request_timeout_ms = 2'000;
    daemon = new uvsched::Daemon(&loop, config);  // lives for the process, like the daemon
    if (daemon->start() != 0) abort();
    port = daemon->port();
  }

  // One connection: write, half-close, read until the daemon closes (or 3 s).
  std::string exchange(const uint8_t* data, size_t size) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fcntl(fd, F_SETFL, O_NONBLOCK);
    // Non-blocking: libFuzzer's SIGALRM would interrupt a blocking connect.
    // The kernel completes a loopback handshake into the listen backlog.
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
      fprintf(stderr, "connect: %s; the daemon holds %zu connections\n", strerror(errno), daemon->connection_count());
      abort();
    }
    pollfd writable{fd, POLLOUT, 0};
    while (poll(&writable, 1, 5'000) < 0 && errno == EINTR) {
    }
    std::string out;
    size_t sent = 0;
    bool half_closed = false;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (std::chrono::steady_clock::now() < until) {
      uv_run(&loop, UV_RUN_NOWAIT);
      if (sent < size) {
        ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
        if (n > 0) sent += static_cast<size_t>(n);
        else if (errno != EAGAIN) break;
      } else if (!half_closed) {
        shutdown(fd, SHUT_WR);
        half_closed = true;
      }
      char buf[16 * 1024];
      ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n > 0) out.append(buf, static_cast<size_t>(n));
      else if (n == 0 || errno != EAGAIN) break;  // the daemon closed the connection
    }
    close(fd);
    uv_run(&loop, UV_RUN_NOWAIT);
    return out;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Harness harness;
  std::string reply = harness.exchange(data, size);
  // Every byte the daemon sends is part of an HTTP/1.1 response.
  if (!reply.empty() && reply.compare(0, 9, "HTTP/1.1 ") != 0) __builtin_trap();
  return 0;
}
