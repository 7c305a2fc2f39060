#include "handlers/ops/metrics_registry.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace uvsched {
namespace {

void append_value(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest form that reads back exactly
    (void)ec;
    out.append(buf, end);
  }
}

void append_sample(std::string& out, std::string_view name, std::string_view label_set, double v) {
  out += name;
  if (!label_set.empty()) {
    out += '{';
    out += label_set;
    out += '}';
  }
  out += ' ';
  append_value(out, v);
  out += '\n';
}

std::string join_labels(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return a + "," + b;
}

}  // namespace

std::string labels(std::initializer_list<std::pair<std::string_view, std::string_view>> pairs) {
  std::string out;
  for (const auto& [k, v] : pairs) {
    if (!out.empty()) out += ',';
    out += k;
    out += "=\"";
    for (char c : v) {
      if (c == '\\' || c == '"') {
        out += '\\';
        out += c;
      } else if (c == '\n') {
        out += "\\n";
      } else {
        out += c;
      }
    }
    out += '"';
  }
  return out;
}

double MetricsRegistry::counter_sum(std::string_view name, std::string_view label_part) const {
  double sum = 0;
  for (const Family& f : families_) {
    if (f.name != name || f.type != "counter") continue;
    auto add = [&](const std::string& label_set, double v) {
      if (label_set.find(label_part) != std::string::npos) sum += v;
    };
    if (f.counter) {
      for (const auto& [label_set, v] : f.counter->series_) add(label_set, v);
    } else if (f.gauge) {
      f.gauge(add);
    }
  }
  return sum;
}

double CounterFamily::get(const std::string& label_set) const {
  auto it = series_.find(label_set);
  return it == series_.end() ? 0 : it->second;
}

HistogramFamily::Series& HistogramFamily::series(const std::string& label_set) {
  Series& s = series_[label_set];
  if (s.buckets.empty()) s.buckets.assign(bounds_.size(), 0);
  return s;
}

void HistogramFamily::observe(Series& s, double value) {
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  if (it != bounds_.end()) ++s.buckets[static_cast<size_t>(it - bounds_.begin())];
  s.sum += value;
  ++s.count;
}

uint64_t HistogramFamily::count(const std::string& label_set) const {
  auto it = series_.find(label_set);
  return it == series_.end() ? 0 : it->second.count;
}

CounterFamily& MetricsRegistry::counter(std::string name, std::string help) {
  Family& f = families_.emplace_back();
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = "counter";
  f.counter = std::make_unique<CounterFamily>();
  return *f.counter;
}

HistogramFamily& MetricsRegistry::histogram(std::string name, std::string help, std::vector<double> bounds) {
  Family& f = families_.emplace_back();
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = "histogram";
  f.histogram = std::make_unique<HistogramFamily>(std::move(bounds));
  return *f.histogram;
}

void MetricsRegistry::gauge(std::string name, std::string help, GaugeCollector collect) {
  Family& f = families_.emplace_back();
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = "gauge";
  f.gauge = std::move(collect);
}

void MetricsRegistry::counter_read(std::string name, std::string help, GaugeCollector collect) {
  gauge(std::move(name), std::move(help), std::move(collect));
  families_.back().type = "counter";
}

std::string MetricsRegistry::render() const {
  std::string out;
  for (const Family& f : families_) {
    out += "# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + " " + f.type + "\n";
    if (f.counter) {
      for (const auto& [ls, v] : f.counter->series_) append_sample(out, f.name, ls, v);
    } else if (f.histogram) {
      const auto& bounds = f.histogram->bounds_;
      for (const auto& [ls, s] : f.histogram->series_) {
        uint64_t cumulative = 0;
        for (size_t i = 0; i < bounds.size(); ++i) {
          cumulative += s.buckets[i];
          std::string le;
          append_value(le, bounds[i]);
          append_sample(out, f.name + "_bucket", join_labels(ls, "le=\"" + le + "\""), static_cast<double>(cumulative));
        }
        append_sample(out, f.name + "_bucket", join_labels(ls, "le=\"+Inf\""), static_cast<double>(s.count));
        append_sample(out, f.name + "_sum", ls, s.sum);
        append_sample(out, f.name + "_count", ls, static_cast<double>(s.count));
      }
    } else if (f.gauge) {
      f.gauge([&](const std::string& ls, double v) { append_sample(out, f.name, ls, v); });
    }
  }
  return out;
}

}  // namespace uvsched
