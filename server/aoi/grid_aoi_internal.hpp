// Internal to the grid AOI (server/aoi/grid_*.cpp): what the parts of GridAoi's
// implementation share. GridAoi's implementation is split by job:
//   grid_aoi.cpp         configuration, mutations, the tick's order of phases, threads
//                        (set_parallel, merging the pieces' outputs), queries
//   grid_cells.cpp       the broad phase: entities kept in cell order
//   grid_classes.cpp     mutual classes: observers of one radius that share their pairs
//   grid_crowds.cpp      crowds: a class's observers in dense cells, their pairs decided by
//                        a CrowdTier
//   grid_lists.cpp       candidate lists: rebuilds, teleports' notifications
//   grid_pair_tests.cpp  running the pair tests due this tick (filed in a TestWheel,
//                        test_wheel.hpp), and applying the views' changes they find
//   grid_invariants.cpp  the consistency check for tests
// Nothing here is part of the AOI's interface.
#pragma once

#include "aoi/grid_aoi.hpp"
#include "aoi/simd.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace zone::aoi {

// What the parts share, kept out of zone::aoi itself so that nothing else there can
// collide with these names.
namespace grid_detail {

// The bits of GridAoi::Hot::flags.
constexpr std::uint8_t kAlive = 1;
constexpr std::uint8_t kObserver = 2;
constexpr std::uint8_t kRemoved = 4;
constexpr std::uint8_t kAdded = 8;     // added since the last update
constexpr std::uint8_t kRebuild = 16;  // its candidate list must be rebuilt at the next update
constexpr std::uint8_t kListed = 32;   // has a view or scheduled re-tests (an observer's list)
constexpr std::uint8_t kReclass = 64;  // left its mutual class since the last update
constexpr std::uint8_t kJoin = 128;    // may join the mutual class of its radius (try_join)

constexpr std::uint32_t kVisibleBit = PairTest::kVisibleBit;
constexpr std::uint32_t kNotVisible = 0xFFFFFFFFu;  // view index of a hidden pair

// With workers, a phase runs on them only when it has at least this many pieces (a chunk of
// pair tests is a piece; for the list rebuilds, see kListsPerPiece): below that, waking the
// workers and merging their output costs more than it saves (measured on the standard
// workloads, docs/benchmarks.md).
constexpr std::uint32_t kMinPieces = 8;

// Bound on the rounding error of a distance or threshold of magnitude up to `scale`
// computed in double (the true error is below 1e-15 relative; this is a million times
// that), used to keep the scheduling conservative.
inline double sched_eps(double scale) {
  return 1e-9 * (1.0 + scale);
}

// Index of slot in v, or kNotVisible.
inline std::uint32_t find_slot(const std::vector<std::uint32_t>& v, std::uint32_t slot) {
  const auto n = static_cast<std::uint32_t>(v.size());
  const std::uint32_t i = simd::find_u32(v.data(), n, slot);
  return i < n ? i : kNotVisible;
}

// An observer's class byte (Hot::mutual_class): its mutual class in the low 7 bits (0: none),
// and kCrowdBit when its class's crowd tier holds it (grid_crowds.cpp). The bit is in the
// byte the pair-test kernel already reads, so that it can leave a crowd's pairs alone.
constexpr std::uint8_t kCrowdBit = 0x80;
constexpr std::uint8_t kClassBits = 0x7F;
inline std::uint8_t class_of(std::uint8_t byte) {
  return byte & kClassBits;
}
// Whether observers of these class bytes are classmates (class 0 is no class).
inline bool classmates(std::uint8_t a, std::uint8_t b) {
  return class_of(a) != 0 && class_of(a ^ b) == 0;
}
// Whether both are in one crowd: their pair is the crowd tier's.
inline bool crowd_mates(std::uint8_t a, std::uint8_t b) {
  return (a & kCrowdBit) != 0 && a == b;
}

// Ticks (beyond the next) in which two entities, each moving at most the bound, cannot
// close a gap of `gap` metres (their distance changes by at most 1 / inv_two_step per
// tick), capped at `life`. The gap of a visible pair at distance d is r + h - d - 2 eps (to
// a leave), of a hidden one d - r - 3 eps (to an enter), eps bounding the rounding of d and
// of the thresholds (sched_eps). (A free function: the hot loops pass their own copies of
// the members.)
inline std::uint32_t ticks_for_gap(double gap, double inv_two_step, double life) {
  return static_cast<std::uint32_t>(std::min(std::max(gap, 0.0) * inv_two_step, life));
}

// The column (or row) of coordinate v in a grid whose first cell starts at `min`.
inline std::uint32_t cell_index(double v, double min, double inv_cell, std::uint32_t count) {
  const double f = (v - min) * inv_cell;
  if (!(f > 0.0)) return 0;
  if (f >= static_cast<double>(count)) return count - 1;
  return static_cast<std::uint32_t>(f);
}

}  // namespace grid_detail
using namespace grid_detail;  // the grid_*.cpp files name these unqualified

// Clamping keeps the mapping monotone, which is all the broad phase needs: if
// |x_a - x_b| <= R then col(x_b) lies in [col(x_a - R), col(x_a + R)] even for positions
// outside the world bounds.
inline std::uint32_t GridAoi::cell_col(double x) const {
  return cell_index(x, config_.bounds.min.x, inv_cell_, cols_);
}

inline std::uint32_t GridAoi::cell_row(double y) const {
  return cell_index(y, config_.bounds.min.y, inv_cell_, rows_);
}

inline std::uint32_t GridAoi::cell_key(Vec2 p) const {
  return cell_row(p.y) * cols_ + cell_col(p.x);
}

inline void GridAoi::emit(std::uint32_t a, std::uint32_t b, EventKind kind) {
  events_.push_back({slots_.handle_at(a), slots_.handle_at(b), kind});
}

template <typename Fn>
void GridAoi::for_each_span(Vec2 c, double reach, Fn&& fn) const {
  for_each_cell_run(c, reach, [&](std::uint32_t first, std::uint32_t last) {
    fn(cell_begin_[first], cell_begin_[last]);
  });
}

template <typename Fn>
void GridAoi::for_each_cell_run(Vec2 c, double reach, Fn&& fn) const {
  const auto m = static_cast<std::uint32_t>(cell_key_.size());
  if (m == 0) return;
  // Every entity lies within slack_ of its listed cell: within reach of c, it was listed
  // from a position within reach + slack_ of c.
  reach += slack_;
  const std::uint32_t* keys = cell_key_.data();
  const std::uint32_t row0 = cell_row(c.y - reach);
  const std::uint32_t row1 = cell_row(c.y + reach);
  const double cs = config_.cell_size;
  const Bounds& b = config_.bounds;
  // Cells about as large as the disc: narrowing each row to the chord would save few
  // candidates and cost a square root per row, so every row takes the full width.
  const bool chords = row1 - row0 >= 3;
  const std::uint32_t full_col0 = cell_col(c.x - reach - 1e-3);
  const std::uint32_t full_col1 = cell_col(c.x + reach + 1e-3);
  std::uint32_t j = 0;  // in keys: everything before j is below the current row's range
  for (std::uint32_t row = row0; row <= row1; ++row) {
    std::uint32_t col0 = full_col0;
    std::uint32_t col1 = full_col1;
    if (chords) {
      // Border rows also hold every entity clamped into them, so they extend to infinity
      // on their outer side.
      const double lo = row == 0 ? -INFINITY : b.min.y + row * cs;
      const double hi = row + 1 == rows_ ? INFINITY : b.min.y + (row + 1) * cs;
      const double dy = std::max({0.0, lo - c.y, c.y - hi});
      const double half = std::sqrt(std::max(0.0, reach * reach - dy * dy)) + 1e-3;
      col0 = cell_col(c.x - half);
      col1 = cell_col(c.x + half);
    }
    const std::uint32_t lo_key = row * cols_ + col0;
    const std::uint32_t hi_key = row * cols_ + col1;
    // Lower bound of lo_key from j: the ranges of successive rows ascend. The keys are
    // distinct, so lo_key is at most lo_key - keys[j] entries on, and exactly there when
    // every cell in between is occupied (a crowded grid): one probe. Otherwise gallop.
    if (keys[j] < lo_key) {
      const std::uint32_t dense = j + (lo_key - keys[j]);
      if (dense < m && keys[dense] == lo_key) {
        j = dense;
      } else {
        std::uint32_t lo = j;
        std::uint32_t step = 1;
        std::uint32_t hi = j + 1;
        while (hi < m && keys[hi] < lo_key) {
          lo = hi;
          step <<= 1;
          hi = lo + step;
        }
        hi = std::min(hi, m);
        j = static_cast<std::uint32_t>(std::lower_bound(keys + lo + 1, keys + hi, lo_key) - keys);
        if (j == m) return;
      }
    }
    if (keys[j] > hi_key) {
      // Nothing in range on this row: go straight to the next occupied row.
      const std::uint32_t next_row = keys[j] / cols_;
      if (next_row > row) row = next_row - 1;
      continue;
    }
    const std::uint32_t first = j;
    while (j < m && keys[j] <= hi_key) ++j;
    fn(first, j);
    if (j == m) return;
  }
}

// Calls fn(u) for every lower classmate u (class cls) whose view holds s: the mutual pairs
// in which s is the higher slot, as of the last update. They were within r + h of each
// other then, at the positions the cell order holds. members_only: only the classmates in
// the class's crowd.
template <typename Fn>
void GridAoi::for_each_holder(std::uint32_t s, std::uint8_t cls, Fn&& fn, bool members_only) const {
  const std::uint32_t i = order_index(s);
  if (i == kNotVisible) return;
  const Vec2 c{ord_x_[i], ord_y_[i]};
  const double outer = class_radius_[cls - 1u] + view_hysteresis_;
  const double reach = outer + sched_eps(outer);
  const double reach2 = reach * reach;
  for_each_span(c, reach, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t j = begin; j < end; ++j) {
      const std::uint32_t u = ord_slot_[j];
      const std::uint8_t byte = hot_[u].mutual_class;
      if (u >= s || class_of(byte) != cls || (members_only && !(byte & kCrowdBit))) continue;
      const double dx = ord_x_[j] - c.x;
      const double dy = ord_y_[j] - c.y;
      if (dx * dx + dy * dy > reach2) continue;
      if (find_slot(view_[u], s) != kNotVisible) fn(u);
    }
  });
}

// The outputs of list rebuilds and pair tests, on one thread: straight into the AOI's own
// buffers.
class GridAoi::DirectSink {
 public:
  explicit DirectSink(GridAoi& aoi)
      : aoi_(aoi), buckets_(aoi.wheel_.buckets()), mask_(aoi.wheel_.mask()) {}
  void emit(std::uint32_t a, std::uint32_t b, EventKind kind) { aoi_.emit(a, b, kind); }
  void file(std::uint32_t tick, const PairTest& test) { file_in(tick & mask_, test); }
  void file_in(std::uint32_t bucket, const PairTest& test) {
    aoi_.wheel_.append(buckets_[bucket], test);
  }
  void leave(const Leave& l) { aoi_.leaves_.push_back(l); }
  void enter(const Enter& e) { aoi_.enters_.push_back(e); }
  void expire(std::uint32_t bucket, std::uint32_t a) { aoi_.expiring_[bucket].push_back(a); }
  void join(std::uint32_t a) { aoi_.joiners_.push_back(a); }
  void visible(std::int64_t change) { aoi_.visible_pairs_ += static_cast<std::uint64_t>(change); }

 private:
  GridAoi& aoi_;
  // The wheel, kept in registers across the loops' stores (it is not resized in a phase).
  TestWheel::Bucket* const buckets_;
  const std::uint32_t mask_;
};

// The same, for one piece of a parallel phase: into the piece, merged later (merge(),
// grid_aoi.cpp).
class GridAoi::PieceSink {
 public:
  PieceSink(const GridAoi& aoi, Piece& piece) : aoi_(aoi), piece_(piece), mask_(aoi.wheel_.mask()) {
    piece.filed.resize(aoi.wheel_.size());
  }
  void emit(std::uint32_t a, std::uint32_t b, EventKind kind) {
    piece_.events.push_back({aoi_.slots_.handle_at(a), aoi_.slots_.handle_at(b), kind});
  }
  void file(std::uint32_t tick, const PairTest& test) { file_in(tick & mask_, test); }
  void file_in(std::uint32_t bucket, const PairTest& test) { piece_.filed[bucket].push_back(test); }
  void leave(const Leave& l) { piece_.leaves.push_back(l); }
  void enter(const Enter& e) { piece_.enters.push_back(e); }
  void expire(std::uint32_t bucket, std::uint32_t a) { piece_.expiring.push_back({bucket, a}); }
  void join(std::uint32_t a) { piece_.joiners.push_back(a); }
  void visible(std::int64_t change) { piece_.visible += change; }

 private:
  const GridAoi& aoi_;
  Piece& piece_;
  const std::uint32_t mask_;
};

}  // namespace zone::aoi
