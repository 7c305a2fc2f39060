// A pod's READY, STATUS and RESTARTS cells as kubectl's own printer makes
// them (printPod), row by row: the server-side Table must say what
// `kubectl get pods --server-print=false` would.
#include <gtest/gtest.h>

#include <string>

#include "handlers/pods/pod_table.h"
#include "tests/support/json_literal.h"

namespace uvsched {
namespace {

struct SummaryCase {
  const char* why;
  const char* pod;
  const char* status;
  size_t ready;
  size_t restarts;
};

const SummaryCase kSummaryCases[] = {
    {"no status at all", R"({"spec":{"containers":[{"name":"c"}]}})", "Unknown", 0, 0},
    {"the phase", R"({"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Pending"}})", "Pending", 0, 0},
    {"status.reason over the phase",
     R"({"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Failed","reason":"TASK_LOST"}})", "TASK_LOST", 0, 0},
    {"a scheduling gate",
     R"({"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]}})",
     "SchedulingGated", 0, 0},
    {"ready and running",
     R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]},"status":{"phase":"Running","containerStatuses":[
         {"name":"a","ready":true,"restartCount":2,"state":{"running":{}}},
         {"name":"b","ready":true,"restartCount":1,"state":{"running":{}}}]}})",
     "Running", 2, 3},
    {"ready without a running state is not counted",
     R"({"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Running","containerStatuses":[
         {"name":"c","ready":true,"restartCount":0}]}})",
     "Running", 0, 0},
    {"a waiting container's reason",
     R"({"status":{"phase":"Running","containerStatuses":[
         {"name":"a","ready":true,"state":{"running":{}}},
         {"name":"b","ready":false,"restartCount":5,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}})",
     "CrashLoopBackOff", 1, 5},
    {"the first container's word wins",
     R"({"status":{"phase":"Running","containerStatuses":[
         {"name":"a","state":{"waiting":{"reason":"ImagePullBackOff"}}},
         {"name":"b","state":{"terminated":{"reason":"Error","exitCode":1}}}]}})",
     "ImagePullBackOff", 0, 0},
    {"a terminated container without a reason: its exit code",
     R"({"status":{"phase":"Failed","containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":137}}}]}})",
     "ExitCode:137", 0, 0},
    {"or its signal",
     R"({"status":{"phase":"Failed","containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":0,"signal":9}}}]}})",
     "Signal:9", 0, 0},
    {"Completed beside a running container of a ready pod",
     R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[
         {"name":"a","state":{"terminated":{"reason":"Completed","exitCode":0}}},
         {"name":"b","ready":true,"state":{"running":{}}}]}})",
     "Running", 1, 0},
    {"Completed beside a running container of a pod not ready",
     R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":"False"}],"containerStatuses":[
         {"name":"a","state":{"terminated":{"reason":"Completed","exitCode":0}}},
         {"name":"b","ready":true,"state":{"running":{}}}]}})",
     "NotReady", 1, 0},
    {"a deleted pod", R"({"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"},"status":{"phase":"Running"}})",
     "Terminating", 0, 0},
    {"a deleted pod on a lost node",
     R"({"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"},"status":{"phase":"Running","reason":"NodeLost"}})",
     "Unknown", 0, 0},
    {"a negative restart count is no count", R"({"status":{"containerStatuses":[{"name":"a","restartCount":-4}]}})",
     "Unknown", 0, 0},
};

TEST(PodTable, TheStatusCellIsWhatKubectlsPrinterSays) {
  for (const auto& c : kSummaryCases) {
    PodSummary s = pod_summary(test::json(c.pod));
    EXPECT_EQ(s.status, c.status) << c.why;
    EXPECT_EQ(s.ready, c.ready) << c.why;
    EXPECT_EQ(s.restarts, c.restarts) << c.why;
  }
  EXPECT_EQ(pod_summary(test::json(R"({"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}})")).total, 3u);
}

TEST(PodTable, ARowCarriesTheSummary) {
  std::string table = pod_table({test::json(R"({"metadata":{"name":"web"},"spec":{"containers":[{"name":"c"}]},
      "status":{"phase":"Failed","reason":"TASK_FAILED"}})")},
                                "7", 0);
  EXPECT_NE(table.find(R"("cells":["web","0/1","TASK_FAILED","0",)"), std::string::npos) << table;
}

}  // namespace
}  // namespace uvsched
