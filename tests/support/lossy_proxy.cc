#include "tests/support/lossy_proxy.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

namespace uvsched::test {
namespace {

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  return a;
}

bool send_all(int fd, const char* data, size_t len) {
  while (len > 0) {
    ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

LossyProxy::LossyProxy(uint16_t backend_port) : backend_port_(backend_port) {
  listener_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = loopback(0);
  socklen_t len = sizeof a;
  if (bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(listener_, 64) != 0 ||
      getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return;  // port() stays 0: the test's connections fail and say so
  }
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { run(); });
}

LossyProxy::~LossyProxy() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  ::close(listener_);
}

void LossyProxy::lose_answer_to(std::string marker) {
  std::lock_guard<std::mutex> lock(mu_);
  marker_ = std::move(marker);
}

void LossyProxy::run() {
  struct Pair {
    int client = -1;
    int backend = -1;
    bool lose = false;  // the backend's next bytes are dropped, and the pair closed
    std::string seen;   // the client's latest bytes, where a marker may span reads
  };
  std::vector<Pair> pairs;
  auto close_pair = [](Pair& p) {
    ::close(p.client);
    ::close(p.backend);
    p.client = p.backend = -1;
  };
  while (!stop_) {
    std::vector<pollfd> fds{{listener_, POLLIN, 0}};
    for (const Pair& p : pairs) {
      fds.push_back({p.client, POLLIN, 0});
      fds.push_back({p.backend, POLLIN, 0});
    }
    if (poll(fds.data(), fds.size(), 20) <= 0) continue;
    if (fds[0].revents & POLLIN) {
      int c = accept(listener_, nullptr, nullptr);
      int b = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a = loopback(backend_port_);
      if (c >= 0 && connect(b, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        pairs.push_back({c, b, false, {}});
      } else {
        if (c >= 0) ::close(c);
        ::close(b);
      }
    }
    for (size_t i = 0; i + 1 < fds.size(); i += 2) {
      Pair& p = pairs[i / 2];
      char buf[64 * 1024];
      if (fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)) {  // client -> backend
        ssize_t n = recv(p.client, buf, sizeof buf, 0);
        if (n <= 0 || !send_all(p.backend, buf, static_cast<size_t>(n))) {
          close_pair(p);
          continue;
        }
        p.seen.append(buf, static_cast<size_t>(n));
        std::lock_guard<std::mutex> lock(mu_);
        if (!marker_.empty() && p.seen.find(marker_) != std::string::npos) {
          p.lose = true;
          marker_.clear();
        }
        if (p.seen.size() > 4096) p.seen.erase(0, p.seen.size() - 4096);
      }
      if (p.backend >= 0 && (fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR))) {  // backend -> client
        ssize_t n = recv(p.backend, buf, sizeof buf, 0);
        if (n > 0 && p.lose) ++answers_lost_;
        if (n <= 0 || p.lose || !send_all(p.client, buf, static_cast<size_t>(n))) close_pair(p);
      }
    }
    std::erase_if(pairs, [](const Pair& p) { return p.client < 0; });
  }
  for (Pair& p : pairs) close_pair(p);
}

}  // namespace uvsched::test
