#include "tests/support/kubeml_emulator_process.h"

#include <signal.h>
#include <simdjson.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "tests/support/daemon_process.h"
#include "tests/support/raw_http.h"

namespace uvsched::test {

KubemlEmulator::~KubemlEmulator() { stop(); }

bool KubemlEmulator::start(const std::vector<std::string>& extra, std::chrono::milliseconds deadline) {
  const char* bin = std::getenv("UVSCHED_KUBEML_EMULATOR");
  std::vector<std::string> args = {bin ? bin : "kubeml_emulator", "--listen", "127.0.0.1:0", "--metrics-listen",
                                   "127.0.0.1:0"};
  args.insert(args.end(), extra.begin(), extra.end());
  pid_ = spawn_capturing_stderr(std::move(args), &stderr_fd_);
  if (pid_ < 0) return false;
  reader_ = std::thread([this] { drain(); });
  const std::string marker = "kubeml_emulator listening ps=";
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      size_t at = log_.find(marker);
      size_t m = log_.find(" metrics=", at == std::string::npos ? 0 : at);
      if (at != std::string::npos && m != std::string::npos && log_.find('\n', m) != std::string::npos) {
        ps_port_ = static_cast<uint16_t>(std::atoi(log_.c_str() + at + marker.size()));
        metrics_port_ = static_cast<uint16_t>(std::atoi(log_.c_str() + m + 9));
        return ps_port_ != 0 && metrics_port_ != 0;
      }
    }
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

void KubemlEmulator::stop() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  if (reader_.joinable()) reader_.join();
  if (stderr_fd_ >= 0) ::close(stderr_fd_);
  stderr_fd_ = -1;
}

void KubemlEmulator::drain() {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(stderr_fd_, buf, sizeof buf);
    if (n <= 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    log_.append(buf, static_cast<size_t>(n));
  }
}

std::string KubemlEmulator::log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

std::map<std::string, double> KubemlEmulator::stats() const {
  std::map<std::string, double> out;
  auto r = http_request(ps_port_, "GET", "/emulator/stats");
  if (!r || r->status != 200) return out;
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(r->body).get(obj)) return out;
  for (auto [key, value] : obj) {
    double v = 0;
    if (value.is_number() && !value.get(v)) out[std::string(key)] = v;
  }
  return out;
}

bool KubemlEmulator::wait_stat(const std::string& name, double value, std::chrono::milliseconds deadline) {
  return wait_stats([&](std::map<std::string, double>& s) { return s.count(name) && s[name] >= value; }, deadline);
}

bool KubemlEmulator::wait_stats(const std::function<bool(std::map<std::string, double>&)>& done,
                                std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    auto s = stats();
    if (done(s)) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

bool KubemlEmulator::forget() {
  auto r = http_request(ps_port_, "POST", "/emulator/forget");
  return r && r->status == 200;
}

std::string violations_of(const std::map<std::string, double>& stats) {
  std::string out;
  for (const char* k : {"duplicate_starts", "unsolicited_updates", "updates_before_running", "late_waits"}) {
    auto it = stats.find(k);
    if (it == stats.end()) {
      out += std::string(k) + "=? ";
    } else if (it->second != 0) {
      out += std::string(k) + "=" + std::to_string(static_cast<long>(it->second)) + " ";
    }
  }
  return out;
}

}  // namespace uvsched::test
