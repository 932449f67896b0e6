// GridAoi's broad phase: the entities kept sorted by (cell, slot) from tick to tick.

#include "aoi/grid_aoi.hpp"

#include "aoi/grid_aoi_internal.hpp"
#include "aoi/simd.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace zone::aoi {
namespace {

// With a displacement bound, the cell order is rewritten at least every this many ticks
// (earlier when an entity arrives, goes or jumps to another cell); in between, the
// entities that walked into another cell stay listed under their old one, and queries
// reach the bound times the ticks since further (GridAoi::merge_interval).
constexpr std::uint32_t kMergeTicks = 8;

}  // namespace

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

}  // namespace zone::aoi
