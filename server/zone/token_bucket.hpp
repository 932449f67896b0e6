// A per-player rate limit: up to `burst` at once, refilled at `rate` per second by the
// time each request arrived (a slow tick or a network stall followed by a burst is not
// counted against the player).
#pragma once

#include <algorithm>
#include <chrono>

namespace zone {

struct TokenBucket {
  double tokens = -1.0;  // < 0: not started (full at the first request)
  std::chrono::steady_clock::time_point refilled{};

  bool take(std::chrono::steady_clock::time_point at, double rate, double burst) {
    if (tokens < 0.0) {
      tokens = burst;
      refilled = at;
    }
    tokens = std::min(burst, tokens + rate * std::chrono::duration<double>(at - refilled).count());
    refilled = std::max(refilled, at);
    if (tokens < 1.0) return false;
    tokens -= 1.0;
    return true;
  }
};

}  // namespace zone
