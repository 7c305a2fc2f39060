// The daemon on jemalloc (Debian's libjemalloc). Its loop thread spends a
// fifth of its time in glibc's malloc and free during placement; jemalloc
// takes 10-25% off that thread's CPU per pod (bench/RESULTS.md, session 7).
#include <jemalloc/jemalloc.h>

#include <string>

#include "app/allocator.h"

// jemalloc reads its options from this symbol when it starts. One arena: the
// loop thread does nearly all the allocating, and each extra arena (by default
// four per core) would hold its own dirty pages, which the RSS goals count.
extern "C" {
const char* malloc_conf = "narenas:1";
}

namespace uvsched {

const char* allocator_name() {
  static const std::string name = [] {
    const char* version = nullptr;
    size_t size = sizeof version;
    if (mallctl("version", &version, &size, nullptr, 0) != 0 || version == nullptr) return std::string("jemalloc");
    std::string v(version);  // "5.3.0-0-g<commit>": the release is enough
    return "jemalloc " + v.substr(0, v.find('-'));
  }();
  return name.c_str();
}

}  // namespace uvsched
