// Running a zone the way the zone-server process does: ticks until SIGINT or SIGTERM;
// SIGHUP reloads the config, loaded on a thread of its own and applied at a tick
// boundary; an exception escaping the loop is logged and becomes an exit code instead
// of std::terminate. main() is a thin shell around run_zone(), so the tests drive the
// same code with their own signals and loaders.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "config/config_loader.hpp"
#include "zone/logger.hpp"
#include "zone/zone_server.hpp"

namespace zone {

// zone-server's exit codes (main.cpp's header and README.md list them too).
enum ExitCode : int {
  kExitOk = 0,             // stopped by SIGINT or SIGTERM, clients told
  kExitStartFailure = 1,   // could not start (a port in use, an address not available)
  kExitBadConfig = 2,      // bad configuration, arguments or admin token source
  kExitInternalError = 3,  // an unexpected exception stopped the tick loop (logged)
};

// Loads a config on its own thread whenever asked and hands the result to `apply`
// (ZoneServer::request_reload, which queues it for the next tick). Parsing a large file
// takes as long as it takes, away from the tick.
class BackgroundReloader {
 public:
  using Load = std::function<config::LoadResult()>;
  using Apply = std::function<void(config::LoadResult)>;

  // `load` runs on the reloader's thread and may outlive this object (see below): it
  // must not capture references to anything shorter-lived than the process.
  BackgroundReloader(Load load, Apply apply);
  // Returns promptly even while a load is in progress: that load finishes on its own
  // and its result is dropped. `apply` is never called once this returns.
  ~BackgroundReloader();
  BackgroundReloader(const BackgroundReloader&) = delete;
  BackgroundReloader& operator=(const BackgroundReloader&) = delete;

  // Asks for a reload and returns at once. Requests made while a load runs are merged
  // into one more load after it, so a burst of SIGHUPs reads the file twice at most.
  void trigger();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

struct RunControl {
  // Called on the tick thread once per tick; must not block. Returns a pending SIGINT,
  // SIGTERM or SIGHUP, or 0.
  std::function<int()> poll_signal;
  // Loads the config for a SIGHUP reload, on the reloader's thread (see its constructor).
  BackgroundReloader::Load load;
  std::string config_path;               // named in the log
  std::chrono::milliseconds grace{500};  // for the clients' goodbyes
};

// Runs `server` until poll_signal() reports SIGINT or SIGTERM, then shuts it down within
// the grace time. Returns kExitOk, or kExitInternalError if an exception ended the loop.
int run_zone(ZoneServer& server, Logger& log, const RunControl& control);

}  // namespace zone
