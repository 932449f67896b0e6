#include "aoi/grid_aoi.hpp"

#include "aoi/simd.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace zone::aoi {
namespace {

constexpr std::uint8_t kAlive = 1;
constexpr std::uint8_t kObserver = 2;
constexpr std::uint8_t kRemoved = 4;
constexpr std::uint8_t kAdded = 8;     // added since the last update
constexpr std::uint8_t kRebuild = 16;  // its candidate list must be rebuilt at the next update
constexpr std::uint8_t kListed = 32;   // has a view or scheduled re-tests (an observer's list)
constexpr std::uint8_t kReclass = 64;  // left its mutual class since the last update
constexpr std::uint8_t kJoin = 128;    // may join the mutual class of its radius (try_join)

constexpr std::uint32_t kVisibleBit = 0x80000000u;  // in PairTest::target
constexpr std::uint32_t kNotVisible = 0xFFFFFFFFu;  // view index of a hidden pair
// A tick's pair tests name random slots: their records are fetched this many tests ahead.
constexpr std::uint32_t kTestAhead = 8;
// With workers, a tick's list rebuilds are cut into pieces of this many lists, and a phase
// runs on the workers only when it has at least kMinPieces pieces (a chunk of pair tests
// is a piece): below that, waking the workers and merging their output costs more than
// it saves (measured on the standard workloads, docs/benchmarks.md).
constexpr std::uint32_t kListsPerPiece = 64;
constexpr std::uint32_t kMinPieces = 8;

// A list lives this many ticks when the hysteresis alone does not allow more (the skin
// beyond r is then 2 * max_step * (kLifeTarget - 1)); and never more than kMaxLife, so that
// the 8-bit versions in a pair test (bumped at most once per tick) cannot wrap around
// while the test waits. 32 measured best of 16, 24, 32, 48 and 64 on the standard
// workloads once mutual pairs halved the rebuilds' work (docs/benchmarks.md).
constexpr std::uint32_t kLifeTarget = 32;
constexpr std::uint32_t kMaxLife = 128;

// With a displacement bound, the cell order is rewritten at least every this many ticks
// (earlier when an entity arrives, goes or jumps to another cell); in between, the
// entities that walked into another cell stay listed under their old one, and queries
// reach the bound times the ticks since further (GridAoi::merge_interval).
constexpr std::uint32_t kMergeTicks = 8;

// (NaN and infinities fail the comparison.)
bool finite_coordinate(double v) {
  return std::abs(v) <= GridAoi::kMaxCoordinate;
}
bool valid_position(Vec2 p) {
  return finite_coordinate(p.x) && finite_coordinate(p.y);
}
bool valid_radius(double r) {
  return std::isfinite(r) && r >= 0.0 && r <= GridAoi::kMaxCoordinate;
}

// Bound on the rounding error of a distance or threshold of magnitude up to `scale`
// computed in double (the true error is below 1e-15 relative; this is a million times
// that), used to keep the scheduling conservative.
double sched_eps(double scale) {
  return 1e-9 * (1.0 + scale);
}

// Index of slot in v, or kNotVisible.
std::uint32_t find_slot(const std::vector<std::uint32_t>& v, std::uint32_t slot) {
  const auto n = static_cast<std::uint32_t>(v.size());
  const std::uint32_t i = simd::find_u32(v.data(), n, slot);
  return i < n ? i : kNotVisible;
}

// Whether observers of these mutual classes are classmates (class 0 is no class).
bool classmates(std::uint8_t a, std::uint8_t b) {
  return a != 0 && a == b;
}

// Ticks (beyond the next) in which two entities, each moving at most the bound, cannot
// close a gap of `gap` metres (their distance changes by at most 1 / inv_two_step per
// tick), capped at `life`. The gap of a visible pair at distance d is r + h - d - 2 eps (to
// a leave), of a hidden one d - r - 3 eps (to an enter), eps bounding the rounding of d and
// of the thresholds (sched_eps). (A free function: the hot loops pass their own copies of
// the members.)
std::uint32_t ticks_for_gap(double gap, double inv_two_step, double life) {
  return static_cast<std::uint32_t>(std::min(std::max(gap, 0.0) * inv_two_step, life));
}

// The column (or row) of coordinate v in a grid whose first cell starts at `min`.
std::uint32_t cell_index(double v, double min, double inv_cell, std::uint32_t count) {
  const double f = (v - min) * inv_cell;
  if (!(f > 0.0)) return 0;
  if (f >= static_cast<double>(count)) return count - 1;
  return static_cast<std::uint32_t>(f);
}

// Spreads the expiry ticks of lists built together (at start-up, after a settings change).
std::uint32_t stagger(std::uint32_t slot, std::uint32_t life) {
  return ((slot * 2654435761u) >> 8) % life;
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
    case ConfigError::kBadMaxStep:
      return "max step must be a number >= 0 (infinity: unbounded)";
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
  if (!(c.max_step >= 0.0)) return ConfigError::kBadMaxStep;
  return ConfigError::kNone;
}

GridAoi::GridAoi(const GridConfig& config) : config_(config) {
  if (const ConfigError e = validate(config); e != ConfigError::kNone) {
    throw std::invalid_argument(to_string(e));
  }
  resize_grid();
  apply_settings();
}

void GridAoi::resize_grid() {
  const Bounds& b = config_.bounds;
  cols_ =
      std::max(1u, static_cast<std::uint32_t>(std::ceil((b.max.x - b.min.x) / config_.cell_size)));
  rows_ =
      std::max(1u, static_cast<std::uint32_t>(std::ceil((b.max.y - b.min.y) / config_.cell_size)));
  inv_cell_ = 1.0 / config_.cell_size;
}

// Derives the scheduling constants from the hysteresis and the displacement bound B.
// Two entities that both move at most B per tick change their distance by at most 2B per
// tick. A list built at tick t0 holds every target within r + skin_; one beyond that
// cannot come within r before t0 + life_ when skin_ >= 2B (life_ - 1). The view set needs
// r + h in any case, so the skin is at least h.
void GridAoi::apply_settings() {
  compute_schedule();
  std::uint32_t buckets = 1;
  while (buckets < life_) buckets <<= 1;
  for (Bucket& bucket : wheel_) release_bucket(bucket);
  wheel_.resize(buckets);
  wheel_mask_ = buckets - 1;
  expiring_.resize(buckets);
}

void GridAoi::compute_schedule() {
  const double h = config_.hysteresis;
  const double bound = config_.max_step;
  if (!(bound < 1e300)) {  // infinite, or too large to schedule with: no bound
    life_ = 1;
    skin_ = h;
    step_check_ = INFINITY;
    step_check2_ = INFINITY;
    inv_two_step_ = 0.0;
    return;
  }
  // The check admits B (1 + 1e-9) plus a few nanometres, so that a step of exactly B
  // computed in rounded arithmetic anywhere within +-kMaxCoordinate (ulp 1.9e-9) passes;
  // the schedule assumes a little more still, so that any move that passes the check (in
  // rounded arithmetic) is within the bound the schedule uses.
  const double step_check = bound * (1.0 + 1e-9) + 8e-9;
  step_check_ = step_check;
  step_check2_ = step_check * step_check;
  const double two_step = 2.0 * step_check * (1.0 + 1e-9);
  const double wanted = std::max(h, two_step * (kLifeTarget - 1));
  const double extra = std::floor(wanted / two_step);
  life_ = 1 + static_cast<std::uint32_t>(std::min(extra, static_cast<double>(kMaxLife - 1)));
  skin_ = std::max(h, two_step * (life_ - 1));
  inv_two_step_ = 1.0 / two_step;
}

// Clamping keeps the mapping monotone, which is all the broad phase needs: if
// |x_a - x_b| <= R then col(x_b) lies in [col(x_a - R), col(x_a + R)] even for positions
// outside the world bounds.
std::uint32_t GridAoi::cell_col(double x) const {
  return cell_index(x, config_.bounds.min.x, inv_cell_, cols_);
}

std::uint32_t GridAoi::cell_row(double y) const {
  return cell_index(y, config_.bounds.min.y, inv_cell_, rows_);
}

template <typename Fn>
void GridAoi::for_each_span(Vec2 c, double reach, Fn&& fn) const {
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
    const std::uint32_t begin = cell_begin_[j];
    while (j < m && keys[j] <= hi_key) ++j;
    fn(begin, cell_begin_[j]);
    if (j == m) return;
  }
}

bool GridAoi::usable(EntityHandle h) const {
  return slots_.contains(h) && !(hot_[h.index].flags & kRemoved);
}

// The mutual class of observers of this radius; 0 (none) for a new radius once 255 radii
// have had one (ids are never reused, so that one id names one radius for good).
std::uint8_t GridAoi::class_for(double radius) {
  for (std::size_t k = 0; k < class_radius_.size(); ++k) {
    if (class_radius_[k] == radius) return static_cast<std::uint8_t>(k + 1);
  }
  if (class_radius_.size() == 255) return 0;
  class_radius_.push_back(radius);
  return static_cast<std::uint8_t>(class_radius_.size());
}

EntityHandle GridAoi::add(Vec2 position, double view_radius, bool observer) {
  if (!valid_position(position) || !valid_radius(view_radius)) return {};
  const EntityHandle h = slots_.allocate();
  if (h.index >= hot_.size()) {
    const std::size_t n = h.index + 1;
    hot_.resize(n);
    view_.resize(n);
  }
  hot_[h.index].pos = position;
  hot_[h.index].radius = view_radius;
  hot_[h.index].flags =
      static_cast<std::uint8_t>(kAlive | kAdded | (observer ? kObserver | kRebuild : 0));
  hot_[h.index].mutual_class = observer ? class_for(view_radius) : 0;
  if (hot_[h.index].mutual_class != 0) ++mutual_count_;
  added_.push_back(h.index);
  if (observer) dirty_.push_back(h.index);
  ++entity_count_;
  if (observer) ++observer_count_;
  return h;
}

bool GridAoi::remove(EntityHandle h) {
  if (!usable(h)) return false;
  if (hot_[h.index].flags & kObserver) --observer_count_;
  --entity_count_;
  hot_[h.index].flags |= kRemoved;
  leave_class(h.index);  // its pairs are ended one direction at a time
  removed_.push_back(h.index);
  dirty_.push_back(h.index);
  return true;
}

bool GridAoi::move(EntityHandle h, Vec2 position) {
  if (!usable(h) || !valid_position(position)) return false;
  hot_[h.index].pos = position;
  return true;
}

std::size_t GridAoi::move_batch(std::span<const Move> moves) {
  std::size_t refused = 0;
  for (const Move& m : moves) refused += move(m.handle, m.position) ? 0 : 1;
  return refused;
}

bool GridAoi::set_view_radius(EntityHandle h, double view_radius) {
  if (!usable(h) || !valid_radius(view_radius)) return false;
  if (hot_[h.index].radius != view_radius) {
    hot_[h.index].radius = view_radius;
    hot_[h.index].flags |= kRebuild | kJoin;
    leave_class(h.index);
    dirty_.push_back(h.index);
  }
  return true;
}

bool GridAoi::set_observer(EntityHandle h, bool observer) {
  if (!usable(h)) return false;
  std::uint8_t& f = hot_[h.index].flags;
  if (((f & kObserver) != 0) == observer) return true;
  dirty_.push_back(h.index);
  if (observer) {
    f |= kObserver | kRebuild | kJoin;
    ++observer_count_;
  } else {
    f &= static_cast<std::uint8_t>(~kObserver);
    --observer_count_;
    leave_class(h.index);
  }
  return true;
}

// An observer whose radius changed or that stopped observing may no longer share its
// pairs' state with its classmates: each direction of its pairs is followed on its own
// until it joins a class again (try_join). At the next update it is handled as a teleport
// (every test naming it goes stale and the observers near it get a test of the pair),
// because the pairs it owned as the lower slot now need a test in the other observer's list.
// A removed entity leaves its class too (its kReclass flag is then never looked at: the
// cell pass handles it as a departure).
void GridAoi::leave_class(std::uint32_t s) {
  Hot& h = hot_[s];
  if (h.mutual_class == 0) return;
  split_pairs(s, h.mutual_class);
  h.mutual_class = 0;
  h.flags |= kReclass;
  --mutual_count_;
}

// An observer outside any class (its radius changed, or it was switched on) joins the
// class of its radius once no classmate sees it one way only: then the pairs need
// nothing moved. Its list has just been rebuilt, so it holds a test of every pair with a
// higher classmate that could change; a lower classmate's list holds one of the pair the
// other way round, with the same thresholds. Only pairs within the hysteresis band can be
// seen one way only (within r both see, beyond r + h neither), so only those are looked
// at. Called after the tick's tests, on the final views; retried at each rebuild of the
// observer's list until it succeeds.
void GridAoi::try_join(std::uint32_t e) {
  Hot& he = hot_[e];
  const std::uint8_t f = he.flags;
  if ((f & (kAlive | kObserver | kRemoved)) != (kAlive | kObserver) || he.mutual_class != 0) {
    he.flags = static_cast<std::uint8_t>(f & ~kJoin);
    return;
  }
  const std::uint8_t cls = class_for(he.radius);
  const double r = he.radius;
  const double outer = r + config_.hysteresis;
  bool one_way = false;
  for_each_span(he.pos, outer + sched_eps(outer), [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t j = begin; j < end && !one_way; ++j) {
      const std::uint32_t t = ord_slot_[j];
      if (t == e || !classmates(cls, hot_[t].mutual_class)) continue;
      const double dx = ord_x_[j] - he.pos.x;
      const double dy = ord_y_[j] - he.pos.y;
      const double d2 = dx * dx + dy * dy;
      if (d2 <= r * r || d2 > outer * outer) continue;
      one_way = (find_slot(view_[e], t) == kNotVisible) != (find_slot(view_[t], e) == kNotVisible);
    }
  });
  if (one_way) return;  // kJoin stays: tried again at the next rebuild
  he.flags = static_cast<std::uint8_t>(f & ~kJoin);
  he.mutual_class = cls;
  if (cls == 0) return;
  ++mutual_count_;
  // Its pairs with classmates are mutual now: each is held by the lower slot's view only.
  std::vector<std::uint32_t>& view = view_[e];
  for (std::size_t k = 0; k < view.size();) {
    const std::uint32_t t = view[k];
    if (hot_[t].mutual_class == cls) {
      if (t < e) {
        view[k] = view.back();
        view.pop_back();
        continue;
      }
      remove_from_view(t, e, kNotVisible);
    }
    ++k;
  }
}

// Where s is in the cell order (its position of the last update), or kNotVisible when it
// is not listed (added since). Usually within the bound of its latest position.
std::uint32_t GridAoi::order_index(std::uint32_t s) const {
  std::uint32_t found = kNotVisible;
  if (std::isfinite(step_check_)) {
    for_each_span(hot_[s].pos, step_check_ + sched_eps(step_check_),
                  [&](std::uint32_t begin, std::uint32_t end) {
                    if (found != kNotVisible) return;
                    const std::uint32_t i =
                        simd::find_u32(ord_slot_.data() + begin, end - begin, s);
                    if (i < end - begin) found = begin + i;
                  });
  }
  if (found != kNotVisible) return found;
  const auto n = static_cast<std::uint32_t>(ord_slot_.size());
  const std::uint32_t i = simd::find_u32(ord_slot_.data(), n, s);
  return i < n ? i : kNotVisible;
}

// Calls fn(u) for every lower classmate u (class cls) whose view holds s: the mutual pairs
// in which s is the higher slot, as of the last update. They were within r + h of each
// other then, at the positions the cell order holds.
template <typename Fn>
void GridAoi::for_each_holder(std::uint32_t s, std::uint8_t cls, Fn&& fn) const {
  const std::uint32_t i = order_index(s);
  if (i == kNotVisible) return;
  const Vec2 c{ord_x_[i], ord_y_[i]};
  const double outer = class_radius_[cls - 1u] + view_hysteresis_;
  const double reach = outer + sched_eps(outer);
  const double reach2 = reach * reach;
  for_each_span(c, reach, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t j = begin; j < end; ++j) {
      const std::uint32_t u = ord_slot_[j];
      if (u >= s || hot_[u].mutual_class != cls) continue;
      const double dx = ord_x_[j] - c.x;
      const double dy = ord_y_[j] - c.y;
      if (dx * dx + dy * dy > reach2) continue;
      if (find_slot(view_[u], s) != kNotVisible) fn(u);
    }
  });
}

// s leaves its class cls: each of its mutual pairs, held by the lower slot's view alone,
// gets an entry in the other view too (each direction is followed on its own from now on).
void GridAoi::split_pairs(std::uint32_t s, std::uint8_t cls) {
  if (hot_[s].flags & kAdded) return;  // no pairs yet
  std::vector<std::uint32_t>& view = view_[s];
  for (const std::uint32_t t : view) {
    if (t > s && hot_[t].mutual_class == cls) view_[t].push_back(s);
  }
  for_each_holder(s, cls, [&](std::uint32_t u) { view.push_back(u); });
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
  if (next.hysteresis != config_.hysteresis) lists_stale_ = true;
  config_ = next;
  return ConfigError::kNone;
}

ConfigError GridAoi::set_max_step(double max_step) {
  GridConfig next = config_;
  next.max_step = max_step;
  if (const ConfigError e = validate(next); e != ConfigError::kNone) return e;
  if (next.max_step != config_.max_step) lists_stale_ = true;
  config_ = next;
  return ConfigError::kNone;
}

// How many ticks the cell order may go without a rewrite: up to kMergeTicks, while the
// entities stay within 1/32 of a cell of their listed cells (more would widen every query
// for a saving that small cells do not need: rewriting the order costs per entity, not per
// cell). 1 without a bound.
std::uint32_t GridAoi::merge_interval() const {
  const double ticks = std::floor(config_.cell_size / (32.0 * step_check_));
  return static_cast<std::uint32_t>(std::clamp(ticks, 1.0, static_cast<double>(kMergeTicks)));
}

// One pass over the entities in cell order (the order arrays hold their positions of the
// last update). It finds those that left their position: removed ones, and those that
// moved further than the bound (teleports: every test naming them goes stale). It
// refreshes every position in place, and keeps the entities sorted by (cell, slot): when
// some were removed or added, jumped into a cell other than the one they are listed
// under, or walked into another cell and the order is due (merge_interval), it rewrites
// the order by copying the runs that stay in order and merging in (sorted) those that
// changed cells. Linear in the number of entities plus m log n for the m that changed;
// nothing is proportional to the number of cells.
void GridAoi::maintain_cells() {
  const bool regrid = pending_cell_size_ > 0.0;
  if (regrid) {
    config_.cell_size = pending_cell_size_;
    pending_cell_size_ = 0.0;
    resize_grid();
  }
  departures_.clear();
  arrivals_.clear();
  moved_cells_.clear();
  leaving_.clear();
  double max_radius = 0.0;
  // The order is rewritten when an entity arrives, goes or jumps into a cell other than
  // its listed one, and otherwise at least every merge_interval() ticks: in between, an
  // entity that walked into another cell stays listed under its old one (at most slack_
  // away, which every query adds to its reach).
  bool merge = regrid || unsorted_ticks_ + 1 >= merge_interval();
  const bool keys_exact = unsorted_ticks_ == 0 && !regrid;
  const auto n = static_cast<std::uint32_t>(ord_slot_.size());
  // Locals for everything the loop reads: its byte stores (versions, classes) may alias
  // any member, which the compiler would otherwise load again on every iteration.
  Hot* const hot = hot_.data();
  const std::uint32_t* const slots = ord_slot_.data();
  const std::uint32_t* const keys = ord_key_.data();
  double* const xs = ord_x_.data();
  double* const ys = ord_y_.data();
  std::uint8_t* const versions = ord_version_.data();
  std::uint8_t* const classes = ord_class_.data();
  const double step_check2 = step_check2_;
  const double min_x = config_.bounds.min.x;
  const double min_y = config_.bounds.min.y;
  const double inv_cell = inv_cell_;
  const std::uint32_t cols = cols_;
  const std::uint32_t rows = rows_;
  // One entry, whatever it needs (the vector kernel below takes the routine ones).
  auto visit = [&](std::uint32_t i) {
    // The slots come in cell order, not memory order: fetch a few iterations ahead.
    if (i + 16 < n) __builtin_prefetch(&hot[slots[i + 16]]);
    const std::uint32_t s = slots[i];
    Hot& h = hot[s];
    const Vec2 before{xs[i], ys[i]};
    if (h.flags & kRemoved) {
      ++h.target_version;
      departures_.push_back({s, before});
      leaving_.push_back(i);
      merge = true;
      return;
    }
    if (h.flags & kObserver) max_radius = std::max(max_radius, h.radius);
    const double dx = h.pos.x - before.x;
    const double dy = h.pos.y - before.y;
    const bool jumped = dx * dx + dy * dy > step_check2;
    if (jumped || (h.flags & kReclass)) {
      h.flags = static_cast<std::uint8_t>(h.flags & ~kReclass);
      ++h.target_version;  // every test naming it is stale
      departures_.push_back({s, before});
      arrivals_.push_back({s, before});
      if (h.flags & kObserver) {
        h.flags = static_cast<std::uint8_t>(h.flags | kRebuild);
        dirty_.push_back(s);
      }
    }
    // (An entity that did not move is still in its listed cell if every listed cell is
    // exact.)
    const bool still = dx == 0.0 && dy == 0.0 && keys_exact;
    const std::uint32_t key = still ? keys[i]
                                    : cell_index(h.pos.y, min_y, inv_cell, rows) * cols +
                                          cell_index(h.pos.x, min_x, inv_cell, cols);
    if (key != keys[i] || regrid) {
      leaving_.push_back(i);
      moved_cells_.push_back({key, s});
      merge = merge || jumped;
    }
    xs[i] = h.pos.x;
    ys[i] = h.pos.y;
    versions[i] = h.target_version;
    classes[i] = h.mutual_class;
  };
  // Entries that stayed in their listed cell within the bound, and are neither removed nor
  // reclassed, only need their copies refreshed: the kernel does those four at a time and
  // stops at a group with anything else, which visit() takes entry by entry.
  static_assert(sizeof(Hot) == 32 && offsetof(Hot, pos) == 0 && offsetof(Hot, radius) == 16 &&
                offsetof(Hot, flags) == 28 && offsetof(Hot, target_version) == 30 &&
                offsetof(Hot, mutual_class) == 31);
  const simd::CellPass pass{.records = hot,
                            .slots = slots,
                            .keys = keys,
                            .xs = xs,
                            .ys = ys,
                            .versions = versions,
                            .classes = classes,
                            .step2 = step_check2,
                            .min_x = min_x,
                            .min_y = min_y,
                            .inv_cell = inv_cell,
                            .cols = cols,
                            .rows = rows,
                            .special_flags = static_cast<std::uint8_t>(kRemoved | kReclass),
                            .observer_flag = kObserver};
  for (std::uint32_t i = 0; i < n;) {
    if (!regrid) i = simd::cell_pass(pass, i, n, max_radius);
    for (const std::uint32_t stop = std::min(i + 4, n); i < stop; ++i) visit(i);
  }
  for (const std::uint32_t s : added_) {
    Hot& h = hot_[s];
    if (h.flags & kRemoved) {  // added and removed before any update: never seen
      ++h.target_version;
      continue;
    }
    if (h.flags & kObserver) max_radius = std::max(max_radius, h.radius);
    h.flags = static_cast<std::uint8_t>(h.flags & ~kReclass);  // nobody holds its pairs yet
    arrivals_.push_back({s, {NAN, NAN}});
    moved_cells_.push_back({cell_key(h.pos), s});
    merge = true;
  }
  max_radius_ = max_radius;
  // Distances near a threshold are at most about max_radius + h + skin: the rounding of
  // every distance and threshold the schedule compares is far below this allowance.
  eps_ = sched_eps(max_radius + config_.hysteresis + skin_);
  if (leaving_.empty() && moved_cells_.empty()) {  // every entity is in its listed cell
    unsorted_ticks_ = 0;
    slack_ = 0.0;
    return;
  }
  if (!merge) {  // the moves were within the bound: list the cell changes later
    ++unsorted_ticks_;
    slack_ += step_check_;
    return;
  }
  unsorted_ticks_ = 0;
  slack_ = 0.0;
  std::sort(moved_cells_.begin(), moved_cells_.end());

  // Merge into the spare arrays: runs of the old order between the leaving entries are
  // copied whole, each cut where the next moved entry sorts in.
  const auto total = static_cast<std::uint32_t>(n - leaving_.size() + moved_cells_.size());
  next_key_.resize(total);
  next_slot_.resize(total);
  next_x_.resize(total);
  next_y_.resize(total);
  next_version_.resize(total);
  next_class_.resize(total);
  std::uint32_t out = 0;
  auto copy_run = [&](std::uint32_t from, std::uint32_t to) {
    const std::uint32_t len = to - from;
    std::copy_n(ord_key_.begin() + from, len, next_key_.begin() + out);
    std::copy_n(ord_slot_.begin() + from, len, next_slot_.begin() + out);
    std::copy_n(ord_x_.begin() + from, len, next_x_.begin() + out);
    std::copy_n(ord_y_.begin() + from, len, next_y_.begin() + out);
    std::copy_n(ord_version_.begin() + from, len, next_version_.begin() + out);
    std::copy_n(ord_class_.begin() + from, len, next_class_.begin() + out);
    out += len;
  };
  auto insert = [&](const CellEntry& e) {
    const Hot& h = hot_[e.slot];
    next_key_[out] = e.key;
    next_slot_[out] = e.slot;
    next_x_[out] = h.pos.x;
    next_y_[out] = h.pos.y;
    next_version_[out] = h.target_version;
    next_class_[out] = h.mutual_class;
    ++out;
  };
  std::size_t k = 0;  // next moved entry
  std::uint32_t i = 0;
  leaving_.push_back(n);  // sentinel: the last run ends at n
  for (const std::uint32_t stop : leaving_) {
    // Old entries [i, stop) stay; the moved ones that sort before ord[stop - 1] go in
    // between, each where it belongs.
    while (i < stop) {
      if (k == moved_cells_.size() ||
          !(moved_cells_[k] < CellEntry{ord_key_[stop - 1], ord_slot_[stop - 1]})) {
        copy_run(i, stop);
        i = stop;
        break;
      }
      const CellEntry e = moved_cells_[k++];
      // First old entry in [i, stop) that sorts after e.
      std::uint32_t lo = i;
      std::uint32_t hi = stop;
      while (lo < hi) {
        const std::uint32_t mid = lo + (hi - lo) / 2;
        if (CellEntry{ord_key_[mid], ord_slot_[mid]} < e) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      copy_run(i, lo);
      i = lo;
      insert(e);
    }
    i = stop + 1;  // skip the leaving entry
  }
  while (k < moved_cells_.size()) insert(moved_cells_[k++]);
  ord_key_.swap(next_key_);
  ord_slot_.swap(next_slot_);
  ord_x_.swap(next_x_);
  ord_y_.swap(next_y_);
  ord_version_.swap(next_version_);
  ord_class_.swap(next_class_);
  index_cells();
}

// Lists the occupied cells and their first entity; the largest population on the way.
void GridAoi::index_cells() {
  cell_key_.clear();
  cell_begin_.clear();
  max_cell_population_ = 0;
  const auto n = static_cast<std::uint32_t>(ord_key_.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i == 0 || ord_key_[i] != ord_key_[i - 1]) {
      if (i > 0) max_cell_population_ = std::max(max_cell_population_, i - cell_begin_.back());
      cell_key_.push_back(ord_key_[i]);
      cell_begin_.push_back(i);
    }
  }
  if (n > 0) max_cell_population_ = std::max(max_cell_population_, n - cell_begin_.back());
  cell_begin_.push_back(n);
}

std::uint32_t GridAoi::Scratch::next_epoch() {
  if (epoch >= 0xFFFFFFF0u) {  // wrap: forget every old mark
    std::fill(stamp.begin(), stamp.end(), 0u);
    epoch = 0;
  }
  epoch += 2;
  return epoch;
}

void GridAoi::Piece::clear() {
  events.clear();
  for (std::vector<PairTest>& tests : filed) tests.clear();
  leaves.clear();
  enters.clear();
  expiring.clear();
  joiners.clear();
  visible = 0;
}

// The outputs of list rebuilds and pair tests, on one thread: straight into the AOI's own
// buffers.
class GridAoi::DirectSink {
 public:
  explicit DirectSink(GridAoi& aoi)
      : aoi_(aoi), wheel_(aoi.wheel_.data()), mask_(aoi.wheel_mask_) {}
  void emit(std::uint32_t a, std::uint32_t b, EventKind kind) { aoi_.emit(a, b, kind); }
  void file(std::uint32_t tick, const PairTest& test) { file_in(tick & mask_, test); }
  void file_in(std::uint32_t bucket, const PairTest& test) {
    aoi_.append_test(wheel_[bucket], test);
  }
  void leave(const Leave& l) { aoi_.leaves_.push_back(l); }
  void enter(const Enter& e) { aoi_.enters_.push_back(e); }
  void expire(std::uint32_t bucket, std::uint32_t a) { aoi_.expiring_[bucket].push_back(a); }
  void join(std::uint32_t a) { aoi_.joiners_.push_back(a); }
  void visible(std::int64_t change) { aoi_.visible_pairs_ += static_cast<std::uint64_t>(change); }

 private:
  GridAoi& aoi_;
  // The wheel, kept in registers across the loops' stores (it is not resized in a phase).
  Bucket* const wheel_;
  const std::uint32_t mask_;
};

// The same, for one piece of a parallel phase: into the piece, merged later (merge()).
class GridAoi::PieceSink {
 public:
  PieceSink(const GridAoi& aoi, Piece& piece) : aoi_(aoi), piece_(piece), mask_(aoi.wheel_mask_) {
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

// A piece's output, after the pieces before it: the same state as if it had run alone.
void GridAoi::merge(Piece& piece) {
  events_.insert(events_.end(), piece.events.begin(), piece.events.end());
  for (std::size_t b = 0; b < piece.filed.size(); ++b) {
    append_tests(wheel_[b], piece.filed[b].data(), piece.filed[b].size());
  }
  leaves_.insert(leaves_.end(), piece.leaves.begin(), piece.leaves.end());
  enters_.insert(enters_.end(), piece.enters.begin(), piece.enters.end());
  for (const Expiry& e : piece.expiring) expiring_[e.bucket].push_back(e.observer);
  joiners_.insert(joiners_.end(), piece.joiners.begin(), piece.joiners.end());
  visible_pairs_ += static_cast<std::uint64_t>(piece.visible);
}

// Appends n tests to a bucket, a chunk's room at a time.
void GridAoi::append_tests(Bucket& bucket, const PairTest* tests, std::size_t n) {
  while (n > 0) {
    if (bucket.next == bucket.end) add_chunk(bucket);
    const auto k = std::min(n, static_cast<std::size_t>(bucket.end - bucket.next));
    std::copy_n(tests, k, bucket.next);
    bucket.next += k;
    tests += k;
    n -= k;
  }
}

void GridAoi::set_parallel(ParallelFor run, std::uint32_t workers) {
  workers = std::max(workers, 1u);
  parallel_ = workers > 1 ? std::move(run) : ParallelFor{};
  if (!parallel_) workers = 1;
  scratch_.resize(workers);
}

void GridAoi::emit(std::uint32_t a, std::uint32_t b, EventKind kind) {
  events_.push_back({slots_.handle_at(a), slots_.handle_at(b), kind});
}

bool GridAoi::list_is_current(std::uint32_t a) const {
  const std::uint8_t f = hot_[a].flags;
  return (f & (kAlive | kObserver | kRemoved | kRebuild)) == (kAlive | kObserver) &&
         now_ - hot_[a].base_tick < life_;
}

void GridAoi::add_chunk(Bucket& bucket) {
  if (free_chunks_.empty()) {
    chunk_store_.push_back(std::make_unique<TestChunk>());
    free_chunks_.push_back(chunk_store_.back().get());
  }
  TestChunk* chunk = free_chunks_.back();
  free_chunks_.pop_back();
  bucket.chunks.push_back(chunk);
  bucket.next = chunk->tests;
  bucket.end = chunk->tests + kChunkTests;
}

void GridAoi::release_bucket(Bucket& bucket) {
  free_chunks_.insert(free_chunks_.end(), bucket.chunks.begin(), bucket.chunks.end());
  bucket.chunks.clear();
  bucket.next = nullptr;
  bucket.end = nullptr;
}

// Removes b from a's view; `hint` is where it was last seen (kept exact unless another
// member was moved into its place since).
void GridAoi::remove_from_view(std::uint32_t a, std::uint32_t b, std::uint32_t hint) {
  std::vector<std::uint32_t>& v = view_[a];
  const std::uint32_t i = hint < v.size() && v[hint] == b ? hint : find_slot(v, b);
  if (i == kNotVisible) return;  // not there (cannot happen while the views are consistent)
  v[i] = v.back();
  v.pop_back();
}

// Whether the pair of observer a with the entity b that just moved (or arrived) is
// decided by b's list: a mutual pair with b the lower slot. b's list is rebuilt this tick
// (b teleported or is new), so a needs no test of the pair.
bool GridAoi::decided_by(std::uint32_t b, std::uint32_t a) const {
  return classmates(hot_[b].mutual_class, hot_[a].mutual_class) && b < a;
}

// Entity b left its position of the last update (removed or teleported); its version has
// been bumped, so every scheduled test naming it is stale. The observers that see it lie
// within reach of that position (within r + h at the last update, and they moved at most
// the bound since): each gets a test of the pair this tick. Hidden pairs need nothing here:
// if b arrived near an observer, notify_arrival() finds it.
void GridAoi::notify_departure(const Departure& d) {
  const double two_step = inv_two_step_ > 0.0 ? 1.0 / inv_two_step_ : 0.0;
  const double reach = max_radius_ + config_.hysteresis + two_step;
  const double r = reach + sched_eps(reach);
  const double r2 = r * r;
  for_each_span(d.from, r, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t j = begin; j < end; ++j) {
      const double dx = ord_x_[j] - d.from.x;
      const double dy = ord_y_[j] - d.from.y;
      if (dx * dx + dy * dy > r2) continue;
      const std::uint32_t a = ord_slot_[j];
      if (a == d.slot || !list_is_current(a) || decided_by(d.slot, a)) continue;
      // (A mutual pair that a decides is held by a's view.)
      const std::uint32_t i = find_slot(view_[a], d.slot);
      if (i != kNotVisible) schedule(now_, a, d.slot, i);
    }
  });
}

// Marks the members of b's view with a fresh stamp, returned.
std::uint32_t GridAoi::mark_view(std::uint32_t b, Scratch& scratch) const {
  const std::uint32_t mark = scratch.next_epoch();
  for (const std::uint32_t t : view_[b]) scratch.stamp[t] = mark;
  return mark;
}

// Entity b is new or arrived from afar. Every current list that could need it before it
// expires (the observer is within r + skin) gets a test of the pair this tick.
void GridAoi::notify_arrival(const Departure& arrival) {
  const std::uint32_t b = arrival.slot;
  const Vec2 p = hot_[b].pos;
  // A pair can have been visible only if the observer is near where b was (within its
  // r + h at the last update, and it moved at most the bound since): no view to search
  // for the others (nor for a new entity, which has no last position: NaN).
  const Vec2 from = arrival.from;
  const double reach = max_radius_ + skin_;
  const double r = reach + sched_eps(reach);
  const double r2 = r * r;
  for_each_span(p, r, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t j = begin; j < end; ++j) {
      const double fx = ord_x_[j] - p.x;
      const double fy = ord_y_[j] - p.y;
      if (fx * fx + fy * fy > r2) continue;
      const std::uint32_t a = ord_slot_[j];
      if (a == b || !list_is_current(a) || decided_by(b, a)) continue;
      const double dx = p.x - ord_x_[j];
      const double dy = p.y - ord_y_[j];
      const double need = hot_[a].radius + skin_;
      const double need_r = need + sched_eps(need);
      if (dx * dx + dy * dy > need_r * need_r) continue;
      // A visible pair already has its test from notify_departure().
      const double ox = ord_x_[j] - from.x;
      const double oy = ord_y_[j] - from.y;
      const double was = hot_[a].radius + config_.hysteresis + step_check_;
      const double was_r = was + sched_eps(was);
      const bool near_before = ox * ox + oy * oy <= was_r * was_r;
      if (!near_before || find_slot(view_[a], b) == kNotVisible) {
        schedule(now_, a, b, kNotVisible);
      }
    }
  });
}

// Rebuilds a's view and schedule from the grid: the view diff (enters, then leaves) and,
// for every pair that could change before the list expires, a test at the first tick it
// could. The list's life starts at base_tick (now, or earlier to stagger expiries).
template <typename Sink>
void GridAoi::rebuild_list(std::uint32_t a, std::uint32_t base_tick, Scratch& scratch, Sink& sink) {
  std::vector<std::uint32_t>& view = view_[a];
  hot_[a].base_tick = base_tick;
  // (At most life_ ticks ahead, so possibly this tick's slot, which has been emptied.)
  sink.expire((base_tick + life_) & wheel_mask_, a);
  ++hot_[a].observer_version;  // every test scheduled by the old list is stale
  const std::uint32_t expiry = base_tick + life_;
  const std::uint32_t old_mark = mark_view(a, scratch);
  std::uint32_t* const stamp = scratch.stamp.data();
  const std::uint32_t kept_mark = old_mark + 1;

  const Vec2 c = hot_[a].pos;
  const double r = hot_[a].radius;
  const double outer = r + config_.hysteresis;
  const double r2 = r * r;
  const double outer2 = outer * outer;
  const double list_radius = r + skin_;
  const double eps = eps_;
  const double reach = list_radius + 4.0 * eps;

  // Filter over each contiguous span (the same double arithmetic as the decision below);
  // survivors are compacted into the scratch hits.
  std::uint32_t n = 0;
  std::uint32_t* hits = scratch.hits.data();
  for_each_span(c, reach, [&](std::uint32_t begin, std::uint32_t end) {
    n += simd::filter_disc(ord_x_.data(), ord_y_.data(), begin, end, c.x, c.y, reach * reach,
                           hits + n);
  });

  // The new view, in scratch as long as the candidates (so no capacity checks).
  std::uint32_t* const fresh = scratch.view.data();
  std::uint32_t kept = 0;
  const std::uint32_t first = now_ + 1;
  const std::uint8_t version = hot_[a].observer_version;
  // Pairs that cannot change before the list expires need no test (and no square root):
  // visible ones within deep_r of the observer, hidden ones beyond far_r.
  const double span =  // how far the pair may move apart or together until the expiry
      inv_two_step_ > 0.0 ? static_cast<double>(expiry - first) / inv_two_step_ : 0.0;
  const double deep_r = outer - 2.0 * eps - span;
  const double deep_r2 = deep_r > 0.0 ? deep_r * deep_r : -1.0;
  const double far_r = r + 3.0 * eps + span;
  const double far_r2 = inv_two_step_ > 0.0 ? far_r * far_r : 0.0;
  const std::uint8_t cls = hot_[a].mutual_class;
  // Locals for everything the loop reads: its stores (stamps, the view, the wheel) could
  // otherwise alias the members, which the compiler would then reload at every candidate.
  const std::uint32_t* const slots = ord_slot_.data();
  const std::uint8_t* const classes = ord_class_.data();
  const std::uint8_t* const versions = ord_version_.data();
  const double* const xs = ord_x_.data();
  const double* const ys = ord_y_.data();
  const double inv_two_step = inv_two_step_;
  const auto life = static_cast<double>(life_);
  const double eps2 = 2.0 * eps;  // the gaps' rounding allowances (see ticks_for_gap)
  const double eps3 = 3.0 * eps;
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t j = hits[k];
    const std::uint32_t t = slots[j];
    if (t == a) continue;
    // A mutual pair is t's (the lower slot's) to decide, and t's view holds it.
    const bool mutual = classmates(cls, classes[j]);
    if (mutual && t < a) continue;
    const double dx = xs[j] - c.x;
    const double dy = ys[j] - c.y;
    const double d2 = dx * dx + dy * dy;
    bool visible = false;
    if (stamp[t] == old_mark) {
      if (d2 <= outer2) {
        stamp[t] = kept_mark;
        visible = true;
      }
    } else if (d2 <= r2) {
      sink.emit(a, t, EventKind::kEnter);
      if (mutual) {  // and t sees a
        sink.emit(t, a, EventKind::kEnter);
        sink.visible(1);
      }
      visible = true;
    }
    std::uint32_t index = kNotVisible;
    if (visible) {
      index = kept;
      fresh[kept++] = t;
      if (d2 < deep_r2) continue;
    } else if (d2 > far_r2) {
      continue;
    }
    const double d = std::sqrt(d2);
    const double gap = visible ? outer - d - eps2 : d - r - eps3;
    const std::uint32_t wake = first + ticks_for_gap(gap, inv_two_step, life);
    if (static_cast<std::int32_t>(wake - expiry) < 0) {
      sink.file(wake, encode({a, t, version, versions[j], 0}, index));
    }
  }
  // Old members still carrying the old mark are beyond r + h, or gone: they leave (both
  // ways for a mutual pair).
  for (const std::uint32_t t : view) {
    if (stamp[t] != old_mark) continue;
    sink.emit(a, t, EventKind::kLeave);
    if (classmates(cls, hot_[t].mutual_class)) {
      sink.emit(t, a, EventKind::kLeave);
      sink.visible(-1);
    }
  }
  sink.visible(static_cast<std::int64_t>(kept) - static_cast<std::int64_t>(view.size()));
  // Headroom for the enters to come: a view that must grow mid-tick costs an allocation and
  // a copy (at start-up that is every view at once).
  if (view.capacity() < kept) view.reserve(kept + kept / 4 + 4);
  view.assign(fresh, fresh + kept);
}

// Runs pair tests in the order given. Enters and leaves are put into and taken out of
// the views afterwards (apply_enters, apply_leaves), where their cache misses can overlap;
// each entered pair's next test is filed then.
template <typename Sink>
void GridAoi::run_tests(const PairTest* tests, std::uint32_t count, Sink& sink) {
  const double h = config_.hysteresis;
  const double eps2 = 2.0 * eps_;  // the gaps' rounding allowances (see ticks_for_gap)
  const double eps3 = 3.0 * eps_;
  const double inv_two_step = inv_two_step_;
  const auto life = static_cast<double>(life_);
  const std::uint32_t life_ticks = life_;
  const Hot* const hot = hot_.data();
  const std::uint32_t first = now_ + 1;
  // A visible pair found beyond r + h: its leave (both ways for a mutual pair), the view
  // removal to apply after the tests.
  auto leave_pair = [&](std::uint32_t a, std::uint32_t b, std::uint16_t view_index, bool mutual) {
    sink.emit(a, b, EventKind::kLeave);
    sink.leave({a, b, view_index});
    if (mutual) {
      sink.emit(b, a, EventKind::kLeave);
      sink.visible(-1);
    }
  };
  // One test, whatever it finds (the vector kernel below takes the routine ones).
  auto test_one = [&](std::uint32_t k) {
    if (k + kTestAhead < count) {
      const PairTest& ahead = tests[k + kTestAhead];
      __builtin_prefetch(&hot[ahead.observer]);
      __builtin_prefetch(&hot[ahead.target & ~kVisibleBit]);
    }
    PairTest test = tests[k];
    const std::uint32_t a = test.observer;
    const std::uint32_t b = test.target & ~kVisibleBit;
    const Hot& ha = hot[a];
    const Hot& hb = hot[b];
    if (test.observer_version != ha.observer_version || test.target_version != hb.target_version) {
      return;
    }
    const bool visible = (test.target & kVisibleBit) != 0;
    if (hb.flags & kRemoved) {  // only for visible pairs (see notify_departure)
      sink.emit(a, b, EventKind::kLeave);
      sink.leave({a, b, test.view_index});
      return;
    }
    // A mutual pair is decided by the lower slot's list, for both directions. A test the
    // other way round was filed by a's list before a joined b's class (try_join), when
    // a still decided its own direction: b's list covers the pair now.
    const bool mutual = classmates(ha.mutual_class, hb.mutual_class);
    if (mutual && b < a) return;
    const double r = ha.radius;
    const double outer = r + h;
    const double dx = hb.pos.x - ha.pos.x;
    const double dy = hb.pos.y - ha.pos.y;
    const double d2 = dx * dx + dy * dy;
    const double d = std::sqrt(d2);
    const std::uint32_t expiry = ha.base_tick + life_ticks;
    double gap;
    if (visible) {
      if (d2 > outer * outer) {
        leave_pair(a, b, test.view_index, mutual);
        test.target = b;  // now hidden
        gap = d - r - eps3;
      } else {
        gap = outer - d - eps2;
      }
    } else if (d2 <= r * r) {
      // Put into the views after the tests (apply_enters), with the pair's next test.
      sink.emit(a, b, EventKind::kEnter);
      if (mutual) sink.emit(b, a, EventKind::kEnter);
      const std::uint32_t wake = first + ticks_for_gap(outer - d - eps2, inv_two_step, life);
      sink.enter({a, b, test.observer_version, test.target_version, mutual,
                  static_cast<std::int32_t>(wake - expiry) < 0, wake});
      return;
    } else {
      gap = d - r - eps3;
    }
    const std::uint32_t wake = first + ticks_for_gap(gap, inv_two_step, life);
    if (static_cast<std::int32_t>(wake - expiry) < 0) {
      sink.file(wake, test);  // the same pair, versions and view index
    }
  };
  // Tests whose versions are current, whose target is not removed and that this list
  // decides: the kernel decides those four at a time (the same arithmetic), the event if any
  // and the bucket of the pair's next test, and marks every other test, which test_one() runs
  // in its place, in order, as it does the last tests of the chunk (fewer than four).
  static_assert(sizeof(PairTest) == 12 && offsetof(PairTest, target) == 4 &&
                offsetof(PairTest, observer_version) == 8 &&
                offsetof(PairTest, target_version) == 9);
  static_assert(offsetof(Hot, base_tick) == 24 && offsetof(Hot, observer_version) == 29);
  const simd::PairTests batch{.records = hot,
                              .tests = tests,
                              .h = h,
                              .eps2 = eps2,
                              .eps3 = eps3,
                              .inv_two_step = inv_two_step,
                              .life = life,
                              .life_ticks = life_ticks,
                              .first = first,
                              .mask = wheel_mask_,
                              .removed_flag = kRemoved};
  // An enter or a leave the kernel found: what test_one() does with it, the pair's next test
  // (the bucket, or none) already decided.
  auto apply_event = [&](std::uint32_t k, std::uint32_t code) {
    PairTest test = tests[k];
    const std::uint32_t a = test.observer;
    const std::uint32_t b = test.target & ~kVisibleBit;
    const bool mutual = classmates(hot[a].mutual_class, hot[b].mutual_class);
    const bool next = (code & simd::kDropBit) == 0;
    const std::uint32_t bucket = code & simd::kBucketBits;
    if (code & simd::kLeaveBit) {
      leave_pair(a, b, test.view_index, mutual);
      test.target = b;  // now hidden
      if (next) sink.file_in(bucket, test);
    } else {
      sink.emit(a, b, EventKind::kEnter);
      if (mutual) sink.emit(b, a, EventKind::kEnter);
      // A scheduled wake is less than a wheel's turn after `first`: its bucket names it.
      const std::uint32_t wake = first + ((bucket - first) & wheel_mask_);
      sink.enter({a, b, test.observer_version, test.target_version, mutual, next, wake});
    }
  };
  std::uint32_t codes[kChunkTests];  // a run never holds more than one chunk
  const std::uint32_t done = simd::pair_tests(batch, 0, count, codes);
  for (std::uint32_t k = 0; k < done; ++k) {
    const std::uint32_t code = codes[k];
    if (code == simd::kScalarTest) {
      test_one(k);
    } else if (code & (simd::kLeaveBit | simd::kEnterBit)) {
      apply_event(k, code);
    } else if (!(code & simd::kDropBit)) {
      sink.file_in(code, tests[k]);
    }
  }
  for (std::uint32_t k = done; k < count; ++k) test_one(k);
}

// Runs this tick's scheduled pair tests, in the order they were filed: chunk by chunk, each
// chunk a piece of its own when there are workers. Then applies the views' changes.
void GridAoi::run_due_tests() {
  Bucket& bucket = wheel_[now_ & wheel_mask_];
  leaves_.clear();
  enters_.clear();
  // The bucket does not grow while it runs: every new test is due later.
  const auto chunks = static_cast<std::uint32_t>(bucket.chunks.size());
  auto count_of = [&](std::uint32_t c) {
    return c + 1 == chunks ? static_cast<std::uint32_t>(bucket.next - bucket.chunks[c]->tests)
                           : kChunkTests;
  };
  if (!parallel_ || chunks < kMinPieces) {
    DirectSink sink(*this);
    for (std::uint32_t c = 0; c < chunks; ++c) {
      run_tests(bucket.chunks[c]->tests, count_of(c), sink);
      // Done with this chunk: the tests filed from here on may reuse it.
      free_chunks_.push_back(bucket.chunks[c]);
    }
  } else {
    if (pieces_.size() < chunks) pieces_.resize(chunks);
    parallel_(chunks, [&](std::uint32_t c, std::uint32_t) {
      Piece& piece = pieces_[c];
      piece.clear();
      PieceSink sink(*this, piece);
      run_tests(bucket.chunks[c]->tests, count_of(c), sink);
    });
    // (No test is due in this bucket again: the merge files none into it.)
    free_chunks_.insert(free_chunks_.end(), bucket.chunks.begin(), bucket.chunks.end());
    for (std::uint32_t c = 0; c < chunks; ++c) merge(pieces_[c]);
  }
  bucket.chunks.clear();
  bucket.next = nullptr;
  bucket.end = nullptr;
  // Leaves first: their hints name places before this tick's appends, and the appends'
  // places (the hints of the entered pairs' next tests) then stay exact.
  apply_leaves();
  apply_enters();
}

// Puts this tick's enters into the views and files their next tests. Each one appends to
// a random view: fetch the view headers and then their ends a few enters ahead.
void GridAoi::apply_enters() {
  const std::size_t n = enters_.size();
  constexpr std::size_t kAhead = 8;
  for (std::size_t k = 0; k < n; ++k) {
    if (k + 2 * kAhead < n) {
      const Enter& e = enters_[k + 2 * kAhead];
      __builtin_prefetch(&view_[e.observer]);
    }
    if (k + kAhead < n) {
      const Enter& e = enters_[k + kAhead];
      const std::vector<std::uint32_t>& v = view_[e.observer];
      __builtin_prefetch(v.data() + v.size(), 1);
    }
    const Enter& e = enters_[k];
    std::vector<std::uint32_t>& v = view_[e.observer];
    const auto index = static_cast<std::uint32_t>(v.size());
    v.push_back(e.target);  // (a mutual pair: e.observer is the lower slot, its view holds it)
    visible_pairs_ += e.mutual ? 2 : 1;
    if (e.schedule) {
      schedule(e.wake, {e.observer, e.target, e.observer_version, e.target_version, 0}, index);
    }
  }
}

// Takes this tick's leaves out of the views. Each removal touches a random view: fetch the
// view headers and then the entries a few removals ahead.
void GridAoi::apply_leaves() {
  const std::size_t n = leaves_.size();
  constexpr std::size_t kAhead = 8;
  for (std::size_t k = 0; k < n; ++k) {
    if (k + 2 * kAhead < n) __builtin_prefetch(&view_[leaves_[k + 2 * kAhead].observer]);
    if (k + kAhead < n) {
      const Leave& l = leaves_[k + kAhead];
      const std::vector<std::uint32_t>& v = view_[l.observer];
      if (l.hint < v.size()) {
        __builtin_prefetch(v.data() + l.hint);
      } else {  // searched from the start: fetch its first 1 KiB (measured best of 256 B - 4 KiB)
        for (std::size_t i = 0; i < 256 && i < v.size(); i += 16) __builtin_prefetch(v.data() + i);
      }
      __builtin_prefetch(v.data() + v.size() - 1);
    }
    remove_from_view(leaves_[k].observer, leaves_[k].target, leaves_[k].hint);
  }
  visible_pairs_ -= n;
}

template <typename Sink>
void GridAoi::clear_view(std::uint32_t a, Sink& sink) {
  std::vector<std::uint32_t>& view = view_[a];
  for (const std::uint32_t t : view) sink.emit(a, t, EventKind::kLeave);
  sink.visible(-static_cast<std::int64_t>(view.size()));
  view.clear();
  ++hot_[a].observer_version;
}

// Rebuilds (or drops) the lists list_work_[begin, end) in order.
template <typename Sink>
void GridAoi::build_lists(std::uint32_t begin, std::uint32_t end, bool stale, Scratch& scratch,
                          Sink& sink) {
  for (std::uint32_t k = begin; k < end; ++k) {
    if (k + 2 < end) __builtin_prefetch(&view_[list_work_[k + 2]]);
    if (k + 1 < end) {
      const std::vector<std::uint32_t>& next = view_[list_work_[k + 1]];
      if (!next.empty()) __builtin_prefetch(next.data());
    }
    const std::uint32_t a = list_work_[k];
    const std::uint8_t f = hot_[a].flags;
    if ((f & (kObserver | kRemoved)) != kObserver) {
      clear_view(a, sink);
      hot_[a].flags = static_cast<std::uint8_t>(f & ~kListed);
    } else {
      const bool spread = stale || (f & kAdded);
      rebuild_list(a, spread ? now_ - stagger(a, life_) : now_, scratch, sink);
      hot_[a].flags = static_cast<std::uint8_t>((f & ~kRebuild) | kListed);
      if (f & kJoin) sink.join(a);
    }
  }
}

// This tick's list rebuilds, by ascending slot: in pieces of kListsPerPiece lists when there
// are workers (each writes only its own lists' views and records), merged in order.
void GridAoi::rebuild_lists(bool stale) {
  const auto work = static_cast<std::uint32_t>(list_work_.size());
  for (Scratch& s : scratch_) {
    if (s.stamp.size() < hot_.size()) s.stamp.resize(hot_.size(), 0);
    // + 8: the filter stores in blocks.
    if (s.hits.size() < ord_slot_.size() + 8) {
      s.hits.resize(ord_slot_.size() + 8);
      s.view.resize(ord_slot_.size() + 8);
    }
  }
  if (!parallel_ || work < kMinPieces * kListsPerPiece) {
    DirectSink sink(*this);
    build_lists(0, work, stale, scratch_[0], sink);
    return;
  }
  const std::uint32_t pieces = (work + kListsPerPiece - 1) / kListsPerPiece;
  if (pieces_.size() < pieces) pieces_.resize(pieces);
  parallel_(pieces, [&](std::uint32_t p, std::uint32_t worker) {
    Piece& piece = pieces_[p];
    piece.clear();
    PieceSink sink(*this, piece);
    build_lists(p * kListsPerPiece, std::min(work, (p + 1) * kListsPerPiece), stale,
                scratch_[worker], sink);
  });
  for (std::uint32_t p = 0; p < pieces; ++p) merge(pieces_[p]);
}

void GridAoi::release_removed() {
  for (const std::uint32_t s : removed_) {
    hot_[s].flags = 0;
    slots_.free(slots_.handle_at(s));
  }
  removed_.clear();
  for (const std::uint32_t s : added_) {
    hot_[s].flags = static_cast<std::uint8_t>(hot_[s].flags & ~kAdded);
  }
  added_.clear();
}

std::span<const VisibilityEvent> GridAoi::update() {
  events_.clear();
  ++now_;
  const bool stale = lists_stale_;
  if (stale) apply_settings();
  maintain_cells();

  // Every list is rebuilt when the settings changed, when lists live a single tick
  // (no bound), or when so many entities jumped that rebuilding is cheaper than
  // following each one.
  const std::size_t movers = departures_.size() + arrivals_.size();
  const bool rebuild_all = stale || life_ == 1 || movers * 8 > entity_count_ + 64;
  if (rebuild_all) {
    for (Bucket& bucket : wheel_) release_bucket(bucket);
  } else {
    for (const Departure& d : departures_) notify_departure(d);
    for (const Departure& b : arrivals_) notify_arrival(b);
  }

  // Lists that must be rebuilt (or dropped), by ascending slot; then the pair tests due
  // this tick. The candidates are the lists expiring now and those marked by a mutation or a
  // teleport (every observer after a settings change); they are collected first so that
  // each one's view can be fetched from memory while the one before is rebuilt.
  list_work_.clear();
  std::vector<std::uint32_t>& expiring = expiring_[now_ & wheel_mask_];
  if (rebuild_all) {
    for (std::vector<std::uint32_t>& e : expiring_) e.clear();
    const std::uint32_t capacity = slots_.capacity();
    for (std::uint32_t a = 0; a < capacity; ++a) {
      if (hot_[a].flags & kAlive) list_work_.push_back(a);
    }
  } else {
    // A bucket is filled in ascending slot order by the rebuilds of one tick (only staggered
    // starts mix ticks), and the dirty list is short: sort only what is out of order.
    if (!std::is_sorted(expiring.begin(), expiring.end())) {
      std::sort(expiring.begin(), expiring.end());
    }
    std::sort(dirty_.begin(), dirty_.end());
    list_work_.resize(expiring.size() + dirty_.size());
    list_work_.erase(std::set_union(expiring.begin(), expiring.end(), dirty_.begin(), dirty_.end(),
                                    list_work_.begin()),
                     list_work_.end());
    list_work_.erase(std::unique(list_work_.begin(), list_work_.end()), list_work_.end());
  }
  expiring.clear();
  dirty_.clear();
  std::size_t kept = 0;
  for (const std::uint32_t a : list_work_) {
    const std::uint8_t f = hot_[a].flags;
    if (!(f & kAlive)) continue;
    const bool needed = (f & (kObserver | kRemoved)) != kObserver
                            ? (f & kListed) != 0
                            : rebuild_all || (f & kRebuild) || now_ - hot_[a].base_tick >= life_;
    if (needed) list_work_[kept++] = a;
  }
  list_work_.resize(kept);
  rebuild_lists(stale);
  run_due_tests();
  for (const std::uint32_t e : joiners_) try_join(e);
  joiners_.clear();
  lists_stale_ = false;
  view_hysteresis_ = config_.hysteresis;
  release_removed();
  return events_;
}

Vec2 GridAoi::position(EntityHandle h) const {
  return hot_[h.index].pos;
}
double GridAoi::view_radius(EntityHandle h) const {
  return hot_[h.index].radius;
}
bool GridAoi::is_observer(EntityHandle h) const {
  return (hot_[h.index].flags & kObserver) != 0;
}

void GridAoi::view_set(EntityHandle observer, std::vector<EntityHandle>& out) const {
  if (!slots_.contains(observer)) return;
  const std::uint32_t a = observer.index;
  for (const std::uint32_t t : view_[a]) out.push_back(slots_.handle_at(t));
  // The mutual pairs held by lower classmates' views.
  if (const std::uint8_t cls = hot_[a].mutual_class; cls != 0) {
    for_each_holder(a, cls, [&](std::uint32_t u) { out.push_back(slots_.handle_at(u)); });
  }
}

bool GridAoi::sees(EntityHandle observer, EntityHandle target) const {
  if (!slots_.contains(observer) || !slots_.contains(target)) return false;
  const std::uint32_t a = observer.index;
  const std::uint32_t b = target.index;
  if (find_slot(view_[a], b) != kNotVisible) return true;
  // A mutual pair is held by the lower slot's view.
  return b < a && classmates(hot_[a].mutual_class, hot_[b].mutual_class) &&
         find_slot(view_[b], a) != kNotVisible;
}

void GridAoi::query_radius(Vec2 center, double radius, std::vector<EntityHandle>& out) const {
  if (!valid_position(center) || !valid_radius(radius)) return;
  const double r2 = radius * radius;
  for_each_span(center, radius, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t j = begin; j < end; ++j) {
      const double dx = ord_x_[j] - center.x;
      const double dy = ord_y_[j] - center.y;
      if (dx * dx + dy * dy <= r2) out.push_back(slots_.handle_at(ord_slot_[j]));
    }
  });
}

GridStats GridAoi::stats() const {
  GridStats s;
  s.entities = entity_count_;
  s.observers = observer_count_;
  s.mutual_observers = mutual_count_;
  s.cells = cols_ * rows_;
  s.occupied_cells = static_cast<std::uint32_t>(cell_key_.size());
  s.max_cell_population = max_cell_population_;
  s.visible_pairs = visible_pairs_;
  return s;
}

std::string GridAoi::check_invariants() const {
  std::ostringstream out;
  const std::uint32_t capacity = slots_.capacity();
  auto present = [&](std::uint32_t s) {
    return (hot_[s].flags & kAlive) && !(hot_[s].flags & kAdded);
  };
  // Positions at the last update are those in the cell order.
  std::vector<Vec2> last_pos(capacity);
  for (std::size_t i = 0; i < ord_slot_.size(); ++i)
    last_pos[ord_slot_[i]] = {ord_x_[i], ord_y_[i]};
  // The grid holds every entity present at the last update, sorted, at its position.
  std::uint32_t count = 0;
  for (std::uint32_t s = 0; s < capacity; ++s) count += present(s) ? 1 : 0;
  if (ord_slot_.size() != count) {
    out << "grid holds " << ord_slot_.size() << " entities, " << count << " present\n";
  }
  for (std::size_t i = 0; i < ord_slot_.size(); ++i) {
    const std::uint32_t s = ord_slot_[i];
    if (i > 0 && !(CellEntry{ord_key_[i - 1], ord_slot_[i - 1]} < CellEntry{ord_key_[i], s})) {
      out << "grid order broken at " << i << "\n";
    }
    // Listed under a cell within slack_ of its position (its own when slack_ is 0).
    const Vec2 p = last_pos[s];
    const std::uint32_t row = ord_key_[i] / cols_;
    const std::uint32_t col = ord_key_[i] % cols_;
    if (row < cell_row(p.y - slack_) || row > cell_row(p.y + slack_) ||
        col < cell_col(p.x - slack_) || col > cell_col(p.x + slack_)) {
      out << "grid cell of slot " << s << " is stale\n";
    }
    if (ord_version_[i] != hot_[s].target_version) {
      out << "grid version of slot " << s << " is stale\n";
    }
  }
  // Live scheduled tests, per observer: (target, tick, visible).
  struct Test {
    std::uint32_t target;
    std::uint32_t tick;
    bool visible;
  };
  std::vector<std::vector<Test>> tests(capacity);
  for (std::uint32_t k = 0; k < wheel_.size(); ++k) {
    const Bucket& bucket = wheel_[k];
    for (std::size_t c = 0; c < bucket.chunks.size(); ++c) {
      const auto fill = c + 1 == bucket.chunks.size()
                            ? static_cast<std::uint32_t>(bucket.next - bucket.chunks[c]->tests)
                            : kChunkTests;
      for (std::uint32_t i = 0; i < fill; ++i) {
        const PairTest& t = bucket.chunks[c]->tests[i];
        const std::uint32_t b = t.target & ~kVisibleBit;
        if (t.observer_version != hot_[t.observer].observer_version ||
            t.target_version != hot_[b].target_version) {
          continue;
        }
        // The tick this bucket stands for: the first after now_ with these low bits.
        const std::uint32_t tick = now_ + 1 + ((k - (now_ + 1)) & wheel_mask_);
        tests[t.observer].push_back({b, tick, (t.target & kVisibleBit) != 0});
      }
    }
  }
  const double two_step = inv_two_step_ > 0.0 ? 1.0 / inv_two_step_ : INFINITY;
  std::uint64_t pairs = 0;
  std::uint32_t in_classes = 0;
  // Per observer: its sorted view and the sorted targets of its live tests.
  std::vector<std::vector<std::uint32_t>> seen(capacity);
  std::vector<std::vector<std::uint32_t>> tested(capacity);
  auto observing = [&](std::uint32_t s) { return present(s) && (hot_[s].flags & kObserver); };
  auto mutual = [&](std::uint32_t a, std::uint32_t t) {
    return observing(a) && observing(t) && classmates(hot_[a].mutual_class, hot_[t].mutual_class);
  };
  // Every observer's targets: its view, and the mutual pairs held by lower classmates'.
  std::vector<std::vector<std::uint32_t>> sees_of(capacity);
  for (std::uint32_t a = 0; a < capacity; ++a) {
    if (!present(a)) continue;
    for (const std::uint32_t t : view_[a]) {
      sees_of[a].push_back(t);
      if (t < capacity && mutual(a, t)) {
        if (t < a) out << "view of " << a << " holds its lower classmate " << t << "\n";
        sees_of[t].push_back(a);
      }
    }
  }
  for (std::uint32_t a = 0; a < capacity; ++a) {
    if (!present(a)) continue;
    const std::vector<std::uint32_t>& view = sees_of[a];
    pairs += view.size();
    if (!(hot_[a].flags & kObserver)) {
      if (!view.empty()) out << "non-observer " << a << " has a view\n";
      if (!tests[a].empty()) out << "non-observer " << a << " has tests\n";
      continue;
    }
    if (hot_[a].mutual_class != 0) {
      ++in_classes;
      if (class_radius_[hot_[a].mutual_class - 1u] != hot_[a].radius) {
        out << "observer " << a << " is in the class of another radius\n";
      }
    }
    const std::uint32_t expiry = hot_[a].base_tick + life_;
    if (static_cast<std::int32_t>(now_ - expiry) >= 0) out << "list of " << a << " expired\n";
    seen[a].assign(view.begin(), view.end());
    std::sort(seen[a].begin(), seen[a].end());
    if (std::adjacent_find(seen[a].begin(), seen[a].end()) != seen[a].end()) {
      out << "duplicate targets in the view of " << a << "\n";
    }
    for (const Test& t : tests[a]) {
      tested[a].push_back(t.target);
      if (static_cast<std::int32_t>(t.tick - expiry) >= 0) {
        out << "test " << a << "->" << t.target << " after the list expires\n";
      }
      if (t.visible != std::binary_search(seen[a].begin(), seen[a].end(), t.target)) {
        out << "test " << a << "->" << t.target << " has the wrong side\n";
      }
    }
    std::sort(tested[a].begin(), tested[a].end());
    if (std::adjacent_find(tested[a].begin(), tested[a].end()) != tested[a].end()) {
      out << "two live tests of one pair for observer " << a << "\n";
    }
  }
  for (std::uint32_t a = 0; a < capacity; ++a) {
    if (!observing(a)) continue;
    const double r = hot_[a].radius;
    const double outer = r + config_.hysteresis;
    for (std::uint32_t t = 0; t < capacity; ++t) {
      if (t == a || !present(t)) continue;
      const double dx = last_pos[t].x - last_pos[a].x;
      const double dy = last_pos[t].y - last_pos[a].y;
      const double d2 = dx * dx + dy * dy;
      const double d = std::sqrt(d2);
      const bool visible = std::binary_search(seen[a].begin(), seen[a].end(), t);
      if (visible && d2 > outer * outer) out << a << " sees " << t << " beyond r + h\n";
      if (!visible && d2 <= r * r) out << a << " misses " << t << " within r\n";
      // A mutual pair is seen both ways or neither, and its test is in the lower slot's list.
      std::uint32_t owner = a;
      std::uint32_t target = t;
      if (mutual(a, t)) {
        if (visible != std::binary_search(seen[t].begin(), seen[t].end(), a)) {
          out << "mutual pair " << a << "-" << t << " seen one way only\n";
        }
        owner = std::min(a, t);
        target = std::max(a, t);
      }
      // A pair that could change before the list expires must have a test scheduled.
      // Ticks after now_ during which the pairs are only re-tested through the schedule:
      const double left = static_cast<double>(hot_[owner].base_tick + life_ - now_ - 1);
      const bool has_test = std::binary_search(tested[owner].begin(), tested[owner].end(), target);
      const double reach = two_step * left;
      const bool could_change = visible ? d + reach > outer - 1e-6 : d - reach < r + 1e-6;
      if (left > 0.0 && could_change && !has_test) {
        out << "pair " << a << "->" << t << " at " << d << " has no test\n";
      }
    }
  }
  if (in_classes != mutual_count_) {
    out << "mutual observer count " << mutual_count_ << " != " << in_classes << "\n";
  }
  if (pairs != visible_pairs_) out << "visible pair count " << visible_pairs_ << " != " << pairs;
  return out.str();
}

}  // namespace zone::aoi
