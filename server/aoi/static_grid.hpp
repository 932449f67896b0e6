// The static layer's spatial index: circles that never move (trees, rocks, resource
// nodes), in a coarse uniform grid built once and never updated (the grid AOI article's
// multi-layer grid: a static layer beside the dynamic one). It answers two questions: which
// circles lie in a cell (what to send a client), and where a move from a free point ends
// when it runs into circles (collision). Each circle is filed twice: under the cell of its
// centre (for sending), and under every cell its bounding box touches (for collision, so
// a point test reads one cell's list however large the map's biggest circle is).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "aoi/grid_aoi.hpp"

namespace zone::aoi {

struct StaticCircle {
  double x = 0.0;
  double y = 0.0;
  double radius = 0.0;
};

class StaticGrid {
 public:
  StaticGrid() = default;
  // Each circle is filed under the cell holding its centre (clamped into the grid), and
  // under every cell its bounding box touches.
  StaticGrid(Bounds bounds, double cell_size, std::span<const StaticCircle> circles);
  // Cells a circle's bounding box touches (clamped into the grid): the entries it takes
  // in the collision lists (the map loader bounds their sum).
  static std::uint64_t cells_touched(Bounds bounds, double cell_size, const StaticCircle& c);

  bool empty() const { return circles_.empty(); }
  std::size_t size() const { return circles_.size(); }
  const StaticCircle& circle(std::uint32_t index) const { return circles_[index]; }
  double cell_size() const { return cell_size_; }
  std::uint32_t cols() const { return cols_; }
  std::uint32_t rows() const { return rows_; }
  std::uint32_t cell_count() const { return cols_ * rows_; }
  // The cell of a point (clamped into the grid).
  std::uint32_t cell_of(double x, double y) const;
  // Indices of the circles whose centre lies in cell (col, row), ascending.
  std::span<const std::uint32_t> cell(std::uint32_t col, std::uint32_t row) const;

  // True when p lies strictly inside a circle.
  bool blocked(Vec2 p) const;
  // Where a move from `from` (not inside any circle) towards `to` ends: `to` if it is
  // free; else, for the circle it entered, `to` pushed out to the rim along the radius if
  // that is no farther from `from` than `to` was, or else the move without its component
  // towards the circle's centre (along the tangent at `from`); repeated for a circle the
  // result enters, a few times, and `from` if that does not settle. The result is never
  // inside a circle and never farther from `from` than `to`.
  Vec2 resolve(Vec2 from, Vec2 to) const;
  // Line of sight: true when the segment from a to b passes strictly inside a circle
  // (touching a rim does not block). Reads the collision lists of the cells the segment
  // crosses (a grid walk), so the cost is the cells crossed plus their circles; a point
  // outside the grid is read in the nearest edge cell, as blocked() does. A non-finite
  // point is blocked.
  bool segment_blocked(Vec2 a, Vec2 b) const;

 private:
  // Whether the segment passes strictly inside one of the circles filed under cell k.
  bool segment_hits_cell(Vec2 a, Vec2 b, std::uint32_t k) const;
  // The first circle (lowest index) holding p strictly inside, or -1.
  std::int64_t first_containing(Vec2 p) const;

  // The column (row) range of a circle's bounding box, clamped into the grid.
  struct Span {
    std::uint32_t c0, c1, r0, r1;
  };
  Span span_of(const StaticCircle& c) const;

  Bounds bounds_{};
  double cell_size_ = 1.0;
  std::uint32_t cols_ = 0;
  std::uint32_t rows_ = 0;
  std::vector<StaticCircle> circles_;
  std::vector<std::uint32_t> cell_start_;   // cols * rows + 1 offsets into by_cell_
  std::vector<std::uint32_t> by_cell_;      // circle indices by the cell of their centre
  std::vector<std::uint32_t> touch_start_;  // cols * rows + 1 offsets into touching_
  std::vector<std::uint32_t> touching_;     // circle indices by every cell they touch
};

}  // namespace zone::aoi
