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
  struct Case {
    uint64_t limit;
    size_t listeners;
    const ServerLimits& limits;
    size_t want;
  } cases[] = {
      {524'288, 1, defaults, 10'000},  // Debian's hard limit for services and logins: as configured
      {524'288, 2, defaults, 10'000},
      {1'024, 1, defaults, 1'024 - 512 - 65},  // a login shell's soft limit, had it not been raised
      {1'024, 2, defaults, 256 - 65},          // --ml-listen: two listeners share the half
      {1'024, 1, no_reserve, 511},
      {256, 1, defaults, 128 - 65},
      {64, 1, defaults, 1},  // nothing left after what is kept back: still one
      {0, 1, defaults, 1},
      {20'000, 1, defaults, 9'935},
      {30'000, 1, defaults, 10'000},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(connections_within(c.limit, c.listeners, c.limits), c.want)
        << "limit " << c.limit << ", " << c.listeners << " listeners";
    // What they hold, with what is kept back and held past the maximum, fits.
    size_t fits = connections_within(c.limit, c.listeners, c.limits);
    if (fits > 1) {
      EXPECT_LE(c.listeners * (fits + c.limits.over_limit_reserve + 1) + open_files_kept_back(c.limit), c.limit);
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
