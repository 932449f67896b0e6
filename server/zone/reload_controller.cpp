#include "zone/reload_controller.hpp"

#include "zone/script_files.hpp"

namespace zone {

namespace {

constexpr const char* kShuttingDown = "the zone is shutting down; nothing was reloaded";

}  // namespace

std::future<std::string> ReloadController::request(config::LoadResult result) {
  std::vector<script::ScriptFile> scripts;
  std::string scripts_error;
  if (result.ok()) {
    try {
      scripts = read_script_dir(result.config.game.scripts_dir);
    } catch (const std::exception& e) {
      scripts_error = e.what();
    }
  }
  std::lock_guard lock(mutex_);
  if (closed_) {
    // No tick will ever apply it: answer now rather than leave the caller waiting.
    std::promise<std::string> refused;
    refused.set_value(kShuttingDown);
    return refused.get_future();
  }
  queue_.push_back({std::move(result), {}, std::move(scripts), std::move(scripts_error)});
  auto future = queue_.back().done.get_future();
  pending_ = true;
  return future;
}

void ReloadController::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  for (PendingReload& r : queue_) r.done.set_value(kShuttingDown);
  queue_.clear();
  pending_ = false;
}

std::vector<PendingReload> ReloadController::take() {
  std::vector<PendingReload> batch;
  std::lock_guard lock(mutex_);
  batch.swap(queue_);
  pending_ = false;
  return batch;
}

}  // namespace zone
