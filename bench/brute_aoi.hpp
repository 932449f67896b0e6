// All-pairs O(N^2) reference for the grid AOI: the same visibility rule (exact distance,
// hysteresis), no broad phase. It is the baseline of `aoi-bench --baseline brute` and the
// oracle of `aoi-bench --verify`.
//
// It is a fair baseline, not a straw man: positions are structure-of-arrays doubles, each
// observer makes one branch-free pass over all N targets (d^2 <= (r + h)^2 survivors are
// compacted into a candidate list in id order), and the candidates are merged with the
// observer's id-sorted view set. Every ordered pair is tested each tick (N * (N - 1)
// distance checks); it does not exploit the symmetry of distances, since view radii may
// differ per observer.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace zone::bench {

class BruteAoi {
 public:
  BruteAoi(std::span<const double> radii, double hysteresis)
      : r_(radii.begin(), radii.end()),
        h_(hysteresis),
        x_(radii.size()),
        y_(radii.size()),
        view_(radii.size()),
        cand_(radii.size()) {}

  std::uint32_t size() const { return static_cast<std::uint32_t>(r_.size()); }

  // The tick's moves: every entity's new position, by id.
  void set_positions(std::span<const double> x, std::span<const double> y) {
    for (std::size_t i = 0; i < x_.size(); ++i) {
      x_[i] = x[i];
      y_[i] = y[i];
    }
  }

  // Recomputes every view set; calls sink(observer, target, is_leave) for every event.
  // Order: observers ascending; for each, its events in ascending target id.
  template <typename Sink>
  void update(Sink&& sink) {
    const std::uint32_t n_all = size();
    const double* xs = x_.data();
    const double* ys = y_.data();
    std::uint32_t* cand = cand_.data();
    for (std::uint32_t a = 0; a < n_all; ++a) {
      const double ax = xs[a];
      const double ay = ys[a];
      const double r = r_[a];
      const double r2 = r * r;
      const double outer = r + h_;
      const double outer2 = outer * outer;
      std::uint32_t n = 0;
      for (std::uint32_t b = 0; b < n_all; ++b) {
        const double dx = xs[b] - ax;
        const double dy = ys[b] - ay;
        cand[n] = b;
        n += (dx * dx + dy * dy <= outer2) ? 1u : 0u;
      }
      std::vector<std::uint32_t>& old = view_[a];
      next_.clear();
      std::size_t k = 0;
      for (std::uint32_t c = 0; c < n; ++c) {
        const std::uint32_t b = cand[c];
        if (b == a) continue;
        while (k < old.size() && old[k] < b) sink(a, old[k++], true);  // beyond r + h
        if (k < old.size() && old[k] == b) {
          ++k;
          next_.push_back(b);  // within r + h: kept
          continue;
        }
        const double dx = xs[b] - ax;
        const double dy = ys[b] - ay;
        if (dx * dx + dy * dy <= r2) {
          sink(a, b, false);
          next_.push_back(b);
        }
      }
      while (k < old.size()) sink(a, old[k++], true);
      std::swap(old, next_);
    }
  }

  // Targets in a's view, ascending ids.
  std::span<const std::uint32_t> view(std::uint32_t a) const { return view_[a]; }
  std::uint64_t visible_pairs() const {
    std::uint64_t total = 0;
    for (const auto& v : view_) total += v.size();
    return total;
  }

 private:
  std::vector<double> r_;
  double h_;
  std::vector<double> x_;
  std::vector<double> y_;
  std::vector<std::vector<std::uint32_t>> view_;
  std::vector<std::uint32_t> cand_;
  std::vector<std::uint32_t> next_;
};

}  // namespace zone::bench
