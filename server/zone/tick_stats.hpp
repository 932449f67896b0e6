// Tick durations over a reporting window, for the status line's p50/p99.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace zone {

class TickStats {
 public:
  explicit TickStats(std::size_t capacity = 1 << 14) { samples_.reserve(capacity); }
  void add(std::chrono::nanoseconds d) {
    if (samples_.size() < samples_.capacity()) samples_.push_back(d.count());
    max_ = std::max<std::int64_t>(max_, d.count());
  }
  // Percentile q in [0, 1] of the window's samples, in milliseconds. Reorders samples.
  double percentile_ms(double q) {
    if (samples_.empty()) return 0.0;
    const auto k = static_cast<std::size_t>(q * static_cast<double>(samples_.size() - 1));
    std::nth_element(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(k),
                     samples_.end());
    return static_cast<double>(samples_[k]) / 1e6;
  }
  double max_ms() const { return static_cast<double>(max_) / 1e6; }
  void reset() {
    samples_.clear();
    max_ = 0;
  }

 private:
  std::vector<std::int64_t> samples_;
  std::int64_t max_ = 0;
};

}  // namespace zone
