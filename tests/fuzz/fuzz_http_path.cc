// The whole request path on arbitrary bytes: the input is written to a real
// daemon (router, pod registry, ML scheduler, agents, auth-free) over one
// loopback connection, which is then half-closed; the loop runs until the
// daemon closes it. Whatever the bytes, the daemon must not crash, and all
// it sends back must be whole HTTP/1.1 responses one after another (the last
// may be cut short: a stream still open, a connection the output cap closed),
// none of them a 500 (a handler that threw, or never answered). Its store is
// an embedded one in a RAM-backed directory, so state built by one input
// meets the next.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
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
        if (n > 0)
          sent += static_cast<size_t>(n);
        else if (errno != EAGAIN)
          break;
      } else if (!half_closed) {
        shutdown(fd, SHUT_WR);
        half_closed = true;
      }
      char buf[16 * 1024];
      ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n > 0)
        out.append(buf, static_cast<size_t>(n));
      else if (n == 0 || errno != EAGAIN)
        break;  // the daemon closed the connection
    }
    close(fd);
    uv_run(&loop, UV_RUN_NOWAIT);
    return out;
  }
};

}  // namespace

// Walks the responses in `out`: false at the first byte that is not part of
// one. A response's body is its Content-Length or its chunks; a HEAD's
// answer has a Content-Length and no body, so a response may also follow
// right after a head. What is left at the end may be a response cut short.
bool well_formed(const std::string& out) {
  size_t at = 0;
  while (at < out.size()) {
    if (out.size() - at < 13)
      return out.compare(at, std::string::npos, "HTTP/1.1 ", 0, out.size() - at) == 0 ||
             out.compare(at, 9, "HTTP/1.1 ") == 0;
    if (out.compare(at, 9, "HTTP/1.1 ") != 0) return false;
    for (size_t i = 9; i < 12; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(out[at + i]))) return false;
    }
    if (out.compare(at + 9, 3, "500") == 0) return false;
    size_t head_end = out.find("\r\n\r\n", at);
    if (head_end == std::string::npos) return true;  // cut short in its head
    std::string head = out.substr(at, head_end - at);
    size_t body = head_end + 4;
    if (head.find("\r\nTransfer-Encoding: chunked") != std::string::npos) {
      size_t pos = body;
      for (;;) {
        size_t eol = out.find("\r\n", pos);
        if (eol == std::string::npos) return true;  // cut short
        size_t n = std::strtoul(out.substr(pos, eol - pos).c_str(), nullptr, 16);
        if (n == 0) {
          at = eol + 4;
          break;
        }
        pos = eol + 2 + n + 2;
        if (pos > out.size()) return true;  // cut short
      }
      continue;
    }
    size_t cl = head.find("\r\nContent-Length: ");
    size_t length = cl == std::string::npos ? 0 : std::strtoul(head.c_str() + cl + 18, nullptr, 10);
    if (body + length <= out.size() &&
        (body + length == out.size() || out.compare(body + length, 9, "HTTP/1.1 ") == 0)) {
      at = body + length;
    } else if (body == out.size() || out.compare(body, 9, "HTTP/1.1 ") == 0) {
      at = body;  // a HEAD's answer
    } else if (body + length > out.size()) {
      return true;  // cut short in its body
    } else {
      return false;
    }
  }
  return true;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Harness harness;
  std::string reply = harness.exchange(data, size);
  if (!well_formed(reply)) {
    fprintf(stderr, "not a sequence of HTTP/1.1 responses (or a 500):\n%.2000s\n", reply.c_str());
    __builtin_trap();
  }
  return 0;
}
