// Levelled logging with fmt, written by a background thread, plus a rate limiter for
// lines a client can trigger (bad input, joins and leaves under churn must never be able
// to flood the log).
//
// The calling thread only formats the message and appends it to a bounded queue; the
// writer thread adds the timestamp and does the I/O. A slow or blocked stderr (a paused
// terminal, a full pipe, a stalled log collector) therefore never stalls the tick: when
// the queue is full, lines are dropped and counted, and the writer reports how many once
// it catches up.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include <fmt/core.h>

#include "config/zone_config.hpp"

namespace zone {

using config::LogLevel;

// Allows `burst` lines per `window`; counts what it suppresses so the next allowed line
// can say how many were dropped. Not thread-safe: one limiter per thread that logs.
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

class Logger {
 public:
  static constexpr std::size_t kDefaultQueueLines = 8192;

  // `out` must stay open for as long as the logger (stderr in the server).
  explicit Logger(LogLevel level = LogLevel::kInfo, std::FILE* out = stderr,
                  std::size_t queue_lines = kDefaultQueueLines);
  // Writes what is still queued; gives up after a few seconds if the output is stuck.
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  // Thread-safe, like everything below.
  void set_level(LogLevel level) { level_.store(level, std::memory_order_relaxed); }
  bool enabled(LogLevel level) const { return level >= level_.load(std::memory_order_relaxed); }

  template <typename... Args>
  void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
    if (!enabled(level)) return;
    enqueue(level, fmt::format(format, std::forward<Args>(args)...));
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
  // log(), as often as `limiter` allows; the next line it lets through says how many were
  // held back meanwhile.
  template <typename... Args>
  void limited(LogRateLimiter& limiter, LogLevel level, fmt::format_string<Args...> format,
               Args&&... args) {
    if (!enabled(level)) return;
    std::uint64_t suppressed = 0;
    if (!limiter.allow(std::chrono::steady_clock::now(), suppressed)) return;
    std::string line = fmt::format(format, std::forward<Args>(args)...);
    if (suppressed > 0) line += fmt::format(" ({} similar lines suppressed)", suppressed);
    enqueue(level, std::move(line));
  }

  // Waits until every line queued before the call is written, at most `timeout`; returns
  // whether it was.
  bool flush(std::chrono::milliseconds timeout = std::chrono::seconds(2));
  // Lines dropped so far because the queue was full.
  std::uint64_t dropped() const;

 private:
  struct State;
  void enqueue(LogLevel level, std::string&& message);

  std::atomic<LogLevel> level_;
  // Shared with the writer thread, which may outlive the logger if the output is stuck.
  std::shared_ptr<State> state_;
};

}  // namespace zone
