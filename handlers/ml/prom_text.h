// Reads the samples of a Prometheus text exposition (the PS's /metrics).
// Comments, blank lines and lines it cannot read are skipped.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace uvsched {

struct PromSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;

  const std::string* label(std::string_view key) const {
    for (const auto& [k, v] : labels) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

std::vector<PromSample> parse_prometheus_text(std::string_view text);

}  // namespace uvsched
