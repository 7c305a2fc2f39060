#include "policy/speed_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

namespace uvsched {
namespace {

// What a fit needs of the points at one parallelism: their count and the sum
// of their seconds. The normal equations are sums over points of terms that
// depend on a point only through p and t, and so (up to a constant) is the
// squared error, so a fit costs the number of distinct parallelisms, not the
// number of points (a job's and its kind's, up to 128 for every decision).
struct AtParallelism {
  double p = 1;
  double n = 0;
  double sum = 0;
  double mean() const { return sum / n; }
};

// The basis functions of the curve: 1, 1/p and p.
double basis(int k, double p) { return k == 0 ? 1.0 : (k == 1 ? 1.0 / p : p); }

// The normal equations' sums over the points for all three basis functions,
// from which every subset's are picked: one pass over the groups for the
// eight supports instead of one each. Each sum is the same products added
// in the same order as a subset's own pass would add them (m[i][j] and
// m[j][i] kept apart, as the two products round differently), so a fit is
// the same to the last bit.
struct Moments {
  double m[3][3] = {};  // Σ n·f_i(p)·f_j(p)
  double r[3] = {};     // Σ f_i(p)·(the seconds' sum)
};

Moments moments(const std::vector<AtParallelism>& groups) {
  Moments mo;
  for (const auto& g : groups) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) mo.m[i][j] += g.n * basis(i, g.p) * basis(j, g.p);
      mo.r[i] += basis(i, g.p) * g.sum;
    }
  }
  return mo;
}

// Least squares over the basis functions selected by `use`, the others held
// at 0; false when the normal equations are singular.
bool solve(const Moments& mo, std::array<bool, 3> use, std::array<double, 3>* out) {
  std::array<int, 3> idx{};
  int n = 0;
  for (int k = 0; k < 3; ++k) {
    if (use[k]) idx[n++] = k;
  }
  if (n == 0) return false;
  double m[3][4] = {};
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) m[i][j] = mo.m[idx[i]][idx[j]];
    m[i][3] = mo.r[idx[i]];
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

// The squared error over the points, less the part no curve can change: Σ
// (f(p) - t)² = Σ n·(f(p) - mean)² + Σ (t - mean)², and the second sum is the
// same for every candidate. (Expanding the first into n·f² - 2·f·Σt + Σt²
// instead cancels to noise on a good fit, and then noise picks the curve.)
double sse(const std::vector<AtParallelism>& groups, const std::array<double, 3>& x) {
  double s = 0;
  for (const auto& g : groups) {
    double e = x[0] + x[1] / g.p + x[2] * g.p - g.mean();
    s += g.n * e * e;
  }
  return s;
}

// The curve's (a, b, c) from the points summed by parallelism.
std::array<double, 3> curve(const std::vector<AtParallelism>& groups) {
  if (groups.empty()) return {0, 1, 0};
  if (groups.size() == 1) {
    double p = groups.front().p;
    double t = groups.front().mean();
    return {SpeedModel::kPriorSerialFraction * t, (1 - SpeedModel::kPriorSerialFraction) * t * p, 0};
  }
  // Non-negative least squares by trying every support: three unknowns, so
  // eight subsets; the best feasible one wins. With two distinct
  // parallelisms c stays 0 (a line through two points says nothing of it).
  std::array<double, 3> best{groups.front().mean(), 0, 0};  // (kept by none: {a} alone is always feasible)
  double best_sse = std::numeric_limits<double>::infinity();
  Moments mo = moments(groups);
  for (int mask = 1; mask < 8; ++mask) {
    std::array<bool, 3> use{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
    if (groups.size() < 3 && use[2]) continue;
    std::array<double, 3> x;
    if (!solve(mo, use, &x)) continue;
    if (x[0] < 0 || x[1] < 0 || x[2] < 0) continue;
    double s = sse(groups, x);
    if (s < best_sse) {
      best_sse = s;
      best = x;
    }
  }
  return best;
}

}  // namespace

std::vector<int> trim_points(std::deque<EpochPoint>& points, size_t cap) {
  std::vector<int> dropped;
  while (points.size() > cap) {
    std::map<int, size_t> count;
    size_t most = 0;
    for (const auto& pt : points) most = std::max(most, ++count[pt.parallelism]);
    // The first (oldest) point of a parallelism with the most points.
    auto oldest =
        std::find_if(points.begin(), points.end(), [&](const EpochPoint& pt) { return count[pt.parallelism] == most; });
    dropped.push_back(oldest->parallelism);
    points.erase(oldest);
  }
  return dropped;
}

namespace {

template <typename Points>
std::vector<EpochGroup> group_points_of(const Points& points) {
  // Found by a linear search in a flat vector: a job has a handful of
  // distinct parallelisms, and a tree node per group was a large part of a
  // refit's time.
  std::vector<EpochGroup> groups;
  for (const auto& pt : points) {
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&pt](const EpochGroup& x) { return x.parallelism == pt.parallelism; });
    if (g == groups.end()) g = groups.insert(groups.end(), EpochGroup{pt.parallelism, 0, 0});
    if (pt.parallelism < 1 || !(pt.seconds > 0) || !std::isfinite(pt.seconds)) continue;
    g->count += 1;
    g->sum += pt.seconds;
  }
  std::sort(groups.begin(), groups.end(),
            [](const EpochGroup& x, const EpochGroup& y) { return x.parallelism < y.parallelism; });
  return groups;
}

}  // namespace

std::vector<EpochGroup> group_points(const std::vector<EpochPoint>& points) { return group_points_of(points); }
std::vector<EpochGroup> group_points(const std::deque<EpochPoint>& points) { return group_points_of(points); }

SpeedModel SpeedModel::fit(const std::vector<EpochPoint>& points) { return fit_grouped(group_points(points)); }

SpeedModel SpeedModel::fit_grouped(const std::vector<EpochGroup>& by_parallelism) {
  std::vector<AtParallelism> groups;
  groups.reserve(by_parallelism.size());
  for (const auto& g : by_parallelism) {
    if (g.parallelism >= 1 && g.count > 0)
      groups.push_back({static_cast<double>(g.parallelism), static_cast<double>(g.count), g.sum});
  }
  auto [a, b, c] = curve(groups);
  SpeedModel m(a, b, c, static_cast<int>(groups.size()));
  std::vector<std::pair<int, double>> measured;
  measured.reserve(groups.size());
  for (const auto& g : groups) measured.push_back({static_cast<int>(g.p), g.mean()});
  if (!measured.empty()) m.measured_ = std::make_shared<const std::vector<std::pair<int, double>>>(std::move(measured));
  return m;
}

double SpeedModel::seconds(int parallelism) const {
  int p = std::max(parallelism, 1);
  if (!measured_) return curve_seconds(p);  // (only a model made by of())
  const auto& measured = *measured_;
  auto at = std::lower_bound(measured.begin(), measured.end(), std::pair<int, double>{p, -HUGE_VAL});
  if (at != measured.end() && at->first == p) return at->second;
  double curve = curve_seconds(p);
  // Beyond the measured range, the nearest point's ratio holds.
  auto ratio = [this](const std::pair<int, double>& m) { return m.second / curve_seconds(m.first); };
  if (at == measured.end()) return curve * ratio(measured.back());
  if (at == measured.begin()) return curve * ratio(measured.front());
  const auto& hi = *at;
  const auto& lo = *(at - 1);
  double w = static_cast<double>(p - lo.first) / (hi.first - lo.first);
  return curve * ((1 - w) * ratio(lo) + w * ratio(hi));
}

std::optional<double> SpeedModel::measured_seconds(int parallelism) const {
  if (!measured_) return std::nullopt;
  auto at = std::lower_bound(measured_->begin(), measured_->end(), std::pair<int, double>{parallelism, -HUGE_VAL});
  if (at == measured_->end() || at->first != parallelism) return std::nullopt;
  return at->second;
}

double SpeedModel::curve_seconds(int parallelism) const {
  double p = parallelism < 1 ? 1 : parallelism;
  return a_ + b_ / p + c_ * p;
}

}  // namespace uvsched
