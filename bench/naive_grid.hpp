// A plain exact grid AOI: the baseline of `aoi-bench --baseline naive-grid`.
//
// What a first, straightforward grid looks like, written without any of GridAoi's
// machinery: double precision throughout, and everything rebuilt from scratch each tick.
//   1. The grid spans the bounding box of this tick's positions, with cells as large as
//      the largest r + h. Every entity's row-major cell index is computed, the (cell, id)
//      pairs are sorted with std::sort, and each cell's first entry is recorded.
//   2. Each observer scans the 3 x 3 block of cells around its own (three rows of three
//      adjacent cells, each row one contiguous range of the sorted array), tests every
//      entity there in double precision, keeps those within r, and those within r + h
//      that it saw before (binary search in its sorted old view).
//   3. The new view is sorted and merged with the old one: targets only in the new view
//      enter, targets only in the old view leave.
// Same visibility rule as GridAoi and BruteAoi (enter at d <= r_a, leave at d > r_a + h).
// It is meant as an honest "naive" reference, not a straw man: no per-tick allocation
// once its vectors have grown, contiguous arrays, and one sort per tick plus one per view.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace zone::bench {

class NaiveGridAoi {
 public:
  NaiveGridAoi(std::span<const double> radii, double hysteresis)
      : r_(radii.begin(), radii.end()),
        h_(hysteresis),
        x_(radii.size()),
        y_(radii.size()),
        view_(radii.size()) {
    double max_r = 0.0;
    for (const double r : r_) max_r = std::max(max_r, r);
    cell_ = std::max(max_r + h_, 1e-3);
    inv_cell_ = 1.0 / cell_;
  }

  double cell_size() const { return cell_; }

  void set_positions(std::span<const double> x, std::span<const double> y) {
    for (std::size_t i = 0; i < x_.size(); ++i) {
      x_[i] = x[i];
      y_[i] = y[i];
    }
  }

  // Calls sink(observer, target, is_leave) for every event: observers ascending, each
  // observer's events in ascending target id.
  template <typename Sink>
  void update(Sink&& sink) {
    const auto n = static_cast<std::uint32_t>(r_.size());
    if (n == 0) return;
    const auto [xmin, xmax] = std::minmax_element(x_.begin(), x_.end());
    const auto [ymin, ymax] = std::minmax_element(y_.begin(), y_.end());
    x0_ = *xmin;
    y0_ = *ymin;
    // One empty cell of margin on every side, so that the 3 x 3 block never leaves the grid.
    cols_ = static_cast<std::uint32_t>(std::floor((*xmax - x0_) * inv_cell_)) + 3;
    rows_ = static_cast<std::uint32_t>(std::floor((*ymax - y0_) * inv_cell_)) + 3;
    entries_.clear();
    for (std::uint32_t i = 0; i < n; ++i) entries_.push_back({cell(x_[i], y_[i]), i});
    std::sort(entries_.begin(), entries_.end());
    start_.assign(static_cast<std::size_t>(cols_) * rows_ + 1, 0);
    for (std::size_t c = 0, e = 0; c <= start_.size() - 1; ++c) {
      while (e < entries_.size() && entries_[e].first < c) ++e;
      start_[c] = static_cast<std::uint32_t>(e);
    }

    for (std::uint32_t a = 0; a < n; ++a) {
      const double ax = x_[a];
      const double ay = y_[a];
      const double r = r_[a];
      const double r2 = r * r;
      const double outer2 = (r + h_) * (r + h_);
      const std::uint32_t c = cell(ax, ay);
      const std::vector<std::uint32_t>& old = view_[a];
      next_.clear();
      for (const std::uint32_t row_start : {c - cols_ - 1, c - 1, c + cols_ - 1}) {
        const std::uint32_t end = start_[row_start + 3];
        for (std::uint32_t k = start_[row_start]; k < end; ++k) {
          const std::uint32_t b = entries_[k].second;
          if (b == a) continue;
          const double dx = x_[b] - ax;
          const double dy = y_[b] - ay;
          const double d2 = dx * dx + dy * dy;
          if (d2 > outer2) continue;
          if (d2 <= r2 || std::binary_search(old.begin(), old.end(), b)) next_.push_back(b);
        }
      }
      std::sort(next_.begin(), next_.end());
      std::size_t p = 0;
      std::size_t q = 0;
      while (p < old.size() || q < next_.size()) {
        if (q == next_.size() || (p < old.size() && old[p] < next_[q])) {
          sink(a, old[p++], true);
        } else if (p == old.size() || next_[q] < old[p]) {
          sink(a, next_[q++], false);
        } else {
          ++p;
          ++q;
        }
      }
      view_[a].assign(next_.begin(), next_.end());
    }
  }

  std::span<const std::uint32_t> view(std::uint32_t a) const { return view_[a]; }
  std::uint64_t visible_pairs() const {
    std::uint64_t total = 0;
    for (const auto& v : view_) total += v.size();
    return total;
  }

 private:
  // Row-major cell index, offset by the margin row and column.
  std::uint32_t cell(double x, double y) const {
    const auto col = static_cast<std::uint32_t>(std::floor((x - x0_) * inv_cell_)) + 1;
    const auto row = static_cast<std::uint32_t>(std::floor((y - y0_) * inv_cell_)) + 1;
    return row * cols_ + col;
  }

  std::vector<double> r_;
  double h_;
  double cell_ = 1.0;
  double inv_cell_ = 1.0;
  double x0_ = 0.0;
  double y0_ = 0.0;
  std::uint32_t cols_ = 0;
  std::uint32_t rows_ = 0;
  std::vector<double> x_;
  std::vector<double> y_;
  std::vector<std::vector<std::uint32_t>> view_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> entries_;  // (cell, id), sorted
  std::vector<std::uint32_t> start_;  // per cell: its first entry in entries_
  std::vector<std::uint32_t> next_;
};

}  // namespace zone::bench
