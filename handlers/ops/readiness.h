// /readyz asks each registered probe; the first failing one names the reason.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace uvsched {

class Readiness {
 public:
  // A probe returns nullopt when ready, or why it is not.
  using Probe = std::function<std::optional<std::string>()>;
  void add(std::string name, Probe probe) { probes_.emplace_back(std::move(name), std::move(probe)); }

  // nullopt when every probe passes; otherwise "name: reason" of the first failure.
  std::optional<std::string> check() const {
    for (const auto& [name, probe] : probes_) {
      if (auto why = probe()) return name + ": " + *why;
    }
    return std::nullopt;
  }

 private:
  std::vector<std::pair<std::string, Probe>> probes_;
};

}  // namespace uvsched
