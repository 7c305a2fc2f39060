#include "handlers/pods/pod_dictionary.h"

namespace uvsched {

std::string pod_value_dictionary() {
  // zstd finds matches anywhere in a dictionary but nearer ones cost fewer
  // bits, so the most common shape (a bound, running pod) comes last.
  static const char kPending[] =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"default",)"
      R"("uid":"00000000-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z",)"
      R"("labels":{"app":"web"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25",)"
      R"("ports":[{"containerPort":80,"hostPort":8080,"protocol":"TCP"}],)"
      R"("resources":{"requests":{"cpu":"500m","memory":"128Mi"},"limits":{"cpu":"1","memory":"256Mi"}}}],)"
      R"("nodeSelector":{"zone":"edge"},"restartPolicy":"Never","dnsPolicy":"ClusterFirst",)"
      R"("terminationGracePeriodSeconds":30,"schedulerName":"uvsched"},"status":{"phase":"Pending",)"
      R"("conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable",)"
      R"("message":"no offer fits: 0 of 3 offers have enough cpus","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})";
  static const char kRunning[] =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"pod-1","namespace":"default",)"
      R"("uid":"00000000-0000-4000-8000-000000000000","creationTimestamp":"2026-01-01T00:00:00Z",)"
      R"("annotations":{"uvsched.io/bindingHost":"node-1","uvsched.io/taskId":"pod.default.pod-1.000000000000",)"
      R"("uvsched.io/agentId":"node-1-0000000000000","uvsched.io/offerId":"node-1-o1"}},)"
      R"("spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}],)"
      R"("restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,)"
      R"("schedulerName":"uvsched","nodeName":"node-1"},"status":{"phase":"Running","conditions":[)"
      R"({"type":"PodScheduled","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})";
  return std::string(kPending) + kRunning;
}

}  // namespace uvsched
