#include "handlers/ops/metrics_registry.h"

#include <gtest/gtest.h>

namespace uvsched {
namespace {

TEST(MetricsRegistry, RendersCountersGaugesAndCumulativeHistograms) {
  MetricsRegistry reg;
  auto& c = reg.counter("x_total", "Things.");
  c.add(labels({{"code", "200"}}));
  c.add(labels({{"code", "200"}}), 2);
  auto& h = reg.histogram("lat_seconds", "Latency.", {0.1, 1});
  h.observe("", 0.05);
  h.observe("", 0.5);
  h.observe("", 5);
  reg.gauge("g", "A gauge.", [](const GaugeEmit& emit) { emit(labels({{"jobid", "ab\"c"}}), 3); });

  EXPECT_EQ(reg.render(),
            "# HELP x_total Things.\n# TYPE x_total counter\nx_total{code=\"200\"} 3\n"
            "# HELP lat_seconds Latency.\n# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{le=\"0.1\"} 1\nlat_seconds_bucket{le=\"1\"} 2\nlat_seconds_bucket{le=\"+Inf\"} 3\n"
            "lat_seconds_sum 5.55\nlat_seconds_count 3\n"
            "# HELP g A gauge.\n# TYPE g gauge\ng{jobid=\"ab\\\"c\"} 3\n");
  EXPECT_EQ(c.get(labels({{"code", "200"}})), 3);
  EXPECT_EQ(h.count(""), 3u);
}

// A counter kept elsewhere (the kernel's CPU time, a server's count) is read
// at each scrape, and typed a counter, so rate() applies to it.
TEST(MetricsRegistry, ACounterReadAtScrapeTimeIsTypedACounter) {
  MetricsRegistry reg;
  double kept = 4;
  reg.counter_read("kept_total", "Kept elsewhere.", [&](const GaugeEmit& emit) { emit("", kept); });
  EXPECT_EQ(reg.render(), "# HELP kept_total Kept elsewhere.\n# TYPE kept_total counter\nkept_total 4\n");
  kept = 9;
  EXPECT_EQ(reg.counter_sum("kept_total"), 9);
}

TEST(MetricsRegistry, SumsACountersSeriesByAPartOfTheirLabels) {
  MetricsRegistry reg;
  auto& c = reg.counter("req_total", "Requests.");
  c.add(labels({{"route", "/a"}, {"code", "200"}}), 5);
  c.add(labels({{"route", "/a"}, {"code", "503"}}), 2);
  c.add(labels({{"route", "/b"}, {"code", "500"}}), 1);
  reg.histogram("req_total_like", "Not a counter.", {1}).observe("", 1);
  EXPECT_EQ(reg.counter_sum("req_total"), 8);
  EXPECT_EQ(reg.counter_sum("req_total", "code=\"5"), 3);
  EXPECT_EQ(reg.counter_sum("req_total", "route=\"/c\""), 0);
  EXPECT_EQ(reg.counter_sum("req_total_like"), 0);
  EXPECT_EQ(reg.counter_sum("absent_total"), 0);
}

TEST(MetricsRegistry, BoundaryValuesFallInTheirOwnBucket) {
  MetricsRegistry reg;
  auto& h = reg.histogram("h", "H.", {1, 2});
  h.observe("", 1);  // le="1" is inclusive
  EXPECT_NE(reg.render().find("h_bucket{le=\"1\"} 1\n"), std::string::npos);
}

}  // namespace
}  // namespace uvsched
