// Counters, histograms and scrape-time gauges, rendered as Prometheus text
// exposition format 0.0.4. Label sets are given pre-rendered ("route=\"/x\"")
// via labels(); families render in registration order, series sorted.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace uvsched {

// Renders {k1="v1",k2="v2"} pairs into the inside of the braces, escaped.
std::string labels(std::initializer_list<std::pair<std::string_view, std::string_view>> pairs);

class CounterFamily {
 public:
  void add(const std::string& label_set, double by = 1) { series_[label_set] += by; }
  double get(const std::string& label_set) const;
  // A stable reference to one series, for callers that cache it.
  double& series(const std::string& label_set) { return series_[label_set]; }

 private:
  friend class MetricsRegistry;
  std::map<std::string, double> series_;
};

class HistogramFamily {
 public:
  struct Series {
    std::vector<uint64_t> buckets;  // non-cumulative; rendered cumulative
    double sum = 0;
    uint64_t count = 0;
  };

  explicit HistogramFamily(std::vector<double> bounds) : bounds_(std::move(bounds)) {}
  void observe(const std::string& label_set, double value) { observe(series(label_set), value); }
  void observe(Series& s, double value);
  uint64_t count(const std::string& label_set) const;
  // A stable reference to one series, for callers that cache it.
  Series& series(const std::string& label_set);

 private:
  friend class MetricsRegistry;
  std::vector<double> bounds_;
  std::map<std::string, Series> series_;
};

// Receives the series of a gauge at scrape time.
using GaugeEmit = std::function<void(const std::string& label_set, double value)>;
using GaugeCollector = std::function<void(const GaugeEmit&)>;

class MetricsRegistry {
 public:
  CounterFamily& counter(std::string name, std::string help);
  HistogramFamily& histogram(std::string name, std::string help, std::vector<double> bounds);
  void gauge(std::string name, std::string help, GaugeCollector collect);
  // A counter kept elsewhere (by the kernel, a server), read at scrape time.
  void counter_read(std::string name, std::string help, GaugeCollector collect);

  std::string render() const;
  // The sum of a counter's series whose label set contains `label_part`
  // ("" for all of them): the figures the status page shows. 0 for no such counter.
  double counter_sum(std::string_view name, std::string_view label_part = {}) const;

 private:
  struct Family {
    std::string name, help, type;
    std::unique_ptr<CounterFamily> counter;
    std::unique_ptr<HistogramFamily> histogram;
    GaugeCollector gauge;
  };
  std::vector<Family> families_;
};

}  // namespace uvsched
