// Runs tools/kubeml_emulator (KubeML's PS and train jobs as they behave) as a
// child on free loopback ports for one test: it reads both ports from the
// emulator's "listening" line, asks it for its counts, and stops it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace uvsched::test {

using namespace std::chrono_literals;

class KubemlEmulator {
 public:
  KubemlEmulator() = default;
  ~KubemlEmulator();
  KubemlEmulator(const KubemlEmulator&) = delete;

  // Spawns with these flags (besides its own ports) and waits for it to listen.
  bool start(const std::vector<std::string>& args, std::chrono::milliseconds deadline = 10s);
  void stop();
  std::string ps_url() const { return "http://127.0.0.1:" + std::to_string(ps_port_); }
  std::string metrics_url() const { return "http://127.0.0.1:" + std::to_string(metrics_port_) + "/metrics"; }
  uint16_t ps_port() const { return ps_port_; }
  // GET /emulator/stats as name -> number; empty when it does not answer.
  std::map<std::string, double> stats() const;
  // Waits until stats()[name] >= value.
  bool wait_stat(const std::string& name, double value, std::chrono::milliseconds deadline);
  // Waits until `done` holds for stats().
  bool wait_stats(const std::function<bool(std::map<std::string, double>&)>& done,
                  std::chrono::milliseconds deadline);
  // Empties the PS's index, as a PS restart does.
  bool forget();
  std::string log() const;

 private:
  void drain();

  pid_t pid_ = -1;
  int stderr_fd_ = -1;
  uint16_t ps_port_ = 0;
  uint16_t metrics_port_ = 0;
  std::thread reader_;
  mutable std::mutex mu_;
  std::string log_;
};

// The counts that mean a real KubeML job suffered: second /starts, updates no
// job asked for, updates before the job ran, waits past the limit.
std::string violations_of(const std::map<std::string, double>& stats);

}  // namespace uvsched::test
