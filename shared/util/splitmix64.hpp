// SplitMix64: a tiny, fast, seedable generator. Each owner keeps its own instance, so
// runs with the same seed are reproducible.
#pragma once

#include <cstdint>

namespace zone::util {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed = 0) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform double in [0, 1).
  double u01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double range(double lo, double hi) { return lo + (hi - lo) * u01(); }

 private:
  std::uint64_t state_;
};

}  // namespace zone::util
