// Levelled logging to stderr with fmt, plus a rate limiter for lines a client can
// trigger (bad input must never be able to flood the log).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <utility>

#include <fmt/chrono.h>
#include <fmt/core.h>

#include "config/zone_config.hpp"

namespace zone {

using config::LogLevel;

class Logger {
 public:
  explicit Logger(LogLevel level = LogLevel::kInfo, std::FILE* out = stderr)
      : level_(level), out_(out) {}

  void set_level(LogLevel level) { level_ = level; }
  bool enabled(LogLevel level) const { return level >= level_; }

  template <typename... Args>
  void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
    if (!enabled(level)) return;
    const auto now =
        std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
    fmt::print(out_, "{:%Y-%m-%dT%H:%M:%S}Z {} {}\n", now, tag(level),
               fmt::format(format, std::forward<Args>(args)...));
    std::fflush(out_);
  }
  template <typename... Args>
  void debug(fmt::format_string<Args...> f, Args&&... a) {
    log(LogLevel::kDebug, f, std::forward<Args>(a)...);
  }
  template <typename... Args>
  void info(fmt::format_string<Args...> f, Args&&... a) {
    log(LogLevel::kInfo, f, std::forward<Args>(a)...);
  }
  template <typename... Args>
  void warn(fmt::format_string<Args...> f, Args&&... a) {
    log(LogLevel::kWarn, f, std::forward<Args>(a)...);
  }
  template <typename... Args>
  void error(fmt::format_string<Args...> f, Args&&... a) {
    log(LogLevel::kError, f, std::forward<Args>(a)...);
  }

 private:
  static const char* tag(LogLevel level) {
    switch (level) {
      case LogLevel::kTrace:
        return "TRACE";
      case LogLevel::kDebug:
        return "DEBUG";
      case LogLevel::kInfo:
        return "INFO ";
      case LogLevel::kWarn:
        return "WARN ";
      case LogLevel::kError:
        return "ERROR";
    }
    return "?";
  }
  LogLevel level_;
  std::FILE* out_;
};

// Allows `burst` lines per `window`; counts what it suppresses so the next allowed line
// can say how many were dropped.
class LogRateLimiter {
 public:
  LogRateLimiter(std::uint32_t burst, std::chrono::steady_clock::duration window)
      : burst_(burst), window_(window) {}

  // Returns true if a line may be written now; `suppressed` receives the number of lines
  // held back since the last allowed one.
  bool allow(std::chrono::steady_clock::time_point now, std::uint64_t& suppressed) {
    if (now - window_start_ >= window_) {
      window_start_ = now;
      used_ = 0;
    }
    if (used_ < burst_) {
      ++used_;
      suppressed = std::exchange(suppressed_, 0);
      return true;
    }
    ++suppressed_;
    return false;
  }

 private:
  std::uint32_t burst_;
  std::chrono::steady_clock::duration window_;
  std::chrono::steady_clock::time_point window_start_{};
  std::uint32_t used_ = 0;
  std::uint64_t suppressed_ = 0;
};

}  // namespace zone
