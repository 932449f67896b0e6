// Load-adaptive sync (interest.load_adaptive): turns the tick's wall time into a level
// 0..max_level that the zone applies to replication (docs/architecture.md, "Interest
// policy"):
//   level 0: normal;
//   level 1: the far tier slows down (interest.load_far_slowdown);
//   level 2..1+load_radius_steps: also the view radius shrinks by load_radius_step of
//            aoi.view_radius per level.
// The tick time is smoothed (an exponential average over load_smoothing_ticks) and
// taken as a share of the budget. Above load_raise_share the level goes up one, below
// load_lower_share down one, and never twice within load_hold_ticks: the gap between the
// shares and the hold keep it from oscillating. Plain arithmetic, no allocation.
#pragma once

#include <algorithm>
#include <cstdint>

namespace zone {

struct LoadParams {
  bool enabled = false;
  double budget_seconds = 0.05;  // the tick's budget
  double raise_share = 0.8;
  double lower_share = 0.5;
  std::uint32_t smoothing_ticks = 20;
  std::uint32_t hold_ticks = 20;
  std::uint32_t max_level = 3;
};

class LoadGovernor {
 public:
  void configure(const LoadParams& p) {
    params_ = p;
    if (!p.enabled) {
      level_ = 0;
    } else {
      level_ = std::min(level_, p.max_level);
    }
  }
  // One tick's wall time. Returns true when the level changed.
  bool observe(double tick_seconds) {
    const double alpha = 1.0 / std::max(1u, params_.smoothing_ticks);
    smoothed_ = primed_ ? smoothed_ + alpha * (tick_seconds - smoothed_) : tick_seconds;
    primed_ = true;
    ++since_change_;
    if (!params_.enabled || since_change_ < params_.hold_ticks) return false;
    const double s = share();
    if (s > params_.raise_share && level_ < params_.max_level) {
      ++level_;
    } else if (s < params_.lower_share && level_ > 0) {
      --level_;
    } else {
      return false;
    }
    since_change_ = 0;
    ++changes_;
    return true;
  }
  std::uint32_t level() const { return level_; }
  // Smoothed tick time as a share of the budget.
  double share() const {
    return params_.budget_seconds > 0 ? smoothed_ / params_.budget_seconds : 0;
  }
  double smoothed_seconds() const { return smoothed_; }
  std::uint64_t changes() const { return changes_; }
  const LoadParams& params() const { return params_; }

 private:
  LoadParams params_;
  double smoothed_ = 0.0;
  bool primed_ = false;
  std::uint32_t level_ = 0;
  std::uint32_t since_change_ = 0;
  std::uint64_t changes_ = 0;
};

}  // namespace zone
