// Starts the real uvsched binary as a child on a free loopback port (it binds
// port 0 and the harness reads the port from its "listening" log line), keeps
// its stderr, and stops it with a signal, waiting with a deadline. Unless the
// arguments name a --store, it gets an embedded store in a temp directory.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/store_fixture.h"

namespace uvsched::test {

using namespace std::chrono_literals;

// The daemon binary: $UVSCHED_BIN, set by meson for each test.
std::string daemon_binary();

class DaemonProcess {
 public:
  explicit DaemonProcess(std::vector<std::string> extra_args = {});
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;

  // The next start() runs the daemon with this open-files limit.
  void limit_open_files(rlim_t soft, rlim_t hard) { open_files_ = rlimit{soft, hard}; }
  // Spawns and waits for the listening line. False if it exited or timed out.
  bool start(std::chrono::milliseconds deadline = 20s);
  uint16_t port() const { return port_; }
  const std::string& data_dir() const { return data_.path(); }
  pid_t pid() const { return pid_; }
  // Sends `sig` and waits for exit; the exit code, 128+signal, or -1 on time-out.
  int stop(int sig, std::chrono::milliseconds deadline = 20s);
  bool running() const { return pid_ > 0; }
  // The daemon's peak resident set (VmHWM) in KiB; 0 when it is not running.
  long peak_rss_kib() const;
  // Waits until /readyz answers 200 (the store is up, this daemon leads and
  // its scheduler follows the pods).
  bool wait_ready(std::chrono::milliseconds deadline = 10s);
  // Waits until the captured stderr holds `needle`.
  bool wait_for_log(const std::string& needle, std::chrono::milliseconds deadline = 10s);
  std::string log() const;

 private:
  void drain();

  std::vector<std::string> args_;
  std::optional<rlimit> open_files_;
  TempDir data_;  // the default store lives here, one per daemon
  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  uint16_t port_ = 0;
  std::thread reader_;
  mutable std::mutex mu_;
  std::string log_;
};

// Starts args[0] with args, its stderr into a pipe whose reading end is
// *stderr_fd; the child's pid, or -1. stdout_too: both into the one pipe;
// open_files: the child's RLIMIT_NOFILE.
pid_t spawn_capturing_stderr(std::vector<std::string> args, int* stderr_fd, bool stdout_too = false,
                             const rlimit* open_files = nullptr);

// Runs the binary to completion with args; returns exit code and stdout+stderr.
int run_binary(const std::vector<std::string>& args, std::string* output);

// Runs a shell command (kubectl, curl, python3) to completion; its exit code
// (-1 if it did not exit normally), stdout and stderr appended to *output.
int run_shell(const std::string& command, std::string* output);

}  // namespace uvsched::test
