#include "zone/run_zone.hpp"

#include <condition_variable>
#include <csignal>
#include <exception>
#include <mutex>
#include <thread>

namespace zone {

struct BackgroundReloader::State {
  Load load;
  Apply apply;
  std::mutex mutex;
  std::condition_variable changed;
  bool requested = false;
  bool stop = false;
  bool finished = false;

  void run() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stop || requested; });
      if (stop) break;
      requested = false;
      lock.unlock();
      config::LoadResult result = load();
      lock.lock();
      if (stop) break;
      // Under the lock: the destructor cannot return while the zone is being handed this.
      apply(std::move(result));
    }
    finished = true;
    changed.notify_all();
  }
};

BackgroundReloader::BackgroundReloader(Load load, Apply apply) : state_(std::make_shared<State>()) {
  state_->load = std::move(load);
  state_->apply = std::move(apply);
  // Detached, holding its own reference to the state, so that a load that never returns
  // (a file on a hung network mount) cannot hold up the process's exit.
  std::thread([state = state_] { state->run(); }).detach();
}

BackgroundReloader::~BackgroundReloader() {
  std::unique_lock lock(state_->mutex);
  state_->stop = true;
  state_->changed.notify_all();
  // Usually the thread is idle and finishes at once; a load in progress is not waited for.
  state_->changed.wait_for(lock, std::chrono::milliseconds(200), [&] { return state_->finished; });
}

void BackgroundReloader::trigger() {
  std::lock_guard lock(state_->mutex);
  state_->requested = true;
  state_->changed.notify_all();
}

int run_zone(ZoneServer& server, Logger& log, const RunControl& control) {
  int code = kExitOk;
  {
    BackgroundReloader reloader(control.load, [&server](config::LoadResult result) {
      server.request_reload(std::move(result));
    });
    int sig = 0;
    try {
      server.run([&] {
        sig = control.poll_signal();
        if (sig == SIGHUP) {
          log.info("received SIGHUP, reloading {}", control.config_path);
          reloader.trigger();
          sig = 0;
        }
        return sig != 0;
      });
      log.info("received {}, stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    } catch (const std::exception& e) {
      // Any exception here is a bug (std::logic_error and its kin, std::bad_alloc, ...):
      // without this catch it would end in std::terminate with nothing in the log.
      log.error("internal error in the tick loop, stopping with exit code {}: {}",
                static_cast<int>(kExitInternalError), e.what());
      code = kExitInternalError;
    } catch (...) {
      log.error(
          "internal error in the tick loop, stopping with exit code {}: an exception of "
          "unknown type",
          static_cast<int>(kExitInternalError));
      code = kExitInternalError;
    }
  }
  // The cause is written out before the goodbyes, which may fail in a broken zone.
  if (code != kExitOk) log.flush();
  try {
    server.shutdown(control.grace);
    log.info("stopped after {} ticks ({} overruns)", server.counters().ticks,
             server.counters().overruns);
  } catch (const std::exception& e) {
    log.error("error while shutting down: {}", e.what());
    code = kExitInternalError;
  }
  return code;
}

}  // namespace zone
