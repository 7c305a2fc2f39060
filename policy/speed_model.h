// A training job's speed model: the seconds an epoch takes at p parallel
// workers, t(p) = a + b/p + c·p (a: the part that does not parallelise, b:
// the part that does, c: what each worker adds in synchronisation), fitted by
// non-negative least squares to the (parallelism, epoch seconds) points the
// job reported, as Optimus fits its jobs online. With fewer than three
// distinct parallelisms the fit is uncertain and a prior fills in: one point
// is taken as 95% parallel (optimistic, so the allocator tries more workers
// and learns), two points fix a + b/p. Pure: points in, a model out.
#pragma once

#include <vector>

namespace uvsched {

struct EpochPoint {
  int parallelism = 1;
  double seconds = 0;
};

class SpeedModel {
 public:
  static constexpr double kPriorSerialFraction = 0.05;

  // Points with parallelism < 1 or seconds <= 0 are ignored; none at all
  // gives a model of 1 s at one worker, perfectly parallel.
  static SpeedModel fit(const std::vector<EpochPoint>& points);
  // The model t(p) = a + b/p + c·p as given (tests, priors).
  static SpeedModel of(double a, double b, double c, int distinct = 3) { return SpeedModel(a, b, c, distinct); }

  double seconds(int parallelism) const;
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
};

}  // namespace uvsched
