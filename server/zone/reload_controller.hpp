// Config reloads on their way from the threads that ask for them to the tick thread that
// applies them.
//
// Threads: request() and close() are called from any thread (an admin worker for
// POST /admin/reload, the SIGHUP reloader, the thread shutting the zone down); pending()
// and take() only from the tick thread, at the start of a tick. The queue is under a
// mutex; pending() is an atomic, so a tick with nothing queued takes no lock.
//
// The controller does not know what a config changes: the zone applies what take()
// hands it and answers each request with its report.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "config/config_loader.hpp"
#include "script/script_config.hpp"

namespace zone {

// A reload waiting for the tick: the loaded config (or its errors), and the promise that
// tells whoever asked what became of it.
// The game's scripts are read here too, by the thread that asked (a disk read never
// stalls the tick).
struct PendingReload {
  config::LoadResult result;
  std::promise<std::string> done;
  std::vector<script::ScriptFile> scripts;  // game.scripts_dir's, when it read
  std::string scripts_error;                // why they could not be read, if so
};

class ReloadController {
 public:
  using Source = std::function<config::LoadResult()>;

  // `source` loads the config for POST /admin/reload (main: the file plus the command
  // line's overrides); empty when there is nothing to reload from.
  explicit ReloadController(Source source) : source_(std::move(source)) {}

  // Admin threads. Set before they start and never changed, so reading it needs no lock.
  bool has_source() const { return static_cast<bool>(source_); }
  config::LoadResult load() const { return source_(); }

  // Any thread: queues `result` for the next tick. The future yields the one-line report;
  // once closed, it is answered at once without being applied.
  std::future<std::string> request(config::LoadResult result);
  // Any thread: refuses every queued and future request (the zone is shutting down).
  void close();

  // Tick thread: whether take() would return anything.
  bool pending() const { return pending_.load(); }
  // Tick thread: the requests queued since the last take, oldest first. The caller
  // applies them and answers every one.
  std::vector<PendingReload> take();

 private:
  const Source source_;
  std::mutex mutex_;
  std::vector<PendingReload> queue_;  // under mutex_
  bool closed_ = false;               // under mutex_
  std::atomic<bool> pending_{false};  // queue_ is not empty
};

}  // namespace zone
