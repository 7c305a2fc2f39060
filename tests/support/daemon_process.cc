#include "tests/support/daemon_process.h"

#include "tests/support/raw_http.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

namespace uvsched::test {
namespace {

std::vector<char*> argv_of(std::vector<std::string>& args) {
  std::vector<char*> out;
  for (auto& a : args) out.push_back(a.data());
  out.push_back(nullptr);
  return out;
}

// waitpid with a deadline, polling at 10 ms: a test harness, not the daemon.
int wait_exit(pid_t pid, std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return -1;
    }
    if (std::chrono::steady_clock::now() > until) return -1;
    std::this_thread::sleep_for(10ms);
  }
}

}  // namespace

pid_t spawn_capturing_stderr(std::vector<std::string> args, int* stderr_fd, bool stdout_too, const rlimit* open_files) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    if (stdout_too) dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    if (open_files && setrlimit(RLIMIT_NOFILE, open_files) != 0) _exit(126);
    auto argv = argv_of(args);
    execv(argv[0], argv.data());
    _exit(127);
  }
  ::close(fds[1]);
  *stderr_fd = fds[0];
  return pid;
}

std::string daemon_binary() {
  const char* bin = std::getenv("UVSCHED_BIN");
  return bin ? bin : "build/uvsched";
}

DaemonProcess::DaemonProcess(std::vector<std::string> extra_args) : args_(std::move(extra_args)) {}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) stop(SIGKILL, 10s);
  if (reader_.joinable()) reader_.join();
  if (stderr_fd_ >= 0) ::close(stderr_fd_);
}

bool DaemonProcess::start(std::chrono::milliseconds deadline) {
  std::vector<std::string> args = {daemon_binary(), "--listen", "127.0.0.1:0", "--log-level", "info"};
  bool has_store = false;
  for (const auto& a : args_) has_store = has_store || a.rfind("--store", 0) == 0;
  if (!has_store) {
    args.push_back("--store");
    args.push_back("embedded:" + data_.path() + "/data");
  }
  args.insert(args.end(), args_.begin(), args_.end());
  size_t from = 0;  // a start after a stop: the port is in this run's lines, not the last's
  {
    std::lock_guard<std::mutex> lock(mu_);
    from = log_.size();
  }
  pid_ = spawn_capturing_stderr(std::move(args), &stderr_fd_, false, open_files_ ? &*open_files_ : nullptr);
  if (pid_ < 0) return false;
  reader_ = std::thread([this] { drain(); });

  const std::string marker = "event=listening addr=127.0.0.1:";
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      size_t at = log_.find(marker, from);
      if (at != std::string::npos) {
        port_ = static_cast<uint16_t>(std::atoi(log_.c_str() + at + marker.size()));
        return port_ != 0;
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

void DaemonProcess::drain() {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(stderr_fd_, buf, sizeof buf);
    if (n <= 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    log_.append(buf, static_cast<size_t>(n));
  }
}

int DaemonProcess::stop(int sig, std::chrono::milliseconds deadline) {
  if (pid_ <= 0) return -1;
  kill(pid_, sig);
  int code = wait_exit(pid_, deadline);
  if (code == -1) {
    kill(pid_, SIGKILL);
    wait_exit(pid_, 10s);
  }
  pid_ = -1;
  if (reader_.joinable()) reader_.join();
  if (stderr_fd_ >= 0) ::close(stderr_fd_);
  stderr_fd_ = -1;
  return code;
}

bool DaemonProcess::wait_ready(std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    auto r = http_request(port_, "GET", "/readyz");
    if (r && r->status == 200) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

bool DaemonProcess::wait_for_log(const std::string& needle, std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    if (log().find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

std::string DaemonProcess::log() const {
  std::lock_guard<std::mutex> lock(mu_);
  return log_;
}

int run_binary(const std::vector<std::string>& extra, std::string* output) {
  TempDir data;
  std::vector<std::string> args = {daemon_binary(), "--store", "embedded:" + data.path() + "/data"};
  args.insert(args.end(), extra.begin(), extra.end());
  int fd = -1;
  pid_t pid = spawn_capturing_stderr(std::move(args), &fd, /*stdout_too=*/true);
  if (pid < 0) return -1;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) output->append(buf, static_cast<size_t>(n));
  ::close(fd);
  return wait_exit(pid, 20s);
}

long DaemonProcess::peak_rss_kib() const {
  if (pid_ <= 0) return 0;
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

int run_shell(const std::string& command, std::string* output) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace uvsched::test
