#include "aoi/static_grid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace zone::aoi {

namespace {

std::uint32_t cells_along(double extent, double cell_size) {
  return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::ceil(extent / cell_size)));
}

double dist2(Vec2 a, double x, double y) {
  const double dx = a.x - x, dy = a.y - y;
  return dx * dx + dy * dy;
}

}  // namespace

StaticGrid::StaticGrid(Bounds bounds, double cell_size, std::span<const StaticCircle> circles)
    : bounds_(bounds),
      cell_size_(cell_size),
      cols_(cells_along(bounds.max.x - bounds.min.x, cell_size)),
      rows_(cells_along(bounds.max.y - bounds.min.y, cell_size)),
      circles_(circles.begin(), circles.end()) {
  // Counting sorts by cell: one pass to count, a prefix sum, one pass to place. Circles
  // stay in index order within a cell.
  const std::size_t cells = static_cast<std::size_t>(cols_) * rows_;
  cell_start_.assign(cells + 1, 0);
  touch_start_.assign(cells + 1, 0);
  for (const StaticCircle& c : circles_) {
    ++cell_start_[cell_of(c.x, c.y) + 1];
    const Span sp = span_of(c);
    for (std::uint32_t r = sp.r0; r <= sp.r1; ++r) {
      for (std::uint32_t col = sp.c0; col <= sp.c1; ++col) ++touch_start_[r * cols_ + col + 1];
    }
  }
  for (std::size_t i = 1; i <= cells; ++i) {
    cell_start_[i] += cell_start_[i - 1];
    touch_start_[i] += touch_start_[i - 1];
  }
  by_cell_.resize(circles_.size());
  touching_.resize(touch_start_.back());
  std::vector<std::uint32_t> next(cell_start_.begin(), cell_start_.end() - 1);
  std::vector<std::uint32_t> next_touch(touch_start_.begin(), touch_start_.end() - 1);
  for (std::uint32_t i = 0; i < circles_.size(); ++i) {
    const StaticCircle& c = circles_[i];
    by_cell_[next[cell_of(c.x, c.y)]++] = i;
    const Span sp = span_of(c);
    for (std::uint32_t r = sp.r0; r <= sp.r1; ++r) {
      for (std::uint32_t col = sp.c0; col <= sp.c1; ++col) {
        touching_[next_touch[r * cols_ + col]++] = i;
      }
    }
  }
}

std::uint64_t StaticGrid::cells_touched(Bounds bounds, double cell_size, const StaticCircle& c) {
  StaticGrid shape;
  shape.bounds_ = bounds;
  shape.cell_size_ = cell_size;
  shape.cols_ = cells_along(bounds.max.x - bounds.min.x, cell_size);
  shape.rows_ = cells_along(bounds.max.y - bounds.min.y, cell_size);
  const Span sp = shape.span_of(c);
  return static_cast<std::uint64_t>(sp.c1 - sp.c0 + 1) * (sp.r1 - sp.r0 + 1);
}

StaticGrid::Span StaticGrid::span_of(const StaticCircle& c) const {
  const auto along = [&](double v, double lo, std::uint32_t n) {
    return static_cast<std::uint32_t>(
        std::clamp(std::floor((v - lo) / cell_size_), 0.0, static_cast<double>(n - 1)));
  };
  return {along(c.x - c.radius, bounds_.min.x, cols_), along(c.x + c.radius, bounds_.min.x, cols_),
          along(c.y - c.radius, bounds_.min.y, rows_), along(c.y + c.radius, bounds_.min.y, rows_)};
}

std::uint32_t StaticGrid::cell_of(double x, double y) const {
  const auto along = [&](double v, double lo, std::uint32_t n) {
    const double c = std::floor((v - lo) / cell_size_);
    return static_cast<std::uint32_t>(std::clamp(c, 0.0, static_cast<double>(n - 1)));
  };
  return along(y, bounds_.min.y, rows_) * cols_ + along(x, bounds_.min.x, cols_);
}

std::span<const std::uint32_t> StaticGrid::cell(std::uint32_t col, std::uint32_t row) const {
  if (col >= cols_ || row >= rows_) return {};
  const std::uint32_t k = row * cols_ + col;
  return {by_cell_.data() + cell_start_[k], cell_start_[k + 1] - cell_start_[k]};
}

std::int64_t StaticGrid::first_containing(Vec2 p) const {
  if (circles_.empty() || !std::isfinite(p.x) || !std::isfinite(p.y)) return -1;
  // Every circle holding p touches p's cell (a point outside the grid is read in the
  // nearest edge cell, where every circle reaching out that far is filed too).
  const std::uint32_t k = cell_of(p.x, p.y);
  for (std::uint32_t j = touch_start_[k]; j < touch_start_[k + 1]; ++j) {
    const StaticCircle& c = circles_[touching_[j]];
    if (dist2(p, c.x, c.y) < c.radius * c.radius) return touching_[j];  // lowest index first
  }
  return -1;
}

bool StaticGrid::blocked(Vec2 p) const {
  return first_containing(p) >= 0;
}

Vec2 StaticGrid::resolve(Vec2 from, Vec2 to) const {
  const double step2 = dist2(from, to.x, to.y);
  Vec2 q = to;
  // Circles may overlap: a way out of one can lead into another. A few rounds settle any
  // sensible map; what does not settle stays where it was. Every round keeps q within
  // the step of `from`, so the result never moves farther than asked.
  for (int round = 0;; ++round) {
    const std::int64_t hit = first_containing(q);
    if (hit < 0) return q;
    if (round == 4) return from;
    const StaticCircle& c = circles_[static_cast<std::size_t>(hit)];
    // Just outside the rim, so rounding never leaves a point inside.
    const double rim = c.radius * (1.0 + 1e-9) + 1e-9;
    // Up to the rim: q pushed out along the radius, if that is no farther than the step
    // (it reaches the rock and slides round it)...
    const double dx = q.x - c.x, dy = q.y - c.y;
    const double d = std::hypot(dx, dy);
    if (d > 0.0) {
      const Vec2 out{c.x + dx / d * rim, c.y + dy / d * rim};
      if (dist2(from, out.x, out.y) <= step2) {
        q = out;
        continue;
      }
    }
    // ...else the move without its part towards the centre: along the tangent at
    // `from`, which never comes closer to the centre than `from` is.
    const double nx = from.x - c.x, ny = from.y - c.y;
    const double n = std::hypot(nx, ny);
    if (n == 0.0) return from;
    const double mx = q.x - from.x, my = q.y - from.y;
    const double inward = std::min(0.0, (mx * nx + my * ny) / n);
    q = {from.x + mx - inward * nx / n, from.y + my - inward * ny / n};
  }
}

bool StaticGrid::segment_hits_cell(Vec2 a, Vec2 b, std::uint32_t k) const {
  const double dx = b.x - a.x, dy = b.y - a.y;
  const double len2 = dx * dx + dy * dy;
  for (std::uint32_t j = touch_start_[k]; j < touch_start_[k + 1]; ++j) {
    const StaticCircle& c = circles_[touching_[j]];
    // The segment's point closest to the centre.
    double t = len2 > 0.0 ? ((c.x - a.x) * dx + (c.y - a.y) * dy) / len2 : 0.0;
    t = std::clamp(t, 0.0, 1.0);
    const Vec2 p{a.x + t * dx, a.y + t * dy};
    if (dist2(p, c.x, c.y) < c.radius * c.radius) return true;
  }
  return false;
}

bool StaticGrid::segment_blocked(Vec2 a, Vec2 b) const {
  if (!std::isfinite(a.x) || !std::isfinite(a.y) || !std::isfinite(b.x) || !std::isfinite(b.y)) {
    return true;
  }
  if (circles_.empty()) return false;
  // A grid walk (Amanatides and Woo) in cell units over the unclamped grid; each cell
  // visited is read clamped into the grid, where circles reaching beyond it are filed.
  // Every point of the segment inside a circle lies in the circle's bounding box, so in a
  // cell the walk visits and the circle is filed under.
  const double ax = (a.x - bounds_.min.x) / cell_size_, ay = (a.y - bounds_.min.y) / cell_size_;
  const double bx = (b.x - bounds_.min.x) / cell_size_, by = (b.y - bounds_.min.y) / cell_size_;
  auto cx = static_cast<std::int64_t>(std::floor(ax));
  auto cy = static_cast<std::int64_t>(std::floor(ay));
  const auto ex = static_cast<std::int64_t>(std::floor(bx));
  const auto ey = static_cast<std::int64_t>(std::floor(by));
  const double dx = bx - ax, dy = by - ay;
  const int sx = dx > 0.0 ? 1 : -1, sy = dy > 0.0 ? 1 : -1;
  const double inf = std::numeric_limits<double>::infinity();
  // t (0..1 along the segment) at which the walk crosses the next column / row line,
  // and the t one whole cell takes.
  const double step_x = dx != 0.0 ? std::abs(1.0 / dx) : inf;
  const double step_y = dy != 0.0 ? std::abs(1.0 / dy) : inf;
  double next_x = dx != 0.0 ? ((sx > 0 ? std::floor(ax) + 1.0 : std::floor(ax)) - ax) / dx : inf;
  double next_y = dy != 0.0 ? ((sy > 0 ? std::floor(ay) + 1.0 : std::floor(ay)) - ay) / dy : inf;
  const auto clamp_to = [](std::int64_t v, std::uint32_t n) {
    return static_cast<std::uint32_t>(std::clamp<std::int64_t>(v, 0, std::int64_t{n} - 1));
  };
  std::uint32_t last = 0xFFFFFFFFu;
  for (std::int64_t guard = std::abs(ex - cx) + std::abs(ey - cy) + 2; guard > 0; --guard) {
    const std::uint32_t k = clamp_to(cy, rows_) * cols_ + clamp_to(cx, cols_);
    if (k != last && segment_hits_cell(a, b, k)) return true;
    last = k;
    if (cx == ex && cy == ey) break;
    if (next_x < next_y) {
      cx += sx;
      next_x += step_x;
    } else {
      cy += sy;
      next_y += step_y;
    }
  }
  return false;
}

}  // namespace zone::aoi
