// Structured logs, one line per event, to stderr: key=value text or JSON.
//   log_info("listening").kv("addr", addr).kv("port", port);
// The line is written when the temporary LogLine is destroyed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace uvsched {

enum class LogLevel { kDebug, kInfo, kWarn, kError, kOff };
enum class LogFormat { kText, kJson };

void log_configure(LogLevel level, LogFormat format);
bool parse_log_level(std::string_view s, LogLevel* out);
bool log_enabled(LogLevel level);

class LogLine {
 public:
  LogLine(LogLevel level, std::string_view event);
  ~LogLine();
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;

  LogLine& kv(std::string_view key, std::string_view value);
  LogLine& kv(std::string_view key, const char* value) { return kv(key, std::string_view(value)); }
  LogLine& kv(std::string_view key, const std::string& value) { return kv(key, std::string_view(value)); }
  LogLine& kv(std::string_view key, int64_t value);
  LogLine& kv(std::string_view key, int value) { return kv(key, static_cast<int64_t>(value)); }
  LogLine& kv(std::string_view key, uint64_t value);
  LogLine& kv(std::string_view key, double value);

 private:
  void raw_kv(std::string_view key, std::string_view value, bool quote);

  bool enabled_;
  std::string line_;
};

inline LogLine log_debug(std::string_view event) { return LogLine(LogLevel::kDebug, event); }
inline LogLine log_info(std::string_view event) { return LogLine(LogLevel::kInfo, event); }
inline LogLine log_warn(std::string_view event) { return LogLine(LogLevel::kWarn, event); }
inline LogLine log_error(std::string_view event) { return LogLine(LogLevel::kError, event); }

}  // namespace uvsched
