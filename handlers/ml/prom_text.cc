#include "handlers/ml/prom_text.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace uvsched {
namespace {

bool name_char(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':' ||
         (!first && std::isdigit(static_cast<unsigned char>(c)));
}

std::optional<double> parse_value(std::string_view s) {
  if (s == "+Inf" || s == "Inf") return INFINITY;
  if (s == "-Inf") return -INFINITY;
  if (s == "NaN") return NAN;
  std::string copy(s);
  char* end = nullptr;
  double v = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || *end != '\0') return std::nullopt;
  return v;
}

std::optional<PromSample> parse_line(std::string_view line) {
  PromSample s;
  size_t i = 0;
  while (i < line.size() && name_char(line[i], i == 0)) ++i;
  if (i == 0) return std::nullopt;
  s.name = std::string(line.substr(0, i));
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      size_t k = i;
      while (i < line.size() && name_char(line[i], i == k)) ++i;
      std::string key(line.substr(k, i - k));
      if (key.empty() || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') return std::nullopt;
      i += 2;
      std::string value;
      while (i < line.size() && line[i] != '"') {
        if (line[i] == '\\' && i + 1 < line.size()) {
          ++i;
          value += line[i] == 'n' ? '\n' : line[i];
        } else {
          value += line[i];
        }
        ++i;
      }
      if (i >= line.size()) return std::nullopt;
      ++i;  // closing quote
      s.labels.emplace_back(std::move(key), std::move(value));
      if (i < line.size() && line[i] == ',') ++i;
    }
    if (i >= line.size()) return std::nullopt;
    ++i;  // closing brace
  }
  while (i < line.size() && line[i] == ' ') ++i;
  size_t end = line.find(' ', i);  // a timestamp may follow the value
  auto v = parse_value(line.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
  if (!v) return std::nullopt;
  s.value = *v;
  return s;
}

}  // namespace

std::vector<PromSample> parse_prometheus_text(std::string_view text) {
  std::vector<PromSample> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    if (auto s = parse_line(line)) out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace uvsched
