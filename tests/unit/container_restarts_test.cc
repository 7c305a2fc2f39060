// A pod's restarts as its containers' statuses carry them: counted, shown
// backing off, kept across the agent's report of the new task.
#include "handlers/pods/container_restarts.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/json_literal.h"

namespace uvsched {
namespace {

TEST(ContainerRestarts, TheCountIsTheMostAnyContainerHas) {
  EXPECT_EQ(restart_count(test::json(R"({})")), 0);
  EXPECT_EQ(restart_count(test::json(R"({"containerStatuses":{}})")), 0);
  EXPECT_EQ(restart_count(test::json(
                R"({"containerStatuses":[{"name":"a","restartCount":2},{"name":"b","restartCount":5},{"name":"c"}]})")),
            5);
}

TEST(ContainerRestarts, ARestartingPodHasAStatusPerContainer) {
  JsonValue pod = test::json(R"({"spec":{"containers":[{"name":"a","image":"x:1"},{"name":"b","image":"y"}]}})");
  write_restarting(pod, 3, kCrashLoopBackOff, "back-off 40s restarting the failed task (TASK_FAILED)");
  EXPECT_EQ(
      pod.get("status")->dump(),
      R"j({"containerStatuses":[)j"
      R"j({"name":"a","state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 40s restarting the failed task (TASK_FAILED)"}},"ready":false,"restartCount":3,"image":"x:1","imageID":"","started":false},)j"
      R"j({"name":"b","state":{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 40s restarting the failed task (TASK_FAILED)"}},"ready":false,"restartCount":3,"image":"y","imageID":"","started":false}]})j");
  write_restarting(pod, 4, "", "");
  EXPECT_EQ(pod.get("status")->dump(),
            R"({"containerStatuses":[)"
            R"({"name":"a","state":{},"ready":false,"restartCount":4,"image":"x:1","imageID":"","started":false},)"
            R"({"name":"b","state":{},"ready":false,"restartCount":4,"image":"y","imageID":"","started":false}]})");
}

TEST(ContainerRestarts, TheAgentsReportKeepsThePodsCount) {
  JsonValue reported = test::json(
      R"({"containerStatuses":[{"name":"a","restartCount":0,"state":{"running":{}}},{"name":"b","restartCount":9},"junk"]})");
  keep_restarts(reported, 3, "2026-12-06T00:00:00Z");
  EXPECT_EQ(
      reported.dump(),
      R"({"containerStatuses":[{"name":"a","restartCount":3,"state":{"running":{}}},{"name":"b","restartCount":9},"junk"]})");
  JsonValue ours = test::json(R"({"spec":{"containers":[{"name":"a","image":"x"}]}})");
  write_restarting(ours, 1, kCrashLoopBackOff, "back-off 10s");
  keep_restarts(*ours.get("status"), 1, "2026-12-06T00:00:00Z");
  EXPECT_EQ(
      ours.get("status")->dump(),
      R"({"containerStatuses":[{"name":"a","state":{"running":{"startedAt":"2026-12-06T00:00:00Z"}},"ready":false,"restartCount":1,"image":"x","imageID":"","started":false}]})");
}

TEST(ContainerRestarts, BackOffsAreWrittenAsGoWritesDurations) {
  EXPECT_EQ(go_duration(10'000), "10s");
  EXPECT_EQ(go_duration(80'000), "1m20s");
  EXPECT_EQ(go_duration(300'000), "5m0s");
  EXPECT_EQ(go_duration(3'725'000), "1h2m5s");
}

}  // namespace
}  // namespace uvsched
