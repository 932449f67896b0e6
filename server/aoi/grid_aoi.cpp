#include "aoi/grid_aoi.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace zone::aoi {
namespace {

constexpr std::uint8_t kAlive = 1;
constexpr std::uint8_t kObserver = 2;
constexpr std::uint8_t kRemoved = 4;

bool finite_coordinate(double v) {
  return std::isfinite(v) && std::abs(v) <= GridAoi::kMaxCoordinate;
}
bool valid_position(Vec2 p) {
  return finite_coordinate(p.x) && finite_coordinate(p.y);
}
bool valid_radius(double r) {
  return std::isfinite(r) && r >= 0.0 && r <= GridAoi::kMaxCoordinate;
}

// Slack added to every broad-phase radius so that float rounding in the filter can only
// admit extra candidates, never drop one the exact double test would accept.
double filter_margin(Vec2 c, double radius) {
  return 1e-5 * (std::abs(c.x) + std::abs(c.y) + radius) + 1e-3;
}

}  // namespace

const char* to_string(ConfigError e) {
  switch (e) {
    case ConfigError::kNone:
      return "ok";
    case ConfigError::kBadBounds:
      return "world bounds must be finite with min < max on both axes";
    case ConfigError::kBadCellSize:
      return "cell size must be a finite number > 0";
    case ConfigError::kTooManyCells:
      return "cell size too small for the world bounds (grid over 16 Mi cells)";
    case ConfigError::kBadHysteresis:
      return "hysteresis must be a finite number >= 0";
  }
  return "unknown";
}

ConfigError GridAoi::validate(const GridConfig& c) {
  const Bounds& b = c.bounds;
  if (!valid_position(b.min) || !valid_position(b.max) || !(b.min.x < b.max.x) ||
      !(b.min.y < b.max.y)) {
    return ConfigError::kBadBounds;
  }
  if (!std::isfinite(c.cell_size) || !(c.cell_size > 0.0)) return ConfigError::kBadCellSize;
  const double cols = std::ceil((b.max.x - b.min.x) / c.cell_size);
  const double rows = std::ceil((b.max.y - b.min.y) / c.cell_size);
  if (cols * rows > static_cast<double>(kMaxCells)) return ConfigError::kTooManyCells;
  if (!std::isfinite(c.hysteresis) || c.hysteresis < 0.0) return ConfigError::kBadHysteresis;
  return ConfigError::kNone;
}

GridAoi::GridAoi(const GridConfig& config) : config_(config) {
  if (const ConfigError e = validate(config); e != ConfigError::kNone) {
    throw std::invalid_argument(to_string(e));
  }
  resize_grid();
}

void GridAoi::resize_grid() {
  const Bounds& b = config_.bounds;
  cols_ =
      std::max(1u, static_cast<std::uint32_t>(std::ceil((b.max.x - b.min.x) / config_.cell_size)));
  rows_ =
      std::max(1u, static_cast<std::uint32_t>(std::ceil((b.max.y - b.min.y) / config_.cell_size)));
  inv_cell_ = 1.0 / config_.cell_size;
  cell_start_.assign(static_cast<std::size_t>(cols_) * rows_ + 1, 0);
}

// Clamping keeps the mapping monotone, which is all the broad phase needs: if
// |x_a - x_b| <= R then col(x_b) lies in [col(x_a - R), col(x_a + R)] even for positions
// outside the world bounds.
std::uint32_t GridAoi::cell_col(double x) const {
  const double f = (x - config_.bounds.min.x) * inv_cell_;
  if (!(f > 0.0)) return 0;
  if (f >= static_cast<double>(cols_)) return cols_ - 1;
  return static_cast<std::uint32_t>(f);
}

std::uint32_t GridAoi::cell_row(double y) const {
  const double f = (y - config_.bounds.min.y) * inv_cell_;
  if (!(f > 0.0)) return 0;
  if (f >= static_cast<double>(rows_)) return rows_ - 1;
  return static_cast<std::uint32_t>(f);
}

template <typename Fn>
void GridAoi::for_each_row_span(Vec2 c, double radius, double inner_radius, Fn&& fn) const {
  const double reach = radius + filter_margin(c, radius);
  const std::uint32_t row0 = cell_row(c.y - reach);
  const std::uint32_t row1 = cell_row(c.y + reach);
  const double cs = config_.cell_size;
  const Bounds& b = config_.bounds;
  if (row1 - row0 < 3) {
    // Cells about as large as the disc: narrowing each row to the chord would save few
    // candidates and cost a square root per row, so every row takes the full width.
    const std::uint32_t col0 = cell_col(c.x - reach - 1e-3);
    const std::uint32_t col1 = cell_col(c.x + reach + 1e-3);
    for (std::uint32_t row = row0; row <= row1; ++row) {
      const std::uint32_t base = row * cols_;
      const std::uint32_t begin = cell_start_[base + col0];
      const std::uint32_t end = cell_start_[base + col1 + 1];
      if (begin != end) fn(begin, end, end, end);
    }
    return;
  }
  // Cells wholly within inner_radius (less a rounding margin) need no distance test. Border
  // rows and columns never qualify: they also hold the entities clamped into them.
  const double r_in = inner_radius - filter_margin(c, inner_radius);
  for (std::uint32_t row = row0; row <= row1; ++row) {
    // Narrow the column range to the disc's chord over this row. Border rows also hold
    // every entity clamped into them, so they extend to infinity on their outer side.
    const double lo = row == 0 ? -INFINITY : b.min.y + row * cs;
    const double hi = row + 1 == rows_ ? INFINITY : b.min.y + (row + 1) * cs;
    const double dy = std::max({0.0, lo - c.y, c.y - hi});
    const double half = std::sqrt(std::max(0.0, reach * reach - dy * dy)) + 1e-3;
    const std::uint32_t base = row * cols_;
    const std::uint32_t col0 = cell_col(c.x - half);
    const std::uint32_t col1 = cell_col(c.x + half);
    const std::uint32_t begin = cell_start_[base + col0];
    const std::uint32_t end = cell_start_[base + col1 + 1];
    if (begin == end) continue;
    std::uint32_t inner_begin = end, inner_end = end;
    const double far_dy = std::max(std::abs(c.y - lo), std::abs(c.y - hi));  // inf on borders
    if (far_dy < r_in) {
      const double half_in = std::sqrt(r_in * r_in - far_dy * far_dy);
      const double first = std::ceil((c.x - half_in - b.min.x) * inv_cell_);
      const double last = std::floor((c.x + half_in - b.min.x) * inv_cell_) - 1.0;
      const double in0 = std::max({first, 1.0, static_cast<double>(col0)});
      const double in1 =
          std::min({last, static_cast<double>(cols_) - 2.0, static_cast<double>(col1)});
      if (in0 <= in1) {
        inner_begin = cell_start_[base + static_cast<std::uint32_t>(in0)];
        inner_end = cell_start_[base + static_cast<std::uint32_t>(in1) + 1];
      }
    }
    fn(begin, end, inner_begin, inner_end);
  }
}

bool GridAoi::usable(EntityHandle h) const {
  return slots_.contains(h) && !(flags_[h.index] & kRemoved);
}

EntityHandle GridAoi::add(Vec2 position, double view_radius, bool observer) {
  if (!valid_position(position) || !valid_radius(view_radius)) return {};
  const EntityHandle h = slots_.allocate();
  if (h.index >= pos_.size()) {
    const std::size_t n = h.index + 1;
    pos_.resize(n);
    radius_.resize(n);
    flags_.resize(n);
    view_.resize(n);
    stamp_.resize(n);
    cell_of_.resize(n);
  }
  pos_[h.index] = position;
  radius_[h.index] = view_radius;
  flags_[h.index] = static_cast<std::uint8_t>(kAlive | (observer ? kObserver : 0));
  stamp_[h.index] = 0;
  return h;
}

bool GridAoi::remove(EntityHandle h) {
  if (!usable(h)) return false;
  flags_[h.index] |= kRemoved;
  removed_.push_back(h.index);
  return true;
}

bool GridAoi::move(EntityHandle h, Vec2 position) {
  if (!usable(h) || !valid_position(position)) return false;
  pos_[h.index] = position;
  return true;
}

std::size_t GridAoi::move_batch(std::span<const Move> moves) {
  std::size_t refused = 0;
  for (const Move& m : moves) refused += move(m.handle, m.position) ? 0 : 1;
  return refused;
}

bool GridAoi::set_view_radius(EntityHandle h, double view_radius) {
  if (!usable(h) || !valid_radius(view_radius)) return false;
  radius_[h.index] = view_radius;
  return true;
}

bool GridAoi::set_observer(EntityHandle h, bool observer) {
  if (!usable(h)) return false;
  flags_[h.index] = static_cast<std::uint8_t>(observer ? (flags_[h.index] | kObserver)
                                                       : (flags_[h.index] & ~kObserver));
  return true;
}

ConfigError GridAoi::set_cell_size(double cell_size) {
  GridConfig next = config_;
  next.cell_size = cell_size;
  if (const ConfigError e = validate(next); e != ConfigError::kNone) return e;
  pending_cell_size_ = cell_size;
  return ConfigError::kNone;
}

ConfigError GridAoi::set_hysteresis(double hysteresis) {
  GridConfig next = config_;
  next.hysteresis = hysteresis;
  if (const ConfigError e = validate(next); e != ConfigError::kNone) return e;
  config_ = next;
  return ConfigError::kNone;
}

void GridAoi::rebuild_cells() {
  const std::uint32_t capacity = slots_.capacity();
  const std::size_t cells = static_cast<std::size_t>(cols_) * rows_;
  std::fill(cell_start_.begin(), cell_start_.end(), 0u);
  std::uint32_t count = 0;
  for (std::uint32_t s = 0; s < capacity; ++s) {
    if ((flags_[s] & (kAlive | kRemoved)) != kAlive) continue;
    const std::uint32_t c = cell_row(pos_[s].y) * cols_ + cell_col(pos_[s].x);
    cell_of_[s] = c;
    ++cell_start_[c];
    ++count;
  }
  // Inclusive prefix sums give each cell's end; filling backwards turns them into starts
  // and keeps entities of one cell in ascending slot order (a stable sort).
  std::uint32_t running = 0;
  for (std::size_t c = 0; c < cells; ++c) {
    running += cell_start_[c];
    cell_start_[c] = running;
  }
  cell_start_[cells] = count;
  if (sorted_slot_.size() < count) {
    sorted_xf_.resize(count);
    sorted_yf_.resize(count);
    sorted_x_.resize(count);
    sorted_y_.resize(count);
    sorted_slot_.resize(count);
    hits_.resize(count);
  }
  for (std::uint32_t s = capacity; s-- > 0;) {
    if ((flags_[s] & (kAlive | kRemoved)) != kAlive) continue;
    const std::uint32_t i = --cell_start_[cell_of_[s]];
    sorted_x_[i] = pos_[s].x;
    sorted_y_[i] = pos_[s].y;
    sorted_xf_[i] = static_cast<float>(pos_[s].x);
    sorted_yf_[i] = static_cast<float>(pos_[s].y);
    sorted_slot_[i] = s;
  }
}

std::uint32_t GridAoi::next_epoch() {
  if (epoch_ >= 0xFFFFFFF0u) {  // wrap: forget every old mark
    std::fill(stamp_.begin(), stamp_.end(), 0u);
    epoch_ = 0;
  }
  epoch_ += 2;
  return epoch_;
}

// One observer's view diff. Old members are marked `old`; each broad-phase hit inside
// r + h that carries the mark is re-marked `kept`; a hit inside r without the mark
// enters. Old members still marked `old` afterwards are out of r + h (or gone): they leave.
void GridAoi::update_observer(std::uint32_t a) {
  std::vector<std::uint32_t>& view = view_[a];
  const EntityHandle observer = slots_.handle_at(a);
  if ((flags_[a] & (kObserver | kRemoved)) != kObserver) {
    for (const std::uint32_t t : view) {
      events_.push_back({observer, slots_.handle_at(t), EventKind::kLeave});
    }
    view.clear();
    return;
  }

  const std::uint32_t old_mark = next_epoch();
  const std::uint32_t kept_mark = old_mark + 1;
  for (const std::uint32_t t : view) stamp_[t] = old_mark;

  const Vec2 c = pos_[a];
  const double r = radius_[a];
  const double outer = r + config_.hysteresis;
  const double outer2 = outer * outer;
  const double r2 = r * r;
  const double reach = outer + filter_margin(c, outer);
  const float reach2 = static_cast<float>(reach * reach);
  const float cxf = static_cast<float>(c.x);
  const float cyf = static_cast<float>(c.y);

  // Branch-free float filter over each contiguous row span; survivors are compacted into
  // hits_. (The compaction keeps the compiler from vectorising it; an explicit SSE2
  // version with movemask was measured slower here: see docs/benchmarks.md.)
  std::uint32_t n = 0;
  std::uint32_t* hits = hits_.data();
  const float* xs = sorted_xf_.data();
  const float* ys = sorted_yf_.data();
  const auto filter = [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t j = begin; j < end; ++j) {
      const float dx = xs[j] - cxf;
      const float dy = ys[j] - cyf;
      hits[n] = j;
      n += (dx * dx + dy * dy <= reach2) ? 1u : 0u;
    }
  };
  const std::size_t old_size = view.size();
  std::size_t kept = 0;
  // Entities of cells wholly inside r are in view whatever their exact distance: only
  // whether they were before decides between kept and enter.
  const auto take_all = [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t j = begin; j < end; ++j) {
      const std::uint32_t t = sorted_slot_[j];
      if (t == a) continue;
      if (stamp_[t] == old_mark) {
        stamp_[t] = kept_mark;
        ++kept;
      } else {
        view.push_back(t);
        events_.push_back({observer, slots_.handle_at(t), EventKind::kEnter});
      }
    }
  };
  for_each_row_span(c, outer, r,
                    [&](std::uint32_t begin, std::uint32_t end, std::uint32_t inner_begin,
                        std::uint32_t inner_end) {
                      filter(begin, inner_begin);
                      take_all(inner_begin, inner_end);
                      filter(inner_end, end);
                    });

  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t j = hits[k];
    const std::uint32_t t = sorted_slot_[j];
    const double dx = sorted_x_[j] - c.x;
    const double dy = sorted_y_[j] - c.y;
    const double d2 = dx * dx + dy * dy;
    if (d2 > outer2 || t == a) continue;
    if (stamp_[t] == old_mark) {
      stamp_[t] = kept_mark;
      ++kept;
    } else if (d2 <= r2) {
      view.push_back(t);
      events_.push_back({observer, slots_.handle_at(t), EventKind::kEnter});
    }
  }
  if (kept == old_size) return;

  std::size_t w = 0;
  for (std::size_t i = 0; i < view.size(); ++i) {
    const std::uint32_t t = view[i];
    if (i < old_size && stamp_[t] == old_mark) {
      events_.push_back({observer, slots_.handle_at(t), EventKind::kLeave});
    } else {
      view[w++] = t;
    }
  }
  view.resize(w);
}

void GridAoi::release_removed() {
  for (const std::uint32_t s : removed_) {
    flags_[s] = 0;
    view_[s].clear();
    slots_.free(slots_.handle_at(s));
  }
  removed_.clear();
}

std::span<const VisibilityEvent> GridAoi::update() {
  events_.clear();
  if (pending_cell_size_ > 0.0) {
    config_.cell_size = pending_cell_size_;
    pending_cell_size_ = 0.0;
    resize_grid();
  }
  rebuild_cells();
  const std::uint32_t capacity = slots_.capacity();
  for (std::uint32_t s = 0; s < capacity; ++s) {
    if (!(flags_[s] & kAlive)) continue;
    if ((flags_[s] & kObserver) || !view_[s].empty()) update_observer(s);
  }
  release_removed();
  return events_;
}

Vec2 GridAoi::position(EntityHandle h) const {
  return pos_[h.index];
}
double GridAoi::view_radius(EntityHandle h) const {
  return radius_[h.index];
}
bool GridAoi::is_observer(EntityHandle h) const {
  return (flags_[h.index] & kObserver) != 0;
}

std::span<const std::uint32_t> GridAoi::view_slots(EntityHandle observer) const {
  if (!slots_.contains(observer)) return {};
  return view_[observer.index];
}

void GridAoi::view_set(EntityHandle observer, std::vector<EntityHandle>& out) const {
  for (const std::uint32_t t : view_slots(observer)) out.push_back(slots_.handle_at(t));
}

bool GridAoi::sees(EntityHandle observer, EntityHandle target) const {
  if (!slots_.contains(target)) return false;
  const auto v = view_slots(observer);
  return std::find(v.begin(), v.end(), target.index) != v.end();
}

void GridAoi::query_radius(Vec2 center, double radius, std::vector<EntityHandle>& out) const {
  if (!valid_position(center) || !valid_radius(radius)) return;
  const double r2 = radius * radius;
  for_each_row_span(center, radius, 0.0,
                    [&](std::uint32_t begin, std::uint32_t end, std::uint32_t, std::uint32_t) {
                      for (std::uint32_t j = begin; j < end; ++j) {
                        const double dx = sorted_x_[j] - center.x;
                        const double dy = sorted_y_[j] - center.y;
                        if (dx * dx + dy * dy <= r2)
                          out.push_back(slots_.handle_at(sorted_slot_[j]));
                      }
                    });
}

GridStats GridAoi::stats() const {
  GridStats s;
  const std::size_t cells = static_cast<std::size_t>(cols_) * rows_;
  s.cells = static_cast<std::uint32_t>(cells);
  for (std::size_t c = 0; c < cells; ++c) {
    const std::uint32_t pop = cell_start_[c + 1] - cell_start_[c];
    if (pop) ++s.occupied_cells;
    s.max_cell_population = std::max(s.max_cell_population, pop);
  }
  const std::uint32_t capacity = slots_.capacity();
  for (std::uint32_t i = 0; i < capacity; ++i) {
    if ((flags_[i] & (kAlive | kRemoved)) != kAlive) continue;
    ++s.entities;
    if (flags_[i] & kObserver) ++s.observers;
    s.visible_pairs += view_[i].size();
  }
  return s;
}

}  // namespace zone::aoi
