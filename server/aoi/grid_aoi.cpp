// GridAoi: configuration, mutations, the order of a tick's phases, threads (set_parallel,
// merging the pieces' outputs) and the queries. The other parts of its implementation are
// listed in grid_aoi_internal.hpp.

#include "aoi/grid_aoi.hpp"

#include "aoi/grid_aoi_internal.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace zone::aoi {
namespace {

// A list lives this many ticks when the hysteresis alone does not allow more (the skin
// beyond r is then 2 * max_step * (kLifeTarget - 1)); and never more than kMaxLife, so that
// the 8-bit versions in a pair test (bumped at most once per tick) cannot wrap around
// while the test waits. 32 measured best of 16, 24, 32, 48 and 64 on the standard
// workloads once mutual pairs halved the rebuilds' work; 24, 40 and 48 have measured as
// good on the crowd since (docs/benchmarks.md).
constexpr std::uint32_t kLifeTarget = 32;
constexpr std::uint32_t kMaxLife = 128;

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

}  // namespace

const char* to_string(GridConfigError e) {
  switch (e) {
    case GridConfigError::kNone:
      return "ok";
    case GridConfigError::kBadBounds:
      return "world bounds must be finite with min < max on both axes";
    case GridConfigError::kBadCellSize:
      return "cell size must be a finite number > 0";
    case GridConfigError::kTooManyCells:
      return "cell size too small for the world bounds (grid over 16 Mi cells)";
    case GridConfigError::kBadHysteresis:
      return "hysteresis must be a finite number >= 0";
    case GridConfigError::kBadMaxStep:
      return "max step must be a number >= 0 (infinity: unbounded)";
  }
  return "unknown";
}

GridConfigError GridAoi::validate(const GridConfig& c) {
  const Bounds& b = c.bounds;
  if (!valid_position(b.min) || !valid_position(b.max) || !(b.min.x < b.max.x) ||
      !(b.min.y < b.max.y)) {
    return GridConfigError::kBadBounds;
  }
  if (!std::isfinite(c.cell_size) || !(c.cell_size > 0.0)) return GridConfigError::kBadCellSize;
  const double cols = std::ceil((b.max.x - b.min.x) / c.cell_size);
  const double rows = std::ceil((b.max.y - b.min.y) / c.cell_size);
  if (cols * rows > static_cast<double>(kMaxCells)) return GridConfigError::kTooManyCells;
  if (!std::isfinite(c.hysteresis) || c.hysteresis < 0.0) return GridConfigError::kBadHysteresis;
  if (!(c.max_step >= 0.0)) return GridConfigError::kBadMaxStep;
  return GridConfigError::kNone;
}

GridAoi::GridAoi(const GridConfig& config) : config_(config) {
  if (const GridConfigError e = validate(config); e != GridConfigError::kNone) {
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
  wheel_.reset(life_);
  expiring_.resize(wheel_.size());
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

bool GridAoi::usable(EntityHandle h) const {
  return slots_.contains(h) && !(hot_[h.index].flags & kRemoved);
}

EntityHandle GridAoi::add(Vec2 position, double view_radius, bool observer) {
  if (!valid_position(position) || !valid_radius(view_radius)) return {};
  const EntityHandle h = slots_.allocate();
  if (h.index >= hot_.size()) {
    const std::size_t n = h.index + 1;
    hot_.resize(n);
    view_.resize(n);
    crowd_class_.resize(n, 0);
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
  // Its pairs are ended one direction at a time, except those its crowd ends at the next
  // update (update_crowds).
  leave_class(h.index);
  removed_.push_back(h.index);
  dirty_.push_back(h.index);
  return true;
}

bool GridAoi::move(EntityHandle h, Vec2 position) {
  if (!usable(h) || !valid_position(position)) return false;
  hot_[h.index].pos = position;  // (a crowd's members are moved there by update_crowds)
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

GridConfigError GridAoi::set_cell_size(double cell_size) {
  GridConfig next = config_;
  next.cell_size = cell_size;
  if (const GridConfigError e = validate(next); e != GridConfigError::kNone) return e;
  pending_cell_size_ = cell_size;
  return GridConfigError::kNone;
}

GridConfigError GridAoi::set_hysteresis(double hysteresis) {
  GridConfig next = config_;
  next.hysteresis = hysteresis;
  if (const GridConfigError e = validate(next); e != GridConfigError::kNone) return e;
  if (next.hysteresis != config_.hysteresis) lists_stale_ = true;
  config_ = next;
  return GridConfigError::kNone;
}

GridConfigError GridAoi::set_max_step(double max_step) {
  GridConfig next = config_;
  next.max_step = max_step;
  if (const GridConfigError e = validate(next); e != GridConfigError::kNone) return e;
  if (next.max_step != config_.max_step) lists_stale_ = true;
  config_ = next;
  return GridConfigError::kNone;
}

// --- Threads: each piece of a parallel phase writes its own output, merged in order. ----

void GridAoi::Piece::clear() {
  events.clear();
  for (std::vector<PairTest>& tests : filed) tests.clear();
  leaves.clear();
  enters.clear();
  expiring.clear();
  joiners.clear();
  visible = 0;
}

// A piece's output, after the pieces before it: the same state as if it had run alone.
void GridAoi::merge(Piece& piece) {
  events_.insert(events_.end(), piece.events.begin(), piece.events.end());
  for (std::size_t b = 0; b < piece.filed.size(); ++b) {
    wheel_.append(wheel_.bucket(static_cast<std::uint32_t>(b)), piece.filed[b]);
  }
  leaves_.insert(leaves_.end(), piece.leaves.begin(), piece.leaves.end());
  enters_.insert(enters_.end(), piece.enters.begin(), piece.enters.end());
  for (const Expiry& e : piece.expiring) expiring_[e.bucket].push_back(e.observer);
  joiners_.insert(joiners_.end(), piece.joiners.begin(), piece.joiners.end());
  visible_pairs_ += static_cast<std::uint64_t>(piece.visible);
}

void GridAoi::set_parallel(ParallelFor run, std::uint32_t workers) {
  workers = std::max(workers, 1u);
  parallel_ = workers > 1 ? std::move(run) : ParallelFor{};
  if (!parallel_) workers = 1;
  scratch_.resize(workers);
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
  // The crowd tiers decide with the hysteresis they were made with: on a change, their
  // pairs go back to the views, whose lists are all rebuilt this tick.
  if (stale && !crowds_.empty() && crowd_hysteresis_ != config_.hysteresis) dissolve_crowds();
  maintain_cells();
  join_added_crowds();
  mark_crowd_cells();

  // Every list is rebuilt when the settings changed, when lists live a single tick
  // (no bound), or when so many entities jumped that rebuilding is cheaper than
  // following each one.
  const std::size_t movers = departures_.size() + arrivals_.size();
  const bool rebuild_all = stale || life_ == 1 || movers * 8 > entity_count_ + 64;
  if (rebuild_all) {
    wheel_.clear();
  } else {
    for (const Departure& d : departures_) notify_departure(d);
    for (const Departure& b : arrivals_) notify_arrival(b);
  }

  // Lists that must be rebuilt (or dropped), by ascending slot; then the pair tests due
  // this tick. The candidates are the lists expiring now and those marked by a mutation or a
  // teleport (every observer after a settings change); they are collected first so that
  // each one's view can be fetched from memory while the one before is rebuilt.
  list_work_.clear();
  std::vector<std::uint32_t>& expiring = expiring_[now_ & wheel_.mask()];
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
  update_crowds();
  for (const std::uint32_t e : joiners_) try_join(e);
  joiners_.clear();
  lists_stale_ = false;
  view_hysteresis_ = config_.hysteresis;
  crowd_membership();
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
  if (const std::uint8_t cls = class_of(hot_[a].mutual_class); cls != 0) {
    for_each_holder(a, cls, [&](std::uint32_t u) { out.push_back(slots_.handle_at(u)); });
  }
  // The pairs its crowd decides.
  if (crowd_class_[a] != 0) {
    std::vector<std::uint32_t> partners;
    crowd_tier(a).partners(a, partners);
    for (const std::uint32_t t : partners) out.push_back(slots_.handle_at(t));
  }
}

bool GridAoi::sees(EntityHandle observer, EntityHandle target) const {
  if (!slots_.contains(observer) || !slots_.contains(target)) return false;
  const std::uint32_t a = observer.index;
  const std::uint32_t b = target.index;
  if (crowd_pair(a, b)) return crowd_tier(a).sees(a, b);
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
  for (const std::unique_ptr<CrowdTier>& tier : crowds_) {
    if (tier) s.visible_pairs += 2 * tier->visible_pairs();  // (both directions of each)
  }
  s.crowd_members = crowd_count_;
  return s;
}

}  // namespace zone::aoi
