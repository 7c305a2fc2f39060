#include "handlers/ml/speed_history.h"

#include <algorithm>
#include <set>

namespace uvsched {

std::string SpeedHistory::kind_of(const TrainRequest& r) {
  // Newline-separated: none of the parts is a multi-line string in KubeML's requests,
  // and a part that were would only merge two kinds, never break one.
  return r.function_name + '\n' + r.model_type + '\n' + r.dataset + '\n' + std::to_string(r.batch_size);
}

void SpeedHistory::add(const std::string& kind, EpochPoint point) {
  if (point.parallelism < 1 || !(point.seconds > 0)) return;  // what SpeedModel::fit would ignore
  auto it = kinds_.find(kind);
  if (it == kinds_.end()) {
    if (kinds_.size() >= kKinds) {
      auto oldest = std::min_element(kinds_.begin(), kinds_.end(), [](const auto& x, const auto& y) {
        return x.second.last_added < y.second.last_added;
      });
      kinds_.erase(oldest);
    }
    it = kinds_.emplace(kind, Kind{}).first;
  }
  Kind& k = it->second;
  k.points.push_back(point);
  trim_points(k.points, kPointsPerKind);
  k.version += 1;
  k.last_added = ++adds_;
}

uint64_t SpeedHistory::version(const std::string& kind) const {
  auto it = kinds_.find(kind);
  return it == kinds_.end() ? 0 : it->second.version;
}

std::vector<EpochPoint> SpeedHistory::points_for(const std::string& kind, const std::deque<EpochPoint>& own) const {
  std::vector<EpochPoint> out(own.begin(), own.end());
  auto it = kinds_.find(kind);
  if (it == kinds_.end()) return out;
  std::set<int> ran;
  for (const auto& e : own) ran.insert(e.parallelism);
  for (const auto& e : it->second.points) {
    if (!ran.count(e.parallelism)) out.push_back(e);
  }
  return out;
}

}  // namespace uvsched
