// What the scheduler does to every pod in memory, side by side in one run
// (compare the ratios, not the times): reading a stored pod with the parser
// JsonValue::parse keeps against a fresh parser per call, writing it back,
// and packing it for the stores (against the pod dictionary, and against its
// content alone); and what a create adds to its parse: the typed decoding
// against the schema, validation, and the managedFields entry a create that
// names a fieldManager (kubectl's) records.
//   build/hot_path_bench [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <string>

#include "handlers/json_value.h"
#include "handlers/pods/api_schema.h"
#include "handlers/pods/field_manager.h"
#include "handlers/pods/pod_dictionary.h"
#include "handlers/pods/pod_validation.h"
#include "handlers/pods/typed_decode.h"
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

// A create's body, as kubectl run sends it.
const std::string kCreate =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"perf-1","labels":{"run":"perf-1"}},)"
    R"("spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}],)"
    R"("restartPolicy":"Always","dnsPolicy":"ClusterFirst"},"status":{}})";

void CreateParse(benchmark::State& state) {
  std::string error;
  for (auto _ : state) benchmark::DoNotOptimize(uvsched::JsonValue::parse(kCreate, &error));
}
BENCHMARK(CreateParse);

void CreateTypedDecode(benchmark::State& state) {
  std::string error;
  auto pod = uvsched::JsonValue::parse(kCreate, &error);
  const uvsched::SchemaType& type = *uvsched::schema_type("io.k8s.api.core.v1.Pod");
  for (auto _ : state) benchmark::DoNotOptimize(uvsched::decode_typed(*pod, type));
}
BENCHMARK(CreateTypedDecode);

void CreateValidate(benchmark::State& state) {
  std::string error;
  auto pod = uvsched::JsonValue::parse(kCreate, &error);
  for (auto _ : state) benchmark::DoNotOptimize(uvsched::validate_pod(*pod));
}
BENCHMARK(CreateValidate);

void CreateManagedFields(benchmark::State& state) {
  std::string error;
  auto pod = uvsched::JsonValue::parse(kCreate, &error);
  for (auto _ : state) {
    uvsched::JsonValue copy = *pod;
    uvsched::record_update(nullptr, copy, "kubectl-run", "2026-12-01T00:00:00Z");
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(CreateManagedFields);

void CreateCopyOnly(benchmark::State& state) {  // the copy CreateManagedFields makes, alone
  std::string error;
  auto pod = uvsched::JsonValue::parse(kCreate, &error);
  for (auto _ : state) {
    uvsched::JsonValue copy = *pod;
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(CreateCopyOnly);

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
