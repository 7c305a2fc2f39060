// A training job's speed model: the seconds an epoch takes at p parallel
// workers. Where the job ran, it is what the job measured there (the mean of
// its epochs at that parallelism); elsewhere it is the curve t(p) = a + b/p +
// c·p (a: the part that does not parallelise, b: the part that does, c: what
// each worker adds in synchronisation), fitted by non-negative least squares
// to the (parallelism, epoch seconds) points the job reported, as Optimus fits
// its jobs online, and scaled by how far the measured points nearest p lie
// from it (measured / curve, interpolated between the one below and the one
// above). The measured points win where they exist because real curves have
// kinks the three terms cannot follow (a model whose workers spill onto a
// second node gains little from 4 to 6 and much from 6 to 8): on the trace in
// tools/ml_trace_sim, the smooth fit alone cost the allocation about a tenth
// of its lead (bench/RESULTS.md). The curve is scaled next to them so the
// model does not step up where measured meets fitted: a job measured faster
// than its curve at 12 would otherwise look slower at 13 than at 12, and the
// allocator would never offer it a 13th worker. With fewer than three
// distinct parallelisms the fit is uncertain and a prior fills in: one point
// is taken as 95% parallel (optimistic, so the allocator tries more workers
// and learns), two points fix a + b/p. Pure: points in, a model out.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace uvsched {

struct EpochPoint {
  int parallelism = 1;
  double seconds = 0;
};

// The epochs at one parallelism, summed: all a fit needs of them. A count of
// 0: epochs were reported there, none that a fit can use.
struct EpochGroup {
  int parallelism = 1;
  int count = 0;
  double sum = 0;
};

// `points` grouped by parallelism, in increasing order, each group summing
// its points' seconds in their order, so that a fit from the groups is the
// fit from the points to the last bit. A point a fit ignores (parallelism
// < 1, seconds not > 0 or not finite) is not counted, but its parallelism
// has a group: where a job ran, its kind's points do not count
// (SpeedHistory::groups_for).
std::vector<EpochGroup> group_points(const std::vector<EpochPoint>& points);
std::vector<EpochGroup> group_points(const std::deque<EpochPoint>& points);

// Drops points until at most `cap` remain, each time the oldest of the
// parallelism with the most points (the oldest of those on a tie). A job that
// runs for long at one parallelism so keeps what it measured at the others:
// dropping the oldest point overall forgot them, and a model of 64 points at 4
// workers said nothing of 2 or 8 but what the curve guessed. Returns the
// parallelism of each point dropped.
std::vector<int> trim_points(std::deque<EpochPoint>& points, size_t cap);

class SpeedModel {
 public:
  static constexpr double kPriorSerialFraction = 0.05;

  // Points with parallelism < 1 or seconds <= 0 are ignored; none at all
  // gives a model of 1 s at one worker, perfectly parallel.
  static SpeedModel fit(const std::vector<EpochPoint>& points);
  // The same from the points grouped (group_points; by parallelism, each
  // parallelism once, in increasing order): a caller that keeps its points'
  // groups refits without going over the points again.
  static SpeedModel fit_grouped(const std::vector<EpochGroup>& groups);
  // The model t(p) = a + b/p + c·p as given (tests, priors).
  static SpeedModel of(double a, double b, double c, int distinct = 3) { return SpeedModel(a, b, c, distinct); }

  // What the job measured at `parallelism` if it ran there, else the curve
  // scaled to the measured points on either side.
  double seconds(int parallelism) const;
  // The fitted curve alone, a + b/p + c·p.
  double curve_seconds(int parallelism) const;
  // The mean of the epochs measured at `parallelism` (the job's own, or its
  // kind's where it did not run there); nothing where none was.
  std::optional<double> measured_seconds(int parallelism) const;
  // How many distinct parallelisms the fit saw: below 3 it leans on the prior.
  int distinct() const { return distinct_; }
  bool certain() const { return distinct_ >= 3; }
  double a() const { return a_; }
  double b() const { return b_; }
  double c() const { return c_; }

 private:
  SpeedModel(double a, double b, double c, int distinct) : a_(a), b_(b), c_(c), distinct_(distinct) {}
  double a_, b_, c_;
  int distinct_;
  // (parallelism, mean seconds), by parallelism; null when none. Shared and
  // never changed after fit(), so copying a model (the policy's views copy
  // every job's, several times per decision) allocates nothing: with 1,000
  // jobs the copies' mallocs and the heap trims after them were most of a
  // decision's time.
  std::shared_ptr<const std::vector<std::pair<int, double>>> measured_;
};

}  // namespace uvsched
