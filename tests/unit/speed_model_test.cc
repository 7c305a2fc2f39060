// The speed model recovers known curves (exact and with noise) and leans on
// its prior with few points; the allocator hands workers to the jobs they
// save the most time for, gives every job one, and stops when a worker would
// save nothing.
#include "policy/speed_model.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <random>

#include "policy/speedup_allocation.h"
#include "policy/speedup_policy.h"

namespace uvsched {
namespace {

std::vector<EpochPoint> sample(double a, double b, double c, std::vector<int> ps, double noise = 0, int each = 1) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<EpochPoint> out;
  for (int p : ps) {
    for (int k = 0; k < each; ++k) out.push_back({p, (a + b / p + c * p) * (1 + u(rng))});
  }
  return out;
}

TEST(SpeedModelTest, RecoversKnownCurvesExactly) {
  struct Case {
    const char* name;
    double a, b, c;
  } cases[] = {
      {"scales well", 2, 400, 0.1},
      {"mostly serial", 30, 20, 0},
      {"sync-bound", 1, 100, 3},
  };
  for (const auto& c : cases) {
    SpeedModel m = SpeedModel::fit(sample(c.a, c.b, c.c, {1, 2, 4, 8, 16}));
    EXPECT_TRUE(m.certain()) << c.name;
    EXPECT_NEAR(m.a(), c.a, 1e-6 + 1e-6 * c.a) << c.name;
    EXPECT_NEAR(m.b(), c.b, 1e-6 * c.b + 1e-6) << c.name;
    EXPECT_NEAR(m.c(), c.c, 1e-6) << c.name;
  }
}

TEST(SpeedModelTest, PredictsWithinTenPercentFromNoisyEpochsWhereItMeasured) {
  SpeedModel m = SpeedModel::fit(sample(5, 300, 0.5, {2, 4, 6, 8}, 0.10, 5));
  for (int p : {2, 3, 4, 6, 8}) {
    double truth = 5 + 300.0 / p + 0.5 * p;
    EXPECT_NEAR(m.seconds(p), truth, 0.10 * truth) << "p=" << p;
  }
  // Twice as far as it measured, the error grows (the c·p term is what the noise hides).
  double truth16 = 5 + 300.0 / 16 + 0.5 * 16;
  EXPECT_NEAR(m.seconds(16), truth16, 0.25 * truth16);
}

TEST(SpeedModelTest, OnePointIsTakenAsNearlyPerfectlyParallel) {
  SpeedModel m = SpeedModel::fit({{4, 100}});
  EXPECT_FALSE(m.certain());
  EXPECT_NEAR(m.seconds(4), 100, 1e-9) << "it passes through its point";
  EXPECT_NEAR(m.seconds(8), 100 * (0.05 + 0.95 / 2), 1e-9);
}

TEST(SpeedModelTest, TwoPointsFixALineInOneOverP) {
  SpeedModel m = SpeedModel::fit({{2, 60}, {4, 40}});  // a + b/p: b = 80, a = 20
  EXPECT_EQ(m.distinct(), 2);
  EXPECT_NEAR(m.a(), 20, 1e-9);
  EXPECT_NEAR(m.b(), 80, 1e-9);
  EXPECT_EQ(m.c(), 0);
}

TEST(SpeedModelTest, ACurveThatSlowsDownIsNotFittedNegative) {
  // Slower with more workers: no negative b; the fit is a + c·p.
  SpeedModel m = SpeedModel::fit({{1, 10}, {2, 12}, {4, 16}});
  EXPECT_GE(m.a(), 0);
  EXPECT_GE(m.b(), 0);
  EXPECT_GE(m.c(), 0);
  EXPECT_LT(m.seconds(1), m.seconds(4));
}

TEST(SpeedModelTest, WhereTheJobRanItsMeasuredMeanWinsOverTheCurve) {
  // A kink the three terms cannot follow: linear to 4 workers, then almost
  // nothing more at 6 (workers spilled onto a second node).
  SpeedModel m = SpeedModel::fit({{1, 120}, {2, 60}, {4, 30}, {6, 28}, {6, 30}});
  EXPECT_EQ(m.seconds(6), 29) << "the mean of its two epochs at 6";
  EXPECT_EQ(m.seconds(4), 30);
  EXPECT_NE(m.curve_seconds(6), 29) << "the curve alone smooths the kink";
  EXPECT_EQ(m.seconds(0), m.seconds(1)) << "below one worker is one worker";
}

TEST(SpeedModelTest, WhereTheJobNeverRanTheCurveIsScaledToTheMeasuredPointsBeside) {
  SpeedModel m = SpeedModel::fit({{1, 120}, {2, 60}, {4, 30}, {6, 28}, {6, 30}});
  auto ratio = [&](int p) { return m.seconds(p) / m.curve_seconds(p); };
  // Between 4 and 6, halfway between their ratios to the curve.
  EXPECT_NEAR(ratio(5), (ratio(4) + ratio(6)) / 2, 1e-12);
  // Beyond the last measured point, that point's ratio.
  EXPECT_NEAR(ratio(9), ratio(6), 1e-12);
  // A job measured faster than its curve at 12 (a kink the curve smooths):
  // 13 is still predicted faster than 12, so the allocator offers the 13th
  // worker. The curve alone would say 13 is slower than what 12 measured.
  SpeedModel k = SpeedModel::fit({{1, 8230}, {4, 2227}, {8, 1127}, {12, 736}});
  ASSERT_GT(k.curve_seconds(13), k.seconds(12)) << "the case this guards against";
  EXPECT_LT(k.seconds(13), k.seconds(12));
  EXPECT_LT(k.seconds(16), k.seconds(13));
}

TEST(SpeedModelTest, BadPointsAreIgnored) {
  SpeedModel m = SpeedModel::fit({{0, 5}, {3, -1}, {2, NAN}, {2, 50}});
  EXPECT_EQ(m.distinct(), 1);
  EXPECT_NEAR(m.seconds(2), 50, 1e-9);
}

// The parallelism with the most points gives up its oldest; on a tie, the
// one whose oldest point is the oldest of all. What went is returned by
// parallelism (SpeedHistory marks where a kind's points changed by it).
TEST(SpeedModelTest, TrimmingDropsTheOldestPointOfTheMostMeasuredParallelism) {
  struct Case {
    const char* name;
    std::deque<EpochPoint> in;
    size_t cap;
    std::vector<double> kept;  // seconds, oldest first
    std::vector<int> dropped;  // the parallelism of each point dropped, as returned
  } cases[] = {
      {"under the cap: nothing", {{4, 1}, {2, 2}}, 2, {1, 2}, {}},
      {"the oldest at 4, twice", {{4, 1}, {4, 2}, {4, 3}, {2, 4}, {4, 5}, {8, 6}}, 4, {3, 4, 5, 6}, {4, 4}},
      {"a tie: the oldest point of the two", {{2, 1}, {4, 2}, {2, 3}, {4, 4}}, 3, {2, 3, 4}, {2}},
      {"a tie the other way", {{4, 1}, {2, 2}, {2, 3}, {4, 4}}, 3, {2, 3, 4}, {4}},
      {"down to one of each", {{1, 1}, {1, 2}, {2, 3}, {2, 4}, {3, 5}}, 3, {2, 4, 5}, {1, 2}},
  };
  for (auto& c : cases) {
    std::deque<EpochPoint> pts = c.in;
    std::vector<int> dropped = trim_points(pts, c.cap);
    std::vector<double> kept;
    for (const auto& p : pts) kept.push_back(p.seconds);
    EXPECT_EQ(kept, c.kept) << c.name;
    EXPECT_EQ(dropped, c.dropped) << c.name;
  }
}

// Each worker goes where it adds the most speed (epochs per second), weighed
// by 1/sqrt(epochs left).
TEST(SpeedupAllocationTest, WorkersGoWhereTheyAddTheMostSpeed) {
  struct Case {
    const char* name;
    std::vector<JobDemand> jobs;
    long capacity;
    std::vector<int> want;
    double min_relative_gain = 0;
  } cases[] = {
      {"the job that scales takes the spare workers",
       {{"serial", SpeedModel::of(100, 5, 0), 10, 64}, {"parallel", SpeedModel::of(1, 400, 0), 10, 64}},
       6,
       {1, 5}},
      {"more capacity than anyone can use: each stops where one more worker slows it (p* = sqrt(b/c))",
       {{"serial", SpeedModel::of(100, 5, 0.5), 10, 64}, {"parallel", SpeedModel::of(1, 40, 1), 10, 64}},
       100,
       {3, 6}},
      {"fewer workers than jobs: one each all the same",
       {{"a", SpeedModel::of(0, 10, 0), 5, 8}, {"b", SpeedModel::of(0, 10, 0), 5, 8}},
       1,
       {1, 1}},
      {"a job's own cap holds, and the rest goes to the other",
       {{"a", SpeedModel::of(0, 1000, 0), 5, 3}, {"b", SpeedModel::of(0, 10, 0), 5, 8}},
       10,
       {2, 8}},
      {"a job with no epochs left gets nothing more",
       {{"done", SpeedModel::of(0, 1000, 0), 0, 8}, {"b", SpeedModel::of(0, 100, 0), 5, 8}},
       10,
       {1, 8}},
      {"as fast per worker: the job nearer its end takes the spare workers",
       {{"far", SpeedModel::of(0, 100, 0), 100, 64}, {"near", SpeedModel::of(0, 100, 0), 2, 64}},
       6,
       {1, 5}},
      {"three times as fast per worker outweighs four times the epochs left (the weight is 1/sqrt(left))",
       {{"near", SpeedModel::of(0, 300, 0), 4, 64}, {"far", SpeedModel::of(0, 100, 0), 16, 64}},
       6,
       {1, 5}},
      {"a worker that makes a job less than 10% faster is not given",
       {{"ncf-like", SpeedModel::of(2.5, 2, 0), 10, 64}},
       10,
       {2},
       0.10},
  };
  for (const auto& c : cases) {
    SpeedupAllocation got = allocate_by_speedup(c.jobs, c.capacity, c.min_relative_gain);
    EXPECT_EQ(got.parallelism, c.want) << c.name;
    int sum = 0;
    for (int p : got.parallelism) sum += p;
    EXPECT_EQ(got.used, sum) << c.name;
    EXPECT_LE(sum, std::max<long>(c.capacity, static_cast<long>(c.jobs.size()))) << c.name;
  }
}

// A job leaving a division and the rest divided again get what a division
// without it from the start gives them, worker for worker: with models that
// scale, that do not, with a kink (a gain that grows past a worker), jobs at
// their caps, and fewer workers than jobs.
TEST(SpeedupAllocationTest, AfterJobsLeaveTheRestGetWhatTheyWouldWithoutThem) {
  std::vector<SpeedModel> models = {
      SpeedModel::of(1, 400, 0),
      SpeedModel::of(100, 5, 0),
      SpeedModel::fit({{1, 100}, {2, 90}, {4, 30}, {8, 20}}),  // gains little at 2, much at 4
      SpeedModel::of(0, 1000, 0),
      SpeedModel::of(5, 200, 2),
      SpeedModel::of(0, 50, 0),
  };
  std::vector<int> caps = {64, 64, 8, 3, 64, 64};
  std::vector<int> left = {10, 3, 20, 5, 1, 40};
  for (long capacity : {3L, 6L, 12L, 25L, 200L}) {
    std::vector<BorrowedDemand> all;
    for (size_t i = 0; i < models.size(); ++i) all.push_back({&models[i], left[i], caps[i]});
    for (const std::vector<size_t>& leaving : std::vector<std::vector<size_t>>{{0}, {2}, {1, 4}, {0, 2, 5}, {3}}) {
      SpeedupAllocator a(all, capacity);
      a.run();
      std::vector<BorrowedDemand> rest;
      for (size_t i = 0; i < all.size(); ++i) {
        if (std::find(leaving.begin(), leaving.end(), i) == leaving.end()) rest.push_back(all[i]);
      }
      // In two steps, as the speedup policy's shrunk share does.
      a.leave(leaving[0]);
      a.run();
      for (size_t k = 1; k < leaving.size(); ++k) a.leave(leaving[k]);
      a.run();
      SpeedupAllocator fresh(rest, capacity);  // a division without them from the start
      fresh.run();
      std::vector<int> got;
      for (size_t i = 0; i < all.size(); ++i) {
        if (std::find(leaving.begin(), leaving.end(), i) == leaving.end())
          got.push_back(a.parallelism()[i]);
        else
          EXPECT_EQ(a.parallelism()[i], 0) << "a job that left holds nothing";
      }
      EXPECT_EQ(got, fresh.parallelism()) << "capacity " << capacity << ", " << leaving.size() << " leaving";
      EXPECT_EQ(a.used(), fresh.used()) << "capacity " << capacity;
    }
  }
}

TEST(SpeedupPolicyTest, AJobsDecisionIsItsShareAndAnUnmeasuredJobKeepsItsWorkers) {
  std::vector<SpeedupJob> jobs = {
      {SpeedModel::of(1, 400, 0), true, 2, 50},    // scales
      {SpeedModel::of(100, 5, 0), true, 2, 50},    // does not
      {SpeedModel::of(0, 1, 0, 0), false, 4, 10},  // not measured yet: keeps its 4
  };
  Decision d = decide_by_speedup(jobs, 0, 12, 32);
  EXPECT_EQ(d.why, Decision::Why::kSpeedup);
  EXPECT_EQ(d.reason(), "speedup");
  EXPECT_EQ(d.parallelism, 7) << "12 workers - 4 kept - 1 for the other job";
  EXPECT_EQ(decide_by_speedup(jobs, 1, 12, 32).parallelism, 1);
  Decision capped = decide_by_speedup(jobs, 0, 12, 5);
  EXPECT_EQ(capped.parallelism, 5);
}

// A share is backfilled with workers free now that no job due before this
// epoch ends is owed: they would idle until their owner reports.
TEST(SpeedupPolicyTest, AJobRunsAboveItsShareOnWorkersNobodyDueBeforeItsEpochEndsIsOwed) {
  struct Case {
    const char* name;
    double other_due_in;  // seconds until the other job reports
    int want;
  } cases[] = {
      {"the other reports long after: all 9 free workers", 500, 11},
      {"the other reports before any epoch would end: the share", 5, 6},
      {"the other reports after an epoch at 11 (19.1 s) ends", 20, 11},
      {"the other reports before even an epoch at 11 ends", 19, 6},
      {"the other reports now", 0, 6},
  };
  for (const auto& c : cases) {
    // Two like jobs (10 + 100/p s an epoch) on 12 workers: shares 6 and 6. This
    // one holds 2, the other 1: 9 are free, 5 of them owed to the other.
    std::vector<SpeedupJob> jobs = {
        {SpeedModel::of(10, 100, 0), true, 2, 50, 0},
        {SpeedModel::of(10, 100, 0), true, 1, 50, c.other_due_in},
    };
    EXPECT_EQ(decide_by_speedup(jobs, 0, 12, 32).parallelism, c.want) << c.name;
  }
  // Never above --max-parallelism, and not where more workers do not help.
  std::vector<SpeedupJob> jobs = {
      {SpeedModel::of(10, 100, 0), true, 2, 50, 0},
      {SpeedModel::of(10, 100, 0), true, 1, 50, 500},
  };
  EXPECT_EQ(decide_by_speedup(jobs, 0, 12, 8).parallelism, 8);
  jobs[0].model = SpeedModel::fit({{1, 10}, {2, 10}, {4, 10}});  // flat
  EXPECT_EQ(decide_by_speedup(jobs, 0, 12, 32).parallelism, 1) << "no worker makes it faster";
}

// With several jobs owed workers, only those due before the epoch would end
// count, whatever order they come in: backfill sums what is owed by report
// time, not by the jobs' order.
TEST(SpeedupPolicyTest, ABackfillCountsOnlyTheWorkersOwedToJobsDueBeforeItsEpochEnds) {
  struct Case {
    const char* name;
    double a_due_in, b_due_in;
    int want;
  } cases[] = {
      {"neither reports before an epoch ends: all 14 free workers", 500, 500, 16},
      {"A reports first: its 5 are kept", 5, 500, 11},
      {"B reports first: its 5 are kept", 500, 5, 11},
      {"both report first: the share", 5, 5, 6},
      {"B first, A after an epoch at 11 (19.1 s) ends", 20, 5, 11},
      {"A first, B after an epoch at 15 (16.7 s) ends but before one at 14 (17.1 s)", 5, 17, 6},
      {"both after an epoch at 16 ends", 17, 18.5, 16},
  };
  for (const auto& c : cases) {
    // Three like jobs (10 + 100/p s an epoch) on 18 workers: shares 6 each.
    // This one holds 2, A and B 1 each: 14 are free, 5 of them owed to each.
    std::vector<SpeedupJob> jobs = {
        {SpeedModel::of(10, 100, 0), true, 2, 50, 0},
        {SpeedModel::of(10, 100, 0), true, 1, 50, c.a_due_in},
        {SpeedModel::of(10, 100, 0), true, 1, 50, c.b_due_in},
    };
    EXPECT_EQ(decide_by_speedup(jobs, 0, 18, 32).parallelism, c.want) << c.name;
  }
}

// A job told to shrink keeps its share averaged over its shrunk epoch, as the
// jobs that finish within that epoch leave: workers it gave them would idle
// from then until it reports again, and workers it kept for a job that leaves
// near the end would idle until then. (On the trace, two imagenet jobs went
// from 6 workers to 1 for a job three epochs from done, then ran 8,000 s epochs
// on an empty cluster.)
TEST(SpeedupPolicyTest, AJobShrinksToItsShareAveragedOverTheEpochAsJobsFinishWithinIt) {
  struct Case {
    const char* name;
    int other_epochs_left;
    int want;
  } cases[] = {
      {"the other finishes at 82.7 s of the 8,000 s epoch at 1: 1 then 12, 11.9 on average, keeps its 6", 3, 6},
      {"the other finishes at 6,192 s: 3.49 on average", 171, 3},
      {"the other finishes at 7,974 s, just before the end: 1.04 on average", 220, 1},
      {"the other finishes at 8,010 s, just after: its share", 221, 1},
      {"the other runs far longer: its share", 1000, 1},
  };
  for (const auto& c : cases) {
    // This job (1,000 + 7,000/p s an epoch) holds 6 of 12 workers, the other
    // (400/p s, so a worker adds over 20 times the speed there) holds 6 and is
    // due in 10 s: by marginal speedup the shares are 1 and 11, and the other
    // finishes 10 s + (left - 1) × 400/11 s from now; alone, this job's share
    // is all 12.
    std::vector<SpeedupJob> jobs = {
        {SpeedModel::of(1000, 7000, 0), true, 6, 50, 0},
        {SpeedModel::of(0, 400, 0), true, 6, c.other_epochs_left, 10},
    };
    EXPECT_EQ(decide_by_speedup(jobs, 0, 12, 32).parallelism, c.want) << c.name;
  }
  // Sixteen jobs that finish together, at 6,000 s of the 8,000 s epoch at 1
  // (more than the groups the allocation is recomputed in): with 17 jobs on
  // 12 workers every share is 1 until then, and 12 after: 3.75 on average.
  std::vector<SpeedupJob> many = {{SpeedModel::of(1000, 7000, 0), true, 6, 50, 0}};
  for (int k = 0; k < 16; ++k) many.push_back({SpeedModel::of(0, 400, 0), true, 1, 1, 6000});
  EXPECT_EQ(decide_by_speedup(many, 0, 12, 32).parallelism, 4);
  for (auto& j : many) j.next_report_in = j.next_report_in ? 2000 : 0;  // at 2,000 s: 9.25, keeps its 6
  EXPECT_EQ(decide_by_speedup(many, 0, 12, 32).parallelism, 6);
  // Its share without them is no more than 6 of 12 beside a like job, so from
  // 8 it shrinks to 6 (not to 1, its share beside the fast job).
  std::vector<SpeedupJob> three = {
      {SpeedModel::of(1000, 7000, 0), true, 8, 50, 0},
      {SpeedModel::of(0, 400, 0), true, 2, 3, 10},
      {SpeedModel::of(1000, 7000, 0), true, 2, 50, 4000},
  };
  EXPECT_EQ(decide_by_speedup(three, 0, 12, 32).parallelism, 6);
  // Growing is not touched: the job with the short epochs is still told its share.
  EXPECT_EQ(decide_by_speedup(three, 1, 12, 32).parallelism, 10);
}

// A job told to shrink keeps the most workers it holds at which an epoch
// costs fewer worker-seconds than at any fewer, as measured: they take
// nothing from the others over its run (deepspeech2 on the trace runs
// superlinearly to 3 workers).
TEST(SpeedupPolicyTest, AJobToldToShrinkKeepsTheWorkersAtWhichItsEpochsCostLeast) {
  struct Case {
    const char* name;
    std::vector<EpochPoint> measured;
    int holds;
    int want;
  } cases[] = {
      {"superlinear to 3 (273 worker-s against 289 at 1), holds 4", {{1, 289}, {2, 148}, {3, 91}, {4, 75}}, 4, 3},
      {"holds 2, which costs more than 1", {{1, 289}, {2, 148}, {3, 91}, {4, 75}}, 2, 1},
      {"one worker never measured: the fit's guess does not count", {{2, 148}, {3, 91}, {4, 75}}, 4, 1},
      {"linear (1,000 worker-s at 1 and at 4): not cheaper", {{1, 1000}, {2, 500}, {4, 250}}, 4, 1},
      {"cheaper at 3 but 3 was not measured", {{1, 289}, {2, 148}, {4, 60}}, 4, 4},
      {"cheaper at 6, holds 4: what it holds", {{1, 289}, {3, 91}, {6, 40}}, 4, 3},
  };
  for (const auto& c : cases) {
    // Beside a job whose workers each add far more speed, so that this one's
    // share is 1 of the 12, and which does not finish within its epoch.
    std::vector<SpeedupJob> jobs = {
        {SpeedModel::fit(c.measured), true, c.holds, 50, 0},
        {SpeedModel::of(0, 40, 0), true, 12 - c.holds, 1000, 10},
    };
    EXPECT_EQ(decide_by_speedup(jobs, 0, 12, 32).parallelism, c.want) << c.name;
  }
  // A job at or under its share is not touched: it is told its share.
  std::vector<SpeedupJob> jobs = {
      {SpeedModel::fit({{1, 289}, {2, 148}, {3, 91}}), true, 3, 50, 100},
      {SpeedModel::of(0, 40, 0), true, 1, 1000, 0},
  };
  EXPECT_EQ(decide_by_speedup(jobs, 1, 12, 32).parallelism, 11);
}

// Reports that came together are decided on one division, one after the
// other, each decision written into the jobs as it is made: the second
// job's backfill sees the workers the first took, so a round never hands out
// more workers than there are. Three like jobs (10 + 100/p s an epoch) on 20
// workers, shares 7, 7 and 6, each holding 1; A and B report now, C in 500 s.
// A backfills to 12: 17 are free and only B's 6 are owed before an epoch at
// 12 ends. B then finds 6 free, its share. Decided apart, B would take 12
// as well: 25 workers.
TEST(SpeedupPolicyTest, InARoundEachDecisionSeesTheWorkersTheOnesBeforeItTook) {
  std::vector<SpeedupJob> jobs = {
      {SpeedModel::of(10, 100, 0), true, 1, 50, 0},
      {SpeedModel::of(10, 100, 0), true, 1, 50, 0},
      {SpeedModel::of(10, 100, 0), true, 1, 50, 500},
  };
  EXPECT_EQ(decide_by_speedup(jobs, 1, 20, 32).parallelism, 12) << "B decided apart";
  SpeedupRound round(jobs, {0, 1}, 20, 32);
  EXPECT_EQ(round.decide(0).parallelism, 12);
  EXPECT_EQ(jobs[0].parallelism, 12);
  EXPECT_DOUBLE_EQ(jobs[0].next_report_in, 10 + 100.0 / 12) << "due when an epoch at 12 ends";
  EXPECT_EQ(round.decide(1).parallelism, 7);
  EXPECT_EQ(jobs[0].parallelism + jobs[1].parallelism + jobs[2].parallelism, 20);
}

// With workers for every job's --max-parallelism (the daemon's case when it
// does not know the capacity) no job takes one from another, so a job's
// decision is the one it gets alone: MlScheduler then builds no other job's
// model. Jobs that scale, that do not, with a kink (faster at 6 than at 5,
// slower at 5 than at 4), unmeasured, shrinking, due soon and late.
TEST(SpeedupPolicyTest, WithWorkersForEveryJobsMaximumAJobDecidesAsIfAlone) {
  SpeedModel kink = SpeedModel::fit({{1, 100}, {2, 52}, {4, 30}, {5, 40}, {6, 20}});
  std::vector<SpeedupJob> jobs = {
      {SpeedModel::of(1, 400, 0), true, 2, 50, 0},
      {SpeedModel::fit({{1, 10}, {2, 10}, {4, 10}}), true, 6, 50, 30},  // flat: told 1
      {SpeedModel::of(0, 1, 0, 0), false, 4, 10, 0},
      {kink, true, 4, 20, 5},  // its greedy stops at 4, and 6 is faster
      {SpeedModel::of(10, 100, 0.5), true, 12, 3, 400},
      {SpeedModel::of(1000, 7000, 0), true, 1, 80, 9000},
  };
  int maxp = 6;
  std::vector<int> alone;
  for (size_t i = 0; i < jobs.size(); ++i) {
    int a = decide_by_speedup({jobs[i]}, 0, maxp, maxp).parallelism;
    alone.push_back(a);
    EXPECT_EQ(decide_by_speedup(jobs, i, maxp * static_cast<long>(jobs.size()), maxp).parallelism, a) << "job " << i;
  }
  EXPECT_EQ(alone, (std::vector<int>{6, 1, 6, 6, 6, 6}));
  EXPECT_EQ(decide_by_speedup({jobs[3]}, 0, 5, 5).parallelism, 4) << "the kink: slower at 5 than at 4";
  // Fewer workers than that, and the jobs contend.
  EXPECT_NE(decide_by_speedup(jobs, 0, 2 * static_cast<long>(jobs.size()), maxp).parallelism, alone[0]);
}

}  // namespace
}  // namespace uvsched
