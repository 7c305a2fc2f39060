#include "handlers/ml/speed_history.h"

#include <algorithm>
#include <vector>

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
      auto oldest = std::min_element(kinds_.begin(), kinds_.end(),
                                     [](const auto& x, const auto& y) { return x.second.version < y.second.version; });
      kinds_.erase(oldest);
    }
    it = kinds_.emplace(kind, Kind{}).first;
    it->second.created = adds_ + 1;
  }
  Kind& k = it->second;
  k.version = ++adds_;
  k.points.push_back(point);
  k.changed_at[point.parallelism] = k.version;
  for (int p : trim_points(k.points, kPointsPerKind)) k.changed_at[p] = k.version;
  k.groups = group_points(k.points);
}

uint64_t SpeedHistory::version(const std::string& kind) const {
  auto it = kinds_.find(kind);
  return it == kinds_.end() ? 0 : it->second.version;
}

bool SpeedHistory::changed_for(const std::string& kind, uint64_t since, const std::vector<EpochGroup>& own) const {
  auto it = kinds_.find(kind);
  if (it == kinds_.end()) return since != 0;  // a model with its points, and it has gone
  const Kind& k = it->second;
  if (k.created > since) return true;
  if (k.version <= since) return false;
  for (const auto& [p, at] : k.changed_at) {
    if (at <= since) continue;
    auto g = std::lower_bound(own.begin(), own.end(), p, [](const EpochGroup& x, int q) { return x.parallelism < q; });
    bool ran = g != own.end() && g->parallelism == p;
    if (!ran) return true;
  }
  return false;
}

std::vector<EpochGroup> SpeedHistory::groups_for(const std::string& kind, const std::vector<EpochGroup>& own) const {
  auto it = kinds_.find(kind);
  if (it == kinds_.end()) return own;
  // Both by parallelism: merged, the job's own group where both have one.
  const std::vector<EpochGroup>& theirs = it->second.groups;
  std::vector<EpochGroup> out;
  out.reserve(own.size() + theirs.size());
  auto mine = own.begin();
  for (const EpochGroup& g : theirs) {
    for (; mine != own.end() && mine->parallelism < g.parallelism; ++mine) out.push_back(*mine);
    if (mine == own.end() || mine->parallelism != g.parallelism) out.push_back(g);
  }
  out.insert(out.end(), mine, own.end());
  return out;
}

}  // namespace uvsched
