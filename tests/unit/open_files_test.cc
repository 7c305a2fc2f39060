#include "app/open_files.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace uvsched {
namespace {

// A listener's connections must run out before the process's descriptors do:
// past --max-connections a client is told 503, past the descriptors it is
// closed unanswered.
TEST(OpenFiles, ConnectionsStopShortOfTheDescriptors) {
  ServerLimits defaults;  // 10,000 connections, 64 held past them
  ServerLimits no_reserve;
  no_reserve.over_limit_reserve = 0;
  constexpr uint64_t kEmbedded = 3 * 1024;      // the PS, its metrics and the router
  constexpr uint64_t kEtcd = kEmbedded + 4352;  // and etcd's request and watch pools
  struct Case {
    uint64_t limit;
    size_t listeners;
    const ServerLimits& limits;
    uint64_t calls_out;
    size_t want;
  } cases[] = {
      {524'288, 1, defaults, kEtcd, 10'000},  // Debian's hard limit for services and logins: as configured
      {524'288, 2, defaults, kEtcd, 10'000},
      {65'536, 2, defaults, kEtcd, 10'000},  // the systemd unit's
      {20'000, 1, defaults, kEmbedded, 10'000},
      {20'000, 1, defaults, kEtcd, 10'000},
      {15'000, 1, defaults, kEtcd, 15'000 - 7'488 - 65},  // kept back: what the calls out may hold, and 64
      {20'000, 2, defaults, kEtcd, 6'256 - 65},
      {1'024, 1, defaults, kEmbedded, 1'024 - 512 - 65},  // a login shell's soft limit: half kept back
      {1'024, 2, defaults, kEmbedded, 256 - 65},          // --ml-listen: two listeners share the rest
      {1'024, 1, no_reserve, kEmbedded, 511},
      {1'024, 1, defaults, 0, 1'024 - 64 - 65},  // nothing called: only the 64
      {256, 1, defaults, kEmbedded, 128 - 65},
      {64, 1, defaults, kEmbedded, 1},  // nothing left after what is kept back: still one
      {0, 1, defaults, kEmbedded, 1},
  };
  for (const auto& c : cases) {
    size_t fits = connections_within(c.limit, c.listeners, c.limits, c.calls_out);
    EXPECT_EQ(fits, c.want) << "limit " << c.limit << ", " << c.listeners << " listeners, " << c.calls_out << " out";
    // What they hold, with what is kept back and held past the maximum, fits.
    if (fits > 1) {
      EXPECT_LE(c.listeners * (fits + c.limits.over_limit_reserve + 1) + open_files_kept_back(c.limit, c.calls_out),
                c.limit);
    }
  }
}

TEST(OpenFiles, TheSoftLimitIsRaisedToTheHardOne) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  if (before.rlim_max < 512) GTEST_SKIP() << "the hard limit is " << before.rlim_max;
  rlimit lowered = before;
  lowered.rlim_cur = 256;  // a soft limit can always be lowered, and raised again up to the hard one
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  OpenFilesLimit got = raise_open_files_limit();
  EXPECT_EQ(got.raised_from, 256u);
  EXPECT_EQ(got.soft, before.rlim_max == RLIM_INFINITY ? got.soft : before.rlim_max);
  EXPECT_EQ(open_files_limit().soft, got.soft);
  OpenFilesLimit again = raise_open_files_limit();
  EXPECT_EQ(again.raised_from, 0u) << "already at the hard limit: nothing to raise";
  EXPECT_EQ(again.soft, got.soft);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &before), 0);
}

}  // namespace
}  // namespace uvsched
