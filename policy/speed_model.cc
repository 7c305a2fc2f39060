#include "policy/speed_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

namespace uvsched {
namespace {

// Least squares over the basis functions selected by `use` (1, 1/p, p),
// the others held at 0; false when the normal equations are singular.
bool solve(const std::vector<EpochPoint>& pts, std::array<bool, 3> use, std::array<double, 3>* out) {
  auto basis = [](int k, double p) { return k == 0 ? 1.0 : (k == 1 ? 1.0 / p : p); };
  std::array<int, 3> idx{};
  int n = 0;
  for (int k = 0; k < 3; ++k) {
    if (use[k]) idx[n++] = k;
  }
  if (n == 0) return false;
  double m[3][4] = {};
  for (const auto& pt : pts) {
    double p = pt.parallelism;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) m[i][j] += basis(idx[i], p) * basis(idx[j], p);
      m[i][3] += basis(idx[i], p) * pt.seconds;
    }
  }
  // Gaussian elimination with partial pivoting on an n×n system.
  for (int col = 0; col < n; ++col) {
    int pivot = col;
    for (int r = col + 1; r < n; ++r) {
      if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
    }
    if (std::fabs(m[pivot][col]) < 1e-12) return false;
    for (int j = 0; j < 4; ++j) std::swap(m[col][j], m[pivot][j]);
    for (int r = 0; r < n; ++r) {
      if (r == col) continue;
      double f = m[r][col] / m[col][col];
      for (int j = col; j < 4; ++j) m[r][j] -= f * m[col][j];
    }
  }
  *out = {0, 0, 0};
  for (int i = 0; i < n; ++i) (*out)[idx[i]] = m[i][3] / m[i][i];
  return true;
}

double sse(const std::vector<EpochPoint>& pts, const std::array<double, 3>& x) {
  double s = 0;
  for (const auto& pt : pts) {
    double e = x[0] + x[1] / pt.parallelism + x[2] * pt.parallelism - pt.seconds;
    s += e * e;
  }
  return s;
}

}  // namespace

SpeedModel SpeedModel::fit(const std::vector<EpochPoint>& points) {
  std::vector<EpochPoint> pts;
  std::map<int, std::pair<double, int>> by_p;  // parallelism -> (sum of seconds, count)
  for (const auto& pt : points) {
    if (pt.parallelism < 1 || !(pt.seconds > 0) || !std::isfinite(pt.seconds)) continue;
    pts.push_back(pt);
    auto& [sum, n] = by_p[pt.parallelism];
    sum += pt.seconds;
    n += 1;
  }
  SpeedModel m = fit_curve(pts, by_p);
  for (const auto& [p, sn] : by_p) m.measured_.push_back({p, sn.first / sn.second});
  return m;
}

SpeedModel SpeedModel::fit_curve(const std::vector<EpochPoint>& pts,
                                 const std::map<int, std::pair<double, int>>& by_p) {
  int distinct = static_cast<int>(by_p.size());
  if (distinct == 0) return SpeedModel(0, 1, 0, 0);
  if (distinct == 1) {
    auto [p, sn] = *by_p.begin();
    double t = sn.first / sn.second;
    return SpeedModel(kPriorSerialFraction * t, (1 - kPriorSerialFraction) * t * p, 0, 1);
  }
  // Non-negative least squares by trying every support: three unknowns, so
  // eight subsets; the best feasible one wins. With two distinct
  // parallelisms c stays 0 (a line through two points says nothing of it).
  std::array<double, 3> best{0, 0, 0};
  double best_sse = std::numeric_limits<double>::infinity();
  for (int mask = 1; mask < 8; ++mask) {
    std::array<bool, 3> use{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
    if (distinct < 3 && use[2]) continue;
    std::array<double, 3> x;
    if (!solve(pts, use, &x)) continue;
    if (x[0] < 0 || x[1] < 0 || x[2] < 0) continue;
    double s = sse(pts, x);
    if (s < best_sse) {
      best_sse = s;
      best = x;
    }
  }
  if (!std::isfinite(best_sse)) {  // (cannot happen: {a} alone is the mean, always feasible)
    auto [p, sn] = *by_p.begin();
    return SpeedModel(sn.first / sn.second, 0, 0, distinct);
  }
  return SpeedModel(best[0], best[1], best[2], distinct);
}

double SpeedModel::seconds(int parallelism) const {
  int p = std::max(parallelism, 1);
  auto at = std::lower_bound(measured_.begin(), measured_.end(), std::pair<int, double>{p, -HUGE_VAL});
  if (at != measured_.end() && at->first == p) return at->second;
  double curve = curve_seconds(p);
  if (measured_.empty()) return curve;  // (only a model made by of())
  // Beyond the measured range, the nearest point's ratio holds.
  auto ratio = [this](const std::pair<int, double>& m) { return m.second / curve_seconds(m.first); };
  if (at == measured_.end()) return curve * ratio(measured_.back());
  if (at == measured_.begin()) return curve * ratio(measured_.front());
  const auto& hi = *at;
  const auto& lo = *(at - 1);
  double w = static_cast<double>(p - lo.first) / (hi.first - lo.first);
  return curve * ((1 - w) * ratio(lo) + w * ratio(hi));
}

double SpeedModel::curve_seconds(int parallelism) const {
  double p = parallelism < 1 ? 1 : parallelism;
  return a_ + b_ / p + c_ * p;
}

}  // namespace uvsched
