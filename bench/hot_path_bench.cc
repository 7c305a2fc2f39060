// What the scheduler does to every pod in memory, side by side in one run
// (compare the ratios, not the times): reading a stored pod with the parser
// JsonValue::parse keeps against a fresh parser per call, writing it back,
// and packing it for the stores (against the pod dictionary, and against its
// content alone).
//   build/hot_path_bench [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <string>

#include "handlers/json_value.h"
#include "handlers/pods/pod_dictionary.h"
#include "storage/value_codec.h"

namespace {

// A bound pod, as the scheduler stores it.
const std::string kPod =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"5","name":"perf-1","namespace":"default",)"
    R"("uid":"8c1101fd-5101-4c43-8502-4447cc21133c","creationTimestamp":"2026-11-30T06:13:09Z",)"
    R"("annotations":{"uvsched.io/bindingHost":"sim-17","uvsched.io/taskId":"pod.default.perf-1.0a1b2c3d",)"
    R"("uvsched.io/agentId":"sim-17","uvsched.io/offerId":"sim-17-o-42"}},)"
    R"("spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}],)"
    R"("restartPolicy":"Always","dnsPolicy":"ClusterFirst","terminationGracePeriodSeconds":30,)"
    R"("schedulerName":"uvsched","nodeName":"sim-17"},"status":{"phase":"Pending","conditions":[{"type":)"
    R"("PodScheduled","status":"True","lastTransitionTime":"2026-11-30T06:13:09Z"}]}})";

void ParseReusedParser(benchmark::State& state) {
  std::string error;
  for (auto _ : state) benchmark::DoNotOptimize(uvsched::JsonValue::parse(kPod, &error));
}
BENCHMARK(ParseReusedParser);

// How JsonValue::parse read until session 5: a parser (and its buffers) per call.
void ParseFreshParser(benchmark::State& state) {
  for (auto _ : state) {
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(kPod.data(), kPod.size()).get(doc) != simdjson::SUCCESS) state.SkipWithError("parse");
    benchmark::DoNotOptimize(uvsched::JsonValue::from(doc));
  }
}
BENCHMARK(ParseFreshParser);

void Dump(benchmark::State& state) {
  std::string error;
  auto pod = uvsched::JsonValue::parse(kPod, &error);
  for (auto _ : state) benchmark::DoNotOptimize(pod->dump());
}
BENCHMARK(Dump);

// Packing and unpacking against the pod dictionary, and against its content
// alone (the dictionary until session 9: zstd then builds a Huffman table for
// every value). The packed size is reported as a counter.
void Pack(benchmark::State& state, std::string dictionary) {
  uvsched::ValueCodec codec(std::move(dictionary));
  std::string packed;
  for (auto _ : state) benchmark::DoNotOptimize(packed = codec.pack(kPod));
  state.counters["packed_bytes"] = static_cast<double>(packed.size());
}
BENCHMARK_CAPTURE(Pack, dictionary, uvsched::pod_value_dictionary());
BENCHMARK_CAPTURE(Pack, content_only, uvsched::pod_value_dictionary_content());

void Unpack(benchmark::State& state, std::string dictionary) {
  uvsched::ValueCodec codec(std::move(dictionary));
  std::string packed = codec.pack(kPod), value;
  for (auto _ : state) {
    if (!codec.unpack(packed, &value)) state.SkipWithError("unpack");
    benchmark::DoNotOptimize(value);
  }
}
BENCHMARK_CAPTURE(Unpack, dictionary, uvsched::pod_value_dictionary());
BENCHMARK_CAPTURE(Unpack, content_only, uvsched::pod_value_dictionary_content());

}  // namespace

BENCHMARK_MAIN();
