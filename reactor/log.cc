#include "reactor/log.h"

#include <uv.h>

#include <cstdio>
#include <ctime>

namespace uvsched {
namespace {

LogLevel g_level = LogLevel::kInfo;
LogFormat g_format = LogFormat::kText;

std::string_view level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
    case LogLevel::kOff:
      return "off";
  }
  return "info";
}

void append_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
}

std::string timestamp() {
  uv_timeval64_t tv;
  uv_gettimeofday(&tv);
  time_t secs = static_cast<time_t>(tv.tv_sec);
  struct tm tm;
  gmtime_r(&secs, &tm);
  char buf[80];
  snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
           tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(tv.tv_usec / 1000));
  return buf;
}

}  // namespace

void log_configure(LogLevel level, LogFormat format) {
  g_level = level;
  g_format = format;
}

bool log_enabled(LogLevel level) { return level >= g_level && g_level != LogLevel::kOff; }

bool parse_log_level(std::string_view s, LogLevel* out) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError, LogLevel::kOff}) {
    if (level_name(l) == s) {
      *out = l;
      return true;
    }
  }
  return false;
}

LogLine::LogLine(LogLevel level, std::string_view event) : enabled_(log_enabled(level)) {
  if (!enabled_) return;
  if (g_format == LogFormat::kJson) line_ += '{';
  raw_kv("ts", timestamp(), true);
  raw_kv("level", level_name(level), true);
  raw_kv("event", event, true);
}

LogLine::~LogLine() {
  if (!enabled_) return;
  line_ += g_format == LogFormat::kJson ? "}\n" : "\n";
  // stderr is unbuffered; one fwrite per line keeps lines whole.
  fwrite(line_.data(), 1, line_.size(), stderr);
}

void LogLine::raw_kv(std::string_view key, std::string_view value, bool quote) {
  bool json = g_format == LogFormat::kJson;
  if (json) {
    if (line_.size() > 1) line_ += ',';
    line_ += '"';
    line_ += key;
    line_ += "\":";
  } else {
    if (!line_.empty()) line_ += ' ';
    line_ += key;
    line_ += '=';
  }
  bool needs_quotes = json ? quote : (value.empty() || value.find_first_of(" \"=\n\t") != std::string_view::npos);
  if (needs_quotes) line_ += '"';
  append_escaped(line_, value);
  if (needs_quotes) line_ += '"';
}

LogLine& LogLine::kv(std::string_view key, std::string_view value) {
  if (enabled_) raw_kv(key, value, true);
  return *this;
}

LogLine& LogLine::kv(std::string_view key, int64_t value) {
  if (enabled_) raw_kv(key, std::to_string(value), false);
  return *this;
}

LogLine& LogLine::kv(std::string_view key, uint64_t value) {
  if (enabled_) raw_kv(key, std::to_string(value), false);
  return *this;
}

LogLine& LogLine::kv(std::string_view key, double value) {
  if (enabled_) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", value);
    raw_kv(key, buf, false);
  }
  return *this;
}

}  // namespace uvsched
