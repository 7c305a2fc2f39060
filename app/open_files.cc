#include "app/open_files.h"

#include <algorithm>
#include <cassert>
#include <fstream>

namespace uvsched {
namespace {

// The kernel's ceiling for RLIMIT_NOFILE: an unlimited hard limit cannot be
// the soft one. Read once, while the daemon starts.
uint64_t kernel_open_files_ceiling() {
  std::ifstream in("/proc/sys/fs/nr_open");
  uint64_t n = 0;
  if (in >> n && n > 0) return n;
  return 1u << 20;  // the kernel's default
}

}  // namespace

OpenFilesLimit open_files_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return {};
  return {static_cast<uint64_t>(r.rlim_cur), static_cast<uint64_t>(r.rlim_max), 0};
}

OpenFilesLimit raise_open_files_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return {};
  rlim_t target = r.rlim_max == RLIM_INFINITY ? static_cast<rlim_t>(kernel_open_files_ceiling()) : r.rlim_max;
  if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < target) {
    rlimit raised = r;
    raised.rlim_cur = target;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      return {static_cast<uint64_t>(target), static_cast<uint64_t>(r.rlim_max), static_cast<uint64_t>(r.rlim_cur)};
    }
  }
  return {static_cast<uint64_t>(r.rlim_cur), static_cast<uint64_t>(r.rlim_max), 0};
}

uint64_t open_files_kept_back(uint64_t limit, uint64_t calls_out) {
  return std::min(calls_out + 64, std::max<uint64_t>(64, limit / 2));
}

size_t connections_within(uint64_t limit, size_t listeners, const ServerLimits& limits, uint64_t calls_out) {
  assert(listeners > 0);
  uint64_t kept = open_files_kept_back(limit, calls_out);
  uint64_t for_listeners = limit > kept ? limit - kept : 0;
  uint64_t each = for_listeners / listeners;
  uint64_t past = static_cast<uint64_t>(limits.over_limit_reserve) + 1;
  uint64_t fits = each > past ? each - past : 1;
  return static_cast<size_t>(std::min<uint64_t>(limits.max_connections, std::max<uint64_t>(fits, 1)));
}

}  // namespace uvsched
