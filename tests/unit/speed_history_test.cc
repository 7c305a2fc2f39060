// SpeedHistory keeps each kind's latest epochs apart from other kinds', lets a
// job's own measurements win where it ran, stays bounded in points and kinds,
// and says when a job's model has to be fitted again.
#include "handlers/ml/speed_history.h"

#include <gtest/gtest.h>

#include <string>

namespace uvsched {
namespace {

std::vector<EpochGroup> grouped(const std::vector<EpochPoint>& own) { return group_points(own); }

TrainRequest request(const std::string& fn, const std::string& model, const std::string& dataset, int64_t batch) {
  TrainRequest r;
  r.function_name = fn;
  r.model_type = model;
  r.dataset = dataset;
  r.batch_size = batch;
  r.epochs = 10;
  r.lr = 0.1;
  return r;
}

TEST(SpeedHistoryTest, AKindIsTheFunctionModelDatasetAndBatchSize) {
  TrainRequest base = request("resnet", "resnet34", "cifar10", 128);
  TrainRequest other_lr = base;
  other_lr.lr = 0.01;
  other_lr.epochs = 50;
  EXPECT_EQ(SpeedHistory::kind_of(base), SpeedHistory::kind_of(other_lr))
      << "learning rate and epochs do not change an epoch's time";
  for (const TrainRequest& r :
       {request("vgg", "resnet34", "cifar10", 128), request("resnet", "vgg16", "cifar10", 128),
        request("resnet", "resnet34", "mnist", 128), request("resnet", "resnet34", "cifar10", 256)})
    EXPECT_NE(SpeedHistory::kind_of(base), SpeedHistory::kind_of(r));
}

TEST(SpeedHistoryTest, AJobsOwnEpochsWinWhereItRanAndItsKindsFillInTheRest) {
  SpeedHistory h;
  for (EpochPoint e : {EpochPoint{1, 100}, EpochPoint{2, 55}, EpochPoint{4, 30}, EpochPoint{1, 104}}) h.add("k", e);
  h.add("other", {8, 1});
  std::deque<EpochPoint> own{{2, 60}, {3, 40}, {2, 62}};
  auto groups = h.groups_for("k", group_points(own));
  ASSERT_EQ(groups.size(), 4u);
  auto at = [&](size_t k, int p, int count, double sum) {
    EXPECT_EQ(groups[k].parallelism, p) << k;
    EXPECT_EQ(groups[k].count, count) << "at " << p;
    EXPECT_EQ(groups[k].sum, sum) << "at " << p;
  };
  at(0, 1, 2, 204);  // its kind's, where it never ran
  at(1, 2, 2, 122);  // its own, not its kind's 55
  at(2, 3, 1, 40);   // its own, where its kind has none
  at(3, 4, 1, 30);   // and no other kind's epoch at 8
  EXPECT_EQ(h.groups_for("unknown", group_points(own)).size(), 2u) << "a kind never seen adds nothing";
}

// Where a job ran, its kind's epochs do not count, even when none of the
// job's own epochs there can be used: the points' groups say so.
TEST(SpeedHistoryTest, AParallelismWithOnlyUnusableEpochsStillHidesItsKinds) {
  SpeedHistory h;
  h.add("k", {2, 55});
  std::deque<EpochPoint> own{{2, std::numeric_limits<double>::infinity()}, {4, 30}};
  auto groups = h.groups_for("k", group_points(own));
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].parallelism, 2);
  EXPECT_EQ(groups[0].count, 0) << "its own, unusable: not the kind's 55";
  SpeedModel m = SpeedModel::fit_grouped(groups);
  EXPECT_EQ(m.distinct(), 1) << "a fit sees only the usable group";
  EXPECT_DOUBLE_EQ(m.seconds(4), 30);
}

TEST(SpeedHistoryTest, EveryAddBumpsItsKindsVersionAndBadPointsAreNotAdded) {
  SpeedHistory h;
  EXPECT_EQ(h.version("k"), 0u);
  EXPECT_FALSE(h.knows("k"));
  h.add("k", {2, 10});
  EXPECT_EQ(h.version("k"), 1u);
  h.add("k", {0, 10});
  h.add("k", {2, -1});
  EXPECT_EQ(h.version("k"), 1u);
  EXPECT_EQ(h.groups_for("k", {}).size(), 1u);
  EXPECT_TRUE(h.knows("k"));
}

// changed_for tells a job's model whether groups_for would give it other
// groups than when it was fitted: only the kind's points at parallelisms the
// job never ran count (where it ran, its own win), and an eviction or a
// recreation of the kind always does.
TEST(SpeedHistoryTest, AKindChangedForAJobOnlyWhereTheJobHasNoPointsOfItsOwn) {
  SpeedHistory h;
  std::deque<EpochPoint> own{{2, 60}};
  EXPECT_FALSE(h.changed_for("k", 0, group_points(own))) << "never held, nothing fitted to it";
  h.add("k", {2, 55});
  EXPECT_TRUE(h.changed_for("k", 0, group_points(own))) << "created since";
  uint64_t fitted = h.version("k");
  EXPECT_FALSE(h.changed_for("k", fitted, group_points(own))) << "nothing since";
  h.add("k", {2, 57});
  EXPECT_GT(h.version("k"), fitted);
  EXPECT_FALSE(h.changed_for("k", fitted, group_points(own))) << "at 2, where the job's own point wins";
  auto groups = h.groups_for("k", group_points(own));
  ASSERT_EQ(groups.size(), 1u) << "what the line above relies on";
  EXPECT_EQ(groups[0].sum, 60) << "the job's own";
  h.add("k", {4, 30});
  EXPECT_TRUE(h.changed_for("k", fitted, group_points(own))) << "at 4, where the job has none";
  EXPECT_TRUE(h.changed_for("k", fitted, {})) << "a job with no epochs takes all its kind's";
  fitted = h.version("k");
  h.add("other", {4, 1});
  EXPECT_FALSE(h.changed_for("k", fitted, group_points(own))) << "another kind's add";
}

TEST(SpeedHistoryTest, TrimmingAKindChangesItWhereThePointWentFrom) {
  SpeedHistory h;
  h.add("k", {8, 20});
  for (size_t i = 1; i < SpeedHistory::kPointsPerKind; ++i) h.add("k", {4, 30});
  uint64_t fitted = h.version("k");
  // Full: the next point at 8 pushes out the oldest at 4 (the most measured).
  h.add("k", {8, 21});
  EXPECT_FALSE(h.changed_for("k", fitted, grouped({{8, 19}, {4, 31}}))) << "both where it ran";
  EXPECT_TRUE(h.changed_for("k", fitted, grouped({{8, 19}}))) << "a point at 4 went";
  EXPECT_TRUE(h.changed_for("k", fitted, grouped({{4, 31}}))) << "a point at 8 came";
}

TEST(SpeedHistoryTest, AnEvictedOrRecreatedKindHasChangedForEveryJob) {
  SpeedHistory h;
  h.add("k", {2, 10});
  uint64_t fitted = h.version("k");
  for (size_t i = 0; i < SpeedHistory::kKinds; ++i) h.add("kind " + std::to_string(i), {1, 1});
  ASSERT_FALSE(h.knows("k"));
  EXPECT_TRUE(h.changed_for("k", fitted, grouped({{2, 11}}))) << "evicted: its points are gone";
  EXPECT_EQ(h.version("k"), 0u);
  EXPECT_FALSE(h.changed_for("k", 0, grouped({{2, 11}}))) << "refitted without it";
  h.add("k", {2, 12});
  EXPECT_GT(h.version("k"), fitted) << "versions only grow, across an eviction";
  EXPECT_TRUE(h.changed_for("k", fitted, grouped({{2, 11}}))) << "recreated after the fit";
}

TEST(SpeedHistoryTest, ItKeepsTheLatestPointsOfEachKindAndDropsTheLeastRecentlyReportedKind) {
  SpeedHistory h;
  for (size_t i = 0; i < SpeedHistory::kPointsPerKind + 10; ++i) h.add("k", {1, static_cast<double>(i + 1)});
  auto groups = h.groups_for("k", {});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].count, static_cast<int>(SpeedHistory::kPointsPerKind));
  // 11 + 12 + ... + 74: the oldest ten went.
  EXPECT_EQ(groups[0].sum, (11 + 74) * static_cast<double>(SpeedHistory::kPointsPerKind) / 2);
  for (size_t i = 1; i < SpeedHistory::kKinds; ++i) h.add("kind " + std::to_string(i), {1, 1});
  EXPECT_EQ(h.kinds(), SpeedHistory::kKinds);
  h.add("k", {1, 1});  // "k" reported again: now "kind 1" is the least recent
  h.add("one more", {1, 1});
  EXPECT_EQ(h.kinds(), SpeedHistory::kKinds);
  EXPECT_TRUE(h.knows("k"));
  EXPECT_FALSE(h.knows("kind 1"));
  EXPECT_TRUE(h.knows("kind 2"));
}

// A kind that runs long at one parallelism keeps what it measured at the
// others: on two yolov3 jobs sharing 16 slots the latest 64 points were all at
// 4 workers, the model was flat below 4, and one job was told 1 worker (833 s
// an epoch instead of 273 s).
TEST(SpeedHistoryTest, ManyEpochsAtOneParallelismDoNotPushOutTheOthers) {
  SpeedHistory h;
  h.add("k", {2, 425});
  h.add("k", {8, 520});
  for (int i = 0; i < 200; ++i) h.add("k", {4, 280});
  auto groups = h.groups_for("k", {});
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].parallelism, 2);
  EXPECT_EQ(groups[0].count, 1);
  EXPECT_EQ(groups[1].count, static_cast<int>(SpeedHistory::kPointsPerKind) - 2);
  EXPECT_EQ(groups[2].parallelism, 8);
  EXPECT_EQ(groups[2].count, 1);
  SpeedModel m = SpeedModel::fit_grouped(groups);
  EXPECT_LT(m.seconds(2), m.seconds(1)) << "not flat below 4";
}

}  // namespace
}  // namespace uvsched
