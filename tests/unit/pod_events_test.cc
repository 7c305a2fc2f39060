// The events a pod stands for, case by case.
#include "handlers/pods/pod_events.h"

#include <gtest/gtest.h>

#include <string>

namespace uvsched {
namespace {

JsonValue pod(const std::string& spec_and_status) {
  std::string error;
  auto v = JsonValue::parse(R"({"kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u1",)"
                            R"("resourceVersion":"7","creationTimestamp":"2026-01-01T00:00:00Z"},)" +
                                spec_and_status + "}",
                            &error);
  EXPECT_TRUE(v) << error;
  return v ? std::move(*v) : JsonValue();
}

TEST(PodEvents, APendingPodsConditionIsAFailedScheduling) {
  auto events = pod_events(pod(R"("spec":{},"status":{"conditions":[{"type":"PodScheduled","status":"False",)"
                               R"("reason":"Unschedulable","message":"2 offers, none fit: insufficient cpus",)"
                               R"("lastTransitionTime":"2026-01-01T00:00:05Z"}]})"));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].str("type"), "Warning");
  EXPECT_EQ(events[0].str("reason"), "FailedScheduling");
  EXPECT_EQ(events[0].str("message"), "2 offers, none fit: insufficient cpus");
  EXPECT_EQ(events[0].str("lastTimestamp"), "2026-01-01T00:00:05Z");
  EXPECT_EQ(event_field(events[0], "involvedObject.name"), "p");
  EXPECT_EQ(event_field(events[0], "involvedObject.namespace"), "ns");
  EXPECT_EQ(event_field(events[0], "involvedObject.uid"), "u1");
  EXPECT_EQ(event_field(events[0], "involvedObject.kind"), "Pod");
  EXPECT_EQ(event_field(events[0], "involvedObject.nope"), "");
  EXPECT_EQ(event_field(events[0], "involvedObject.apiVersion"), "v1");
  EXPECT_EQ(event_field(events[0], "source"), "uvsched") << "the source's component";
  JsonValue reported = events[0];
  reported.erase("source");
  reported.set("reportingController", JsonValue::string("elsewhere"));
  EXPECT_EQ(event_field(reported, "source"), "elsewhere") << "else the reporting controller";
}

TEST(PodEvents, ABoundPodIsScheduled) {
  auto events = pod_events(pod(R"("spec":{"nodeName":"edge-1"},"status":{"conditions":[{"type":"PodScheduled",)"
                               R"("status":"True","lastTransitionTime":"2026-01-01T00:00:02Z"}]})"));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].str("type"), "Normal");
  EXPECT_EQ(events[0].str("reason"), "Scheduled");
  EXPECT_EQ(events[0].str("message"), "Successfully assigned ns/p to edge-1");
  EXPECT_EQ(events[0].str("lastTimestamp"), "2026-01-01T00:00:02Z");
  auto bound_without_condition = pod_events(pod(R"("spec":{"nodeName":"edge-1"})"));
  ASSERT_EQ(bound_without_condition.size(), 1u);
  EXPECT_EQ(bound_without_condition[0].str("lastTimestamp"), "2026-01-01T00:00:00Z") << "its creation, then";
}

TEST(PodEvents, APodPastItsDeadlineSaysSo) {
  auto events = pod_events(
      pod(R"("spec":{"nodeName":"edge-1"},"status":{"phase":"Failed","containerStatuses":[{"name":"c","state":)"
          R"({"terminated":{"exitCode":137,"finishedAt":"2026-01-01T00:01:00Z"}}}],"reason":"DeadlineExceeded",)"
          R"("message":"Pod was active on the node longer than the specified deadline"})"));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].str("type"), "Normal");
  EXPECT_EQ(events[1].str("reason"), "DeadlineExceeded");
  EXPECT_EQ(events[1].str("message"), "Pod was active on the node longer than the specified deadline");
  EXPECT_EQ(events[1].str("lastTimestamp"), "2026-01-01T00:01:00Z");
}

TEST(PodEvents, APodTheTaintManagerDeletesSaysSo) {
  auto events = pod_events(pod(
      R"("spec":{"nodeName":"edge-1"},"status":{"phase":"Running","conditions":[{"type":"DisruptionTarget",)"
      R"("status":"True","reason":"DeletionByTaintManager","message":"Taint manager: deleting due to NoExecute taint",)"
      R"("lastTransitionTime":"2026-01-01T00:02:00Z"}]})"));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].str("type"), "Normal");
  EXPECT_EQ(events[1].str("reason"), "TaintManagerEviction");
  EXPECT_EQ(events[1].str("message"), "Marking for deletion Pod ns/p");
  EXPECT_EQ(events[1].str("lastTimestamp"), "2026-01-01T00:02:00Z");
  // A preemption's DisruptionTarget is a Preempted event, not this one.
  auto preempted = pod_events(pod(
      R"("spec":{"nodeName":"edge-1"},"status":{"conditions":[{"type":"DisruptionTarget","status":"True",)"
      R"("reason":"PreemptionByScheduler","message":"Preempted by ns/high","lastTransitionTime":"2026-01-01T00:02:00Z"}]})"));
  ASSERT_EQ(preempted.size(), 2u);
  EXPECT_EQ(preempted[1].str("reason"), "Preempted");
}

TEST(PodEvents, APodNotYetTriedHasNone) {
  EXPECT_TRUE(pod_events(pod(R"("spec":{},"status":{"phase":"Pending"})")).empty());
}

}  // namespace
}  // namespace uvsched
