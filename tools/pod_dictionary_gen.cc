// Prints the entropy header of the pod value dictionary
// (handlers/pods/pod_dictionary.cc) for its current content: zstd's tables
// for literals, match lengths and offsets as they come out of pods like the
// samples below, packed against that content. Run it when the content
// changes and paste its output over kEntropyHeader:
//   build/pod_dictionary_gen
// The header is kept in the source, not made at start, because values packed
// for etcd name their dictionary by a hash of its bytes: a zstd release that
// computed the tables differently must not turn them unreadable.
#include <zdict.h>

#include <cstdio>
#include <string>
#include <vector>

#include "handlers/pods/pod_dictionary.h"
#include "storage/value_codec.h"

namespace {

// Pods as uvsched stores them in their life: created by kubectl or a client
// (labels, ports, limits, a selector or none), waiting, bound, running, done.
std::vector<std::string> sample_pods() {
  std::vector<std::string> out;
  const char* kNames[] = {"web", "api-7f9c", "perf", "train-job", "db", "cache-0", "worker-12", "x"};
  const char* kPhases[] = {"Pending", "Running", "Succeeded", "Failed"};
  for (int i = 0; i < 64; ++i) {
    std::string n = std::string(kNames[i % 8]) + "-" + std::to_string(i * 7919 % 100000);
    std::string ns = i % 3 == 0 ? "default" : (i % 3 == 1 ? "ml" : "team-a");
    std::string host = "node-" + std::to_string(i * 31 % 5000);
    char uid[40];
    std::snprintf(uid, sizeof uid, "%08x-%04x-4%03x-8%03x-%012x", i * 2654435761u, i * 40503 & 0xffff, i * 7 & 0xfff,
                  i * 13 & 0xfff, i * 97531);
    char ts[32];
    std::snprintf(ts, sizeof ts, "2026-%02d-%02dT%02d:%02d:%02dZ", 1 + i % 12, 1 + i % 28, i % 24, i * 7 % 60,
                  i * 11 % 60);
    std::string meta = R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":")" + n + R"(","namespace":")" + ns +
                       R"(","uid":")" + uid + R"(","creationTimestamp":")" + ts + "\"";
    if (i % 2) meta += R"(,"labels":{"app":")" + std::string(kNames[i % 8]) + "\"}";
    bool bound = i % 4 != 0;
    if (bound) {
      meta += R"(,"annotations":{"uvsched.io/bindingHost":")" + host + R"(","uvsched.io/taskId":"pod.)" + ns + "." + n +
              "." + std::to_string(100000000000 + i) + R"(","uvsched.io/agentId":")" + host + "-" +
              std::to_string(1764000000000 + i * 977) + R"(","uvsched.io/offerId":")" + host + "-o" +
              std::to_string(i) + R"(","uvsched.io/launchedImages":"[\")" + (i % 2 ? "nginx:1.25" : "i") + R"(\"]"})";
    }
    std::string spec = R"(},"spec":{"containers":[{"name":"c)" + std::to_string(i % 3) + R"(","image":")" +
                       (i % 2 ? "nginx:1.25" : "i") + "\"";
    if (i % 5 == 1)
      spec += R"(,"ports":[{"containerPort":80,"hostPort":)" + std::to_string(8000 + i) + R"(,"protocol":"TCP"}])";
    spec += R"(,"resources":{"requests":{"cpu":")" + std::to_string(100 * (1 + i % 5)) + R"(m","memory":")" +
            std::to_string(64 << (i % 3)) + "Mi\"}";
    if (i % 3 == 2) spec += R"(,"limits":{"cpu":"1","memory":"256Mi"})";
    spec += "}}]";
    if (i % 7 == 3) spec += R"(,"nodeSelector":{"zone":"edge"})";
    spec +=
        R"(,"priority":)" + std::string(i % 9 == 4 ? "1000" : "0") + R"(,"preemptionPolicy":"PreemptLowerPriority")";
    spec += std::string(R"(,"restartPolicy":")") + (i % 4 == 1 ? "Never" : "Always") +
            R"(","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,"schedulerName":"uvsched")";
    if (bound) spec += R"(,"nodeName":")" + host + "\"";
    std::string phase = bound ? kPhases[i % 4] : "Pending";
    if (phase == "Running" && i % 8 != 1) {
      // As an agent that reports the pod's status (TASK_RUNNING's data) leaves it.
      std::string container = "c" + std::to_string(i % 3);
      std::string status = R"(},"status":{"phase":"Running","startTime":")" + std::string(ts) + R"(","conditions":[)";
      for (const char* type : {"Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
        status += std::string(R"({"type":")") + type + R"(","status":"True","lastTransitionTime":")" + ts + "\"},";
      }
      status.back() = ']';
      status += R"(,"containerStatuses":[{"name":")" + container + R"(","image":")" + (i % 2 ? "nginx:1.25" : "i") +
                R"(","imageID":"","ready":true,"started":true,"restartCount":0,"state":{"running":{"startedAt":")" +
                ts + "\"}}}]}}";
      out.push_back(meta + spec + status);
      continue;
    }
    std::string status = R"(},"status":{"phase":")" + phase + "\"";
    if (bound) status += R"(,"startTime":")" + std::string(ts) + "\"";
    status += R"(,"conditions":[{"type":"PodScheduled",)";
    status += bound ? R"("status":"True",)"
                    : R"("status":"False","reason":"Unschedulable","message":"0/)" + std::to_string(i * 13 % 5000) +
                          R"( nodes are available: )" + std::to_string(i * 7 % 5000) +
                          R"( Insufficient cpu. pod requests cpu 0.5, memory 128Mi; there are no free offers. Queue )"
                          R"(position 1 of )" +
                          std::to_string(1 + i % 40) +
                          R"( waiting when this was written (GET /v1/queue has the order now).",)";
    status += R"("lastTransitionTime":")" + std::string(ts) + "\"}]}}";
    out.push_back(meta + spec + status);
  }
  return out;
}

}  // namespace

int main() {
  std::string content = uvsched::pod_value_dictionary_content();
  std::string samples;
  std::vector<size_t> sizes;
  for (const std::string& pod : sample_pods()) {
    samples += pod;
    sizes.push_back(pod.size());
  }
  std::string dict(content.size() + 4096, '\0');
  ZDICT_params_t params{};
  params.compressionLevel = uvsched::ValueCodec::kLevel;
  size_t n = ZDICT_finalizeDictionary(dict.data(), dict.size(), content.data(), content.size(), samples.data(),
                                      sizes.data(), static_cast<unsigned>(sizes.size()), params);
  if (ZDICT_isError(n)) {
    std::fprintf(stderr, "pod_dictionary_gen: %s\n", ZDICT_getErrorName(n));
    return 1;
  }
  size_t header = n - content.size();
  if (dict.compare(header, content.size(), content) != 0) {
    std::fprintf(stderr, "pod_dictionary_gen: the dictionary does not end with its content\n");
    return 1;
  }
  // As a C string literal, 16 bytes a line.
  for (size_t i = 0; i < header; ++i) {
    if (i % 16 == 0) std::printf(i ? "\"\n    \"" : "    \"");
    std::printf("\\x%02x", static_cast<unsigned char>(dict[i]));
  }
  std::printf("\"\n");
  std::fprintf(stderr, "header %zu B, content %zu B\n", header, content.size());
  return 0;
}
