#include "client/clock_sync.hpp"

#include <algorithm>

namespace zone::client {

void ClockSync::reset(double tick_rate) {
  tick_rate_ = tick_rate > 0.0 ? tick_rate : 20.0;
  window_.fill(0.0);
  next_ = samples_ = 0;
  offset_ = 0.0;
  last_update_ = 0.0;
}

double ClockSync::window_max() const {
  const std::size_t n = std::min(samples_, kWindow);
  return *std::max_element(window_.begin(), window_.begin() + static_cast<std::ptrdiff_t>(n));
}

void ClockSync::on_frame(std::uint32_t tick, double local_seconds) {
  const double sample = static_cast<double>(tick) / tick_rate_ - local_seconds;
  window_[next_] = sample;
  next_ = (next_ + 1) % kWindow;
  if (samples_++ == 0) {
    // The first frame sets the clock outright: there is nothing on screen to keep smooth.
    offset_ = sample;
    last_update_ = local_seconds;
  }
}

void ClockSync::update(double local_seconds) {
  if (samples_ == 0) return;
  const double elapsed = std::max(0.0, local_seconds - last_update_);
  last_update_ = local_seconds;
  const double step = kMaxSlew * elapsed;
  offset_ += std::clamp(window_max() - offset_, -step, step);
}

}  // namespace zone::client
