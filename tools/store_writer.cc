// A write storm against a store: keeps `--inflight` puts outstanding, prints
// "ack KEY" for every acknowledged put (flushed at once, so a parent that
// kills this process knows exactly what was acknowledged), then a summary.
//   store_writer --store embedded:DIR --count 100000 --inflight 128 --value-bytes 256
#include <uv.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "reactor/log.h"
#include "reactor/loop_clock.h"
#include "storage/store_factory.h"

namespace {

struct Options {
  std::string store = "embedded:./writer-data";
  long count = 10000;
  long inflight = 128;
  long value_bytes = 256;
  std::string prefix = "/bench/";
  bool print_acks = false;
};

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--print-acks") {
      o->print_acks = true;
      continue;
    }
    if ((v = next()) == nullptr) return false;
    if (a == "--store")
      o->store = v;
    else if (a == "--count")
      o->count = std::atol(v);
    else if (a == "--inflight")
      o->inflight = std::atol(v);
    else if (a == "--value-bytes")
      o->value_bytes = std::atol(v);
    else if (a == "--prefix")
      o->prefix = v;
    else
      return false;
  }
  return o->count > 0 && o->inflight > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    fprintf(stderr,
            "usage: store_writer --store SPEC [--count N] [--inflight N] [--value-bytes N] [--prefix P] "
            "[--print-acks]\n");
    return 2;
  }
  uvsched::log_configure(uvsched::LogLevel::kWarn, uvsched::LogFormat::kText);
  uv_loop_t* loop = uv_default_loop();
  uvsched::LoopClock clock(loop);
  std::string error;
  auto store = uvsched::open_store(loop, clock, o.store, {}, &error);
  if (!store) {
    fprintf(stderr, "store_writer: %s\n", error.c_str());
    return 1;
  }
  // Bytes that do not compress: the stores pack values, and a run of one
  // letter would shrink to a few bytes and measure the codec, not the store.
  std::string value;
  uint32_t x = 2463534242u;
  for (long i = 0; i < o.value_bytes; ++i) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    value.push_back(static_cast<char>(x & 0xff));
  }
  long issued = 0, acked = 0, failed = 0;
  uint64_t start = uv_hrtime();
  std::function<void()> issue = [&] {
    std::string key = o.prefix + std::to_string(issued++);
    store->put(key, value, 0, [&, key](uvsched::WriteResult&& r) {
      if (!r.status.ok()) {
        ++failed;
      } else {
        ++acked;
        if (o.print_acks) {
          printf("ack %s\n", key.c_str());
          fflush(stdout);
        }
      }
      if (issued < o.count) issue();
      if (acked + failed == o.count) store->close([] {});
    });
  };
  for (long i = 0; i < o.inflight && issued < o.count; ++i) issue();
  uv_run(loop, UV_RUN_DEFAULT);
  double secs = static_cast<double>(uv_hrtime() - start) / 1e9;
  printf("done acked=%ld failed=%ld seconds=%.3f puts_per_second=%.0f\n", acked, failed, secs, acked / secs);
  return failed == 0 ? 0 : 1;
}
