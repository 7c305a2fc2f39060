// SpeedHistory keeps each kind's latest epochs apart from other kinds', lets a
// job's own measurements win where it ran, and stays bounded in points and kinds.
#include "handlers/ml/speed_history.h"

#include <gtest/gtest.h>

#include <string>

namespace uvsched {
namespace {

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
  for (EpochPoint e : {EpochPoint{1, 100}, EpochPoint{2, 55}, EpochPoint{4, 30}}) h.add("k", e);
  h.add("other", {8, 1});
  std::deque<EpochPoint> own{{2, 60}, {2, 62}};
  auto pts = h.points_for("k", own);
  ASSERT_EQ(pts.size(), 4u);
  int at2 = 0;
  for (const auto& e : pts) {
    EXPECT_NE(e.parallelism, 8) << "another kind's epoch";
    if (e.parallelism == 2) {
      EXPECT_GE(e.seconds, 60) << "its own, not its kind's 55";
      ++at2;
    }
  }
  EXPECT_EQ(at2, 2);
  EXPECT_EQ(h.points_for("unknown", own).size(), 2u) << "a kind never seen adds nothing";
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
  EXPECT_EQ(h.points_for("k", {}).size(), 1u);
  EXPECT_TRUE(h.knows("k"));
}

TEST(SpeedHistoryTest, ItKeepsTheLatestPointsOfEachKindAndDropsTheLeastRecentlyReportedKind) {
  SpeedHistory h;
  for (size_t i = 0; i < SpeedHistory::kPointsPerKind + 10; ++i) h.add("k", {1, static_cast<double>(i + 1)});
  auto pts = h.points_for("k", {});
  ASSERT_EQ(pts.size(), SpeedHistory::kPointsPerKind);
  EXPECT_EQ(pts.front().seconds, 11) << "the oldest ten went";
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
  auto pts = h.points_for("k", {});
  ASSERT_EQ(pts.size(), SpeedHistory::kPointsPerKind);
  int at2 = 0, at8 = 0;
  for (const auto& p : pts) {
    at2 += p.parallelism == 2;
    at8 += p.parallelism == 8;
  }
  EXPECT_EQ(at2, 1);
  EXPECT_EQ(at8, 1);
  EXPECT_LT(SpeedModel::fit(pts).seconds(2), SpeedModel::fit(pts).seconds(1)) << "not flat below 4";
}

}  // namespace
}  // namespace uvsched
