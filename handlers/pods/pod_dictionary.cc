#include "handlers/pods/pod_dictionary.h"

namespace uvsched {

namespace {

// zstd finds matches anywhere in a dictionary but nearer ones cost fewer
// bits, so the most common shape comes last.
constexpr char kPendingR1[] =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
    R"("uid":"00000000-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z",)"
    R"("labels":{"app":"web"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25",)"
    R"("ports":[{"containerPort":80,"hostPort":8080,"protocol":"TCP"}],)"
    R"("resources":{"requests":{"cpu":"500m","memory":"128Mi"},"limits":{"cpu":"1","memory":"256Mi"}}}],)"
    R"("nodeSelector":{"zone":"edge"},"restartPolicy":"Never","dnsPolicy":"ClusterFirst",)"
    R"("terminationGracePeriodSeconds":30,"schedulerName":"uvsched"},"status":{"phase":"Pending",)"
    R"("conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable",)"
    R"("message":"no offer fits: 0 of 3 offers have enough cpus","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})";

// Running as an agent that reports no pod status leaves it: bound, the phase
// alone changed.
constexpr char kRunningR1[] =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"pod-1","namespace":"default",)"
    R"("uid":"00000000-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z",)"
    R"("annotations":{"uvsched.io/bindingHost":"node-1","uvsched.io/taskId":"pod.default.pod-1.000000000000",)"
    R"("uvsched.io/agentId":"node-1-0000000000000","uvsched.io/offerId":"node-1-o1"}},)"
    R"("spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}],)"
    R"("restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,)"
    R"("schedulerName":"uvsched","nodeName":"node-1"},"status":{"phase":"Running","conditions":[)"
    R"({"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})";

// Running as an agent that reports the pod's status (TASK_RUNNING's data)
// leaves it: every container ready, and the conditions that say so. Most
// pods at rest look like this.
constexpr char kRunningReadyR3[] =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"pod-2","namespace":"default",)"
    R"("uid":"00000000-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z",)"
    R"("annotations":{"uvsched.io/bindingHost":"node-2","uvsched.io/taskId":"pod.default.pod-2.000000000000",)"
    R"("uvsched.io/agentId":"node-2-0000000000000","uvsched.io/offerId":"node-2-o2"}},)"
    R"("spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}],)"
    R"("restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,)"
    R"("schedulerName":"uvsched","nodeName":"node-2"},"status":{"phase":"Running","conditions":[)"
    R"({"type":"Initialized","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"},)"
    R"({"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"},)"
    R"({"type":"ContainersReady","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"},)"
    R"({"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"}],)"
    R"("containerStatuses":[{"name":"c","image":"i","imageID":"","ready":true,"started":true,"restartCount":0,)"
    R"("state":{"running":{"startedAt":"2026-01-01T00:00:01Z"}}}]}})";

// Today's pods (2026-12-07): the fields added since the content above was
// written (spec.priority and preemptionPolicy, the launched images' annotation,
// status.startTime, kube-scheduler's wording of why a pod waits) cost every
// stored pod tens of bytes of literals against it.
constexpr char kPending[] =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","labels":{"app":"web"},"namespace":"default",)"
    R"("uid":"00000000-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z"},)"
    R"("spec":{"containers":[{"name":"main","image":"nginx:1.25",)"
    R"("ports":[{"containerPort":80,"hostPort":8080,"protocol":"TCP"}],)"
    R"("resources":{"requests":{"cpu":"500m","memory":"128Mi"},"limits":{"cpu":"1","memory":"256Mi"}}}],)"
    R"("nodeSelector":{"zone":"edge"},"priority":0,"preemptionPolicy":"PreemptLowerPriority","restartPolicy":"Never",)"
    R"("dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,"schedulerName":"uvsched"},"status":{"phase":"Pending",)"
    R"("conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable",)"
    R"("message":"0/3 nodes are available: 3 Insufficient cpu. pod requests cpu 0.5, memory 128Mi; the largest free )"
    R"(offer is cpu 0.25, memory 1024Mi on node-1. Queue position 1 of 1 waiting when this was written )"
    R"((GET /v1/queue has the order now).","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})";

// Bound and running, as an agent that reports no pod status leaves it.
constexpr char kRunning[] =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"pod-1","namespace":"default",)"
    R"("uid":"00000000-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z",)"
    R"("annotations":{"uvsched.io/bindingHost":"node-1","uvsched.io/taskId":"pod.default.pod-1.000000000000",)"
    R"("uvsched.io/agentId":"node-1-0000000000000","uvsched.io/offerId":"node-1-o1",)"
    R"("uvsched.io/launchedImages":"[\"i\"]"}},)"
    R"("spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}],)"
    R"("priority":0,"preemptionPolicy":"PreemptLowerPriority","restartPolicy":"Always","dnsPolicy":"ClusterFirst",)"
    R"("terminationGracePeriodSeconds":30,"schedulerName":"uvsched","nodeName":"node-1"},"status":{"phase":"Running",)"
    R"("startTime":"2026-01-01T00:00:00Z","conditions":[)"
    R"({"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})";

// Running as an agent that reports the pod's status (TASK_RUNNING's data)
// leaves it: every container ready, and the conditions that say so. Most
// pods at rest look like this.
constexpr char kRunningReady[] =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"pod-2","namespace":"default",)"
    R"("uid":"00000000-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z",)"
    R"("annotations":{"uvsched.io/bindingHost":"node-2","uvsched.io/taskId":"pod.default.pod-2.000000000000",)"
    R"("uvsched.io/agentId":"node-2-0000000000000","uvsched.io/offerId":"node-2-o2",)"
    R"("uvsched.io/launchedImages":"[\"i\"]"}},)"
    R"("spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}],)"
    R"("priority":0,"preemptionPolicy":"PreemptLowerPriority","restartPolicy":"Always","dnsPolicy":"ClusterFirst",)"
    R"("terminationGracePeriodSeconds":30,"schedulerName":"uvsched","nodeName":"node-2"},"status":{"phase":"Running",)"
    R"("startTime":"2026-01-01T00:00:01Z","conditions":[)"
    R"({"type":"Initialized","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"},)"
    R"({"type":"Ready","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"},)"
    R"({"type":"ContainersReady","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"},)"
    R"({"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:01Z"}],)"
    R"("containerStatuses":[{"name":"c","image":"i","imageID":"","ready":true,"started":true,"restartCount":0,)"
    R"("state":{"running":{"startedAt":"2026-01-01T00:00:01Z"}}}]}})";

// zstd's entropy tables for pods (made by tools/pod_dictionary_gen from the
// content above: regenerate when it changes). With them a pod packs ~3 times
// faster and a little smaller: without, zstd builds a Huffman table for every
// value, which was most of a pack's time.
constexpr char kEntropyHeader[] =
    "\x37\xa4\x30\xec\x62\x6f\x97\x71\x28\x10\xd8\x41\x92\x0e\x0c\xc3"
    "\x30\x0c\x83\xcb\x86\x0d\xb6\x21\xc1\xee\x46\x88\xb5\x96\x6d\xb9"
    "\x65\x3f\x44\xea\x08\xc4\x96\x32\xc9\x94\x52\x4a\xf3\x87\x18\x0e"
    "\x03\x43\x03\x00\x00\x00\x06\xcb\x04\x00\x49\xe5\x01\x00\x04\x80"
    "\x82\x87\x8d\x10\x86\x89\x8b\x09\x00\x84\x89\x21\x0f\x85\x61\x80"
    "\x40\x30\x0a\x87\x01\x61\xd0\x50\x00\x14\x83\x01\x50\x00\x12\x00"
    "\x79\x3a\xc5\x51\x88\x01\x00\x00\xb4\x4f\x06\x86\x04\x99\x48\x49"
    "\x92\x00\x30\x1a\x43\x00\x00\x0f\x00\x00\x00\x00\x00\x00\x01\x00"
    "\x00\x00\x04\x00\x00\x00\x08\x00\x00\x00";

// The entropy tables of the release before (for kPendingR1, kRunningR1, kRunningReadyR3).
constexpr char kEntropyHeaderR3[] =
    "\x37\xa4\x30\xec\x7a\x0c\xe8\x1f\x29\x10\xd0\x92\xa4\x03\xff\xff"
    "\xff\xff\xff\x03\x01\xb2\xb9\x6d\xe3\x93\x4f\x88\xb5\x36\x6f\xb9"
    "\x77\x80\xb3\x5e\x18\x19\x6c\xcb\x94\x64\x4a\x29\x25\x9a\x70\x55"
    "\x75\x04\x43\x03\x00\x00\x00\x87\x86\x65\x70\xd9\xe6\x00\x00\x04"
    "\x20\x43\x86\x92\x13\x85\x08\x82\x05\x80\x87\x8c\x9d\x11\x01\x00"
    "\x00\x50\x28\x06\x00\x42\x61\x80\x78\x18\x1a\x04\x03\xc2\x21\x00"
    "\x84\x65\x1a\x0d\x48\x0d\x01\x00\x00\xd4\x2e\xc4\xe6\x44\x69\x5c"
    "\xa4\x45\x01\x00\xa2\x49\x04\x00\x20\x01\x00\x00\x00\x00\x00\x01"
    "\x00\x00\x00\x04\x00\x00\x00\x08\x00\x00\x00";

// The release before: these tables, over the content without kRunningReady.
constexpr char kEntropyHeaderR2[] =
    "\x37\xa4\x30\xec\x61\x17\xda\x76\x28\x10\xd8\x41\x92\x0e\x0c\xc3"
    "\x30\x0c\x83\xcb\xa6\xe1\x86\x08\x4b\x2c\x21\xd6\x5a\xb6\xe5\x96"
    "\x7d\x15\x21\x75\x04\x62\x4b\x99\x64\x4a\x29\xa5\xf9\xe3\x06\x2f"
    "\x01\x53\x03\x00\x00\x00\x87\xc5\xc5\x60\xc5\x03\x00\x00\x04\x00"
    "\x43\x85\x0a\x14\x85\x09\x02\x06\x80\x01\x08\x20\x12\x01\x00\x80"
    "\x20\x3c\x04\x09\x00\x20\x71\x90\x00\x1a\x04\x02\x42\x33\x00\x80"
    "\x65\xd2\x08\x48\xab\x01\x00\x00\x24\x4d\x83\xc8\x45\xf2\xd8\x4c"
    "\xa4\x02\x00\x88\x67\x29\x00\x80\x09\x00\x00\x00\x00\x00\x00\x01"
    "\x00\x00\x00\x04\x00\x00\x00\x08\x00\x00\x00";

}  // namespace

std::string pod_value_dictionary_content() { return std::string(kPending) + kRunning + kRunningReady; }

std::string pod_value_dictionary() {
  return std::string(kEntropyHeader, sizeof kEntropyHeader - 1) + pod_value_dictionary_content();
}

std::vector<std::string> pod_value_dictionaries_before() {
  // The release before this one: tables and the R1 content with kRunningReadyR3;
  // the two before it, the R1 content without it, the first with no tables.
  std::string r1 = std::string(kPendingR1) + kRunningR1;
  return {std::string(kEntropyHeaderR3, sizeof kEntropyHeaderR3 - 1) + r1 + kRunningReadyR3,
          std::string(kEntropyHeaderR2, sizeof kEntropyHeaderR2 - 1) + r1, r1};
}

}  // namespace uvsched
