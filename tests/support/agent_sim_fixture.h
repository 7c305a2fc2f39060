// A daemon and agent simulators (tools/agent_sim) started beside it, for
// the tests that drive the scheduler the way its users do: simulated agents
// that subscribe, offer and run what they are given, and kubectl or HTTP
// creating the pods.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_fixture.h"
#include "tests/support/daemon_process.h"
#include "tests/support/raw_http.h"

namespace uvsched::test {

using namespace std::chrono_literals;

inline std::string agent_sim_binary() {
  const char* bin = std::getenv("UVSCHED_AGENT_SIM");
  return bin ? bin : "agent_sim";
}

inline size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(needle, at)) != std::string::npos; at += needle.size()) ++n;
  return n;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

class AgentSimTest : public DaemonFixture {
 protected:
  std::string sim_command(const std::string& args) {
    return agent_sim_binary() + " --server http://127.0.0.1:" + std::to_string(port()) + " " + args;
  }
  // Starts the simulator in the background, its output in sim_log(); the
  // test's end stops it.
  // (A second one, say with other agents, logs beside the first.)
  void start_sim(const std::string& args) {
    std::string out;
    std::string log = log_path(sims_.size());
    ASSERT_EQ(run_shell("timeout 60 " + sim_command(args) + " >" + log + " 2>&1 & echo $!", &out), 0);
    pid_t pid = static_cast<pid_t>(std::atol(out.c_str()));
    ASSERT_GT(pid, 0) << out;
    sims_.push_back(pid);
  }
  std::string sim_log(size_t which = 0) { return read_file(log_path(which)); }
  // Stops simulator `which` and waits (up to 10 s) for it to be gone.
  bool stop_sim(size_t which) {
    ::kill(sims_[which], SIGTERM);
    auto until = std::chrono::steady_clock::now() + 10s;
    while (::kill(sims_[which], 0) == 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(10ms);
    return ::kill(sims_[which], 0) != 0;
  }
  void TearDown() override {
    for (pid_t pid : sims_) ::kill(pid, SIGTERM);
    DaemonFixture::TearDown();
  }
  void create(const std::string& name, const std::string& spec) {
    auto r = http_request(port(), "POST", "/api/v1/namespaces/default/pods",
                          R"({"metadata":{"name":")" + name + R"("},"spec":)" + spec + "}");
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  }
  // Waits for the pod's JSON to hold `text`.
  bool pod_shows(const std::string& name, const std::string& text, std::chrono::milliseconds deadline = 10s) {
    auto until = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < until) {
      auto r = http_request(port(), "GET", "/api/v1/namespaces/default/pods/" + name);
      if (r && r->body.find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  std::string pod(const std::string& name) {
    auto r = http_request(port(), "GET", "/api/v1/namespaces/default/pods/" + name);
    return r ? r->body : "";
  }
  bool agents_connected(double n, std::chrono::milliseconds deadline = 10s) {
    auto until = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < until) {
      if (metric_value(port(), "uvsched_agents_connected") == n) return true;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

 private:
  std::string log_path(size_t which) { return dir_.path() + "/sim" + std::to_string(which) + ".log"; }
  TempDir dir_;
  std::vector<pid_t> sims_;
};

}  // namespace uvsched::test
