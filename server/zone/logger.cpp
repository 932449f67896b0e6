#include "zone/logger.hpp"

#include <pthread.h>

#include <condition_variable>
#include <csignal>
#include <deque>
#include <mutex>

#include <fmt/chrono.h>

namespace zone {

namespace {

const char* tag(LogLevel level) {
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

using SystemMs = std::chrono::time_point<std::chrono::system_clock, std::chrono::milliseconds>;

}  // namespace

struct Logger::State {
  struct Line {
    SystemMs time;
    LogLevel level;
    std::string text;
  };

  std::FILE* out;
  std::size_t capacity;
  std::mutex mutex;
  std::condition_variable wake;     // the writer: lines queued, or stop
  std::condition_variable written;  // flush() and the destructor: progress
  std::deque<Line> queue;
  std::uint64_t queued = 0;   // lines ever accepted
  std::uint64_t done = 0;     // lines ever written
  std::uint64_t dropped = 0;  // lines ever dropped
  std::uint64_t dropped_reported = 0;
  bool stop = false;
  bool finished = false;

  void run() {
    std::unique_lock lock(mutex);
    std::deque<Line> batch;
    for (;;) {
      wake.wait(lock, [&] { return stop || !queue.empty(); });
      if (queue.empty() && stop) break;
      batch.swap(queue);
      const std::uint64_t newly_dropped = dropped - dropped_reported;
      dropped_reported = dropped;
      lock.unlock();
      // The only place that touches the output, without the lock: a stuck write blocks
      // this thread alone.
      if (newly_dropped > 0) {
        const auto now =
            std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
        fmt::print(out, "{:%Y-%m-%dT%H:%M:%S}Z {} log queue full: {} lines dropped\n", now,
                   tag(LogLevel::kWarn), newly_dropped);
      }
      for (const Line& line : batch) {
        fmt::print(out, "{:%Y-%m-%dT%H:%M:%S}Z {} {}\n", line.time, tag(line.level), line.text);
      }
      std::fflush(out);
      const std::size_t n = batch.size();
      batch.clear();
      lock.lock();
      done += n;
      written.notify_all();
    }
    finished = true;
    written.notify_all();
  }
};

Logger::Logger(LogLevel level, std::FILE* out, std::size_t queue_lines)
    : level_(level), state_(std::make_shared<State>()) {
  state_->out = out;
  state_->capacity = queue_lines > 0 ? queue_lines : 1;
  // The thread owns a reference to the state, so detaching it (see ~Logger) is safe.
  std::thread([state = state_] {
    // A logger may be made before main() blocks the signals it waits for: this thread
    // must never be the one they are delivered to (SIGHUP's default action ends the
    // process).
    sigset_t control;
    sigemptyset(&control);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&control, sig);
    pthread_sigmask(SIG_BLOCK, &control, nullptr);
    state->run();
  }).detach();
}

Logger::~Logger() {
  std::unique_lock lock(state_->mutex);
  state_->stop = true;
  state_->wake.notify_one();
  // Normally this takes microseconds. If the output is stuck (a paused terminal), the
  // process still exits: the writer keeps its own reference to the state.
  state_->written.wait_for(lock, std::chrono::seconds(2), [&] { return state_->finished; });
}

void Logger::enqueue(LogLevel level, std::string&& message) {
  const auto now = std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
  std::lock_guard lock(state_->mutex);
  if (state_->queue.size() >= state_->capacity) {
    ++state_->dropped;
    return;
  }
  const bool was_empty = state_->queue.empty();
  state_->queue.push_back({now, level, std::move(message)});
  ++state_->queued;
  // The writer only sleeps when the queue is empty: no wake-up call needed otherwise.
  if (was_empty) state_->wake.notify_one();
}

bool Logger::flush(std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_->mutex);
  const std::uint64_t target = state_->queued;
  return state_->written.wait_for(lock, timeout, [&] { return state_->done >= target; });
}

std::uint64_t Logger::dropped() const {
  std::lock_guard lock(state_->mutex);
  return state_->dropped;
}

}  // namespace zone
