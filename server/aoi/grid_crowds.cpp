// GridAoi's crowds: the observers of one mutual class in crowded cells hand their pairs
// with each other to a CrowdTier (crowd_tier.hpp), one per class.
//
// A pair of two members of one crowd (kCrowdBit in both class bytes) is the tier's alone:
// in no view and no list (rebuilds and notifications skip it), and a test of it filed
// before the second joined is dropped when it comes due (the pair-test kernel sees the
// bits). Membership changes at the end of an update, on that update's views and positions,
// and hands the pairs over without events: a joiner's visible pairs with members leave the
// views (held by the lower slot's view, as any mutual pair) for the tier's bits, and its
// list and the others' go on as they are. A leaver's pairs go back to the views, but no
// list has a test of them: the leaver is marked kReclass, so that the next update handles
// it as a teleport in place (its versions bumped, which also makes any test of its from
// before it joined stale; its list rebuilt; every list near it given a test of its pair with
// it).

#include "aoi/grid_aoi.hpp"

#include "aoi/grid_aoi_internal.hpp"

#include <algorithm>
#include <memory>

namespace zone::aoi {
namespace {

// A class's crowd cells are this share of r + h: 12 m for r + h = 32 m measured best of
// 8 - 16 m on a crowd (docs/benchmarks.md, "The crowd tier").
constexpr double kCrowdCellShare = 0.375;
// The largest r + h given a crowd: the span of the coordinates (beyond it every pair of
// members is within reach of each other, and a crowd saves nothing).
constexpr double kMaxCrowdReach = 2.0 * GridAoi::kMaxCoordinate;

}  // namespace

// The crowd tier of class cls, made when first needed; none when the class's r + h is out
// of the range crowds serve.
CrowdTier* GridAoi::crowd_of(std::uint8_t cls) {
  if (crowds_.size() < class_radius_.size()) crowds_.resize(class_radius_.size());
  std::unique_ptr<CrowdTier>& tier = crowds_[cls - 1u];
  if (!tier) {
    const double radius = class_radius_[cls - 1u];
    const double reach = radius + config_.hysteresis;
    if (!(reach * kCrowdCellShare >= CrowdTier::kMinCellSize && reach <= kMaxCrowdReach)) {
      return nullptr;
    }
    tier = std::make_unique<CrowdTier>(reach * kCrowdCellShare, radius, config_.hysteresis);
    crowd_hysteresis_ = config_.hysteresis;
  }
  return tier.get();
}

// Decides the crowds' pairs on this update's positions: their events, both ways (first the
// leaves of the members removed since the last update). The members' moves are handed to
// the tiers here, so that move() stays the same few instructions for every entity.
void GridAoi::update_crowds() {
  for (const std::uint32_t s : removed_) {
    if (crowd_class_[s] != 0) {  // (its kCrowdBit went with its class, at remove())
      crowd_tier(s).erase(s);
      crowd_class_[s] = 0;
      --crowd_count_;
    }
  }
  for (const std::unique_ptr<CrowdTier>& tier : crowds_) {
    if (!tier) continue;
    tier->move_all([&](std::uint32_t s) { return hot_[s].pos; });
    for (const CrowdTier::Event& e : tier->update()) {
      emit(e.a, e.b, e.kind);
      emit(e.b, e.a, e.kind);
    }
  }
}

// Whether s may join its class's crowd: a live observer of a mutual class with a crowd
// tier, not in it yet.
bool GridAoi::may_join_crowd(std::uint32_t s) {
  const Hot& h = hot_[s];
  return (h.flags & (kAlive | kObserver | kRemoved)) == (kAlive | kObserver) &&
         class_of(h.mutual_class) != 0 && !(h.mutual_class & kCrowdBit) &&
         crowd_of(class_of(h.mutual_class)) != nullptr;
}

// The entities expected within r of an observer are the others in its cell times this
// times r^2 (pi r^2 over the cell's area). The estimate is only as good as one cell's count
// is of the density around: cells much smaller than r make it noisy.
double GridAoi::pi_over_cell_area() const {
  return 3.141592653589793 * inv_cell_ * inv_cell_;
}

// s joins its class's crowd, with no pair in view there yet.
void GridAoi::enter_crowd(std::uint32_t s) {
  crowd_class_[s] = hot_[s].mutual_class;
  crowd_tier(s).insert(s, hot_[s].pos);
  hot_[s].mutual_class |= kCrowdBit;
  ++crowd_count_;
}

// Observers added since the last update join their crowd at once, before any list is built:
// they have no pairs yet, so nothing is handed over and no list files a test of a pair the
// crowd decides (those of an observer joining later are dropped when they come due).
void GridAoi::join_added_crowds() {
  const double need = config_.crowd_min_in_view;
  if (need == 0.0) return;
  const double per_r2 = pi_over_cell_area();
  for (const std::uint32_t s : added_) {
    if (!may_join_crowd(s)) continue;
    Hot& h = hot_[s];
    // Its cell, where the cell order lists it from this update on.
    const auto cell = std::lower_bound(cell_key_.begin(), cell_key_.end(), cell_key(h.pos));
    const auto c = static_cast<std::size_t>(cell - cell_key_.begin());
    if (cell == cell_key_.end() || *cell != cell_key(h.pos)) continue;  // (always listed)
    const std::uint32_t begin = cell_begin_[c];
    const std::uint32_t count = cell_begin_[c + 1] - begin;
    if ((count - 1) * per_r2 * h.radius * h.radius < need) continue;
    enter_crowd(s);
    ord_class_[begin + simd::find_u32(ord_slot_.data() + begin, count, s)] = h.mutual_class;
  }
}

// Marks the occupied cells whose listed entities all belong to one crowd (their class
// bytes all that crowd's), which its members' list rebuilds skip: this update's cell order.
void GridAoi::mark_crowd_cells() {
  if (crowd_count_ == 0) return;  // (only members read the marks)
  const std::size_t cells = cell_key_.size();
  cell_crowd_.assign(cells, 0);
  const std::uint8_t* const classes = ord_class_.data();
  for (std::size_t c = 0; c < cells; ++c) {
    const std::uint8_t first = classes[cell_begin_[c]];
    if (!(first & kCrowdBit)) continue;
    std::uint32_t i = cell_begin_[c] + 1;
    while (i < cell_begin_[c + 1] && classes[i] == first) ++i;
    if (i == cell_begin_[c + 1]) cell_crowd_[c] = first;
  }
}

// An observer of a mutual class joins its class's crowd when its cell's density puts about
// crowd_min_in_view other entities within its radius r ((population - 1) * pi r^2 /
// cell_size^2), and a member leaves below half that. (Cells as the broad phase lists them: one that
// walked into another cell may count in its old one for a few ticks, which only delays a change.)
void GridAoi::crowd_membership() {
  const double need = config_.crowd_min_in_view;
  if (need == 0.0) return;
  crowd_joiners_.clear();
  crowd_leavers_.clear();
  double max_r2 = 0.0;  // cells too sparse for any class to join are skipped
  for (const double r : class_radius_) max_r2 = std::max(max_r2, r * r);
  const double per_r2 = pi_over_cell_area();
  // Without members and without a cell dense enough, nothing to look at.
  if (crowd_count_ == 0 && (max_cell_population_ - 1.0) * per_r2 * max_r2 < need) return;
  const std::size_t cells = cell_key_.size();
  for (std::size_t c = 0; c < cells; ++c) {
    const std::uint32_t begin = cell_begin_[c];
    const std::uint32_t end = cell_begin_[c + 1];
    const double density = (end - begin - 1) * per_r2;  // (the others in the cell)
    if (crowd_count_ == 0 && density * max_r2 < need) continue;
    for (std::uint32_t i = begin; i < end; ++i) {
      const std::uint32_t s = ord_slot_[i];
      const Hot& h = hot_[s];
      const double in_view = density * h.radius * h.radius;
      if (crowd_class_[s] != 0) {
        if (2.0 * in_view < need) crowd_leavers_.push_back(s);
      } else if (in_view >= need && may_join_crowd(s)) {
        crowd_joiners_.push_back(s);
      }
    }
  }
  for (const std::uint32_t s : crowd_leavers_) {
    leave_crowd(s);
    hot_[s].flags |= kReclass;
  }
  join_crowds();
}

// Hands this tick's joiners' visible pairs with members (and with each other) from the
// views to the crowd tiers. Each such pair is held by its lower slot's view: a member's
// (found around the joiner, as for_each_holder finds holders) or a joiner's own.
void GridAoi::join_crowds() {
  if (crowd_joiners_.empty()) return;
  handed_.clear();
  for (const std::uint32_t s : crowd_joiners_) {
    for_each_holder(
        s, hot_[s].mutual_class,
        [&](std::uint32_t u) {
          handed_.push_back({u, s});
        },
        /*members_only=*/true);
  }
  for (const HeldPair& p : handed_) remove_from_view(p.holder, p.target, kNotVisible);
  for (const std::uint32_t s : crowd_joiners_) enter_crowd(s);
  for (const std::uint32_t s : crowd_joiners_) {
    std::vector<std::uint32_t>& view = view_[s];
    for (std::size_t k = 0; k < view.size();) {
      if (crowd_pair(s, view[k])) {
        handed_.push_back({s, view[k]});
        view[k] = view.back();
        view.pop_back();
        continue;
      }
      ++k;
    }
  }
  for (const HeldPair& p : handed_) crowd_tier(p.holder).set_in_view(p.holder, p.target);
  visible_pairs_ -= 2 * handed_.size();
}

// s leaves its crowd: its visible pairs with the members go back to the views, each held by
// its lower slot's view as a mutual pair, or by both views when one end has left the class
// (a member removed since the last update, whose crowd would have ended its pairs). The
// caller marks s kReclass, or rebuilds every list.
void GridAoi::leave_crowd(std::uint32_t s) {
  crowd_scratch_.clear();
  crowd_tier(s).release(s, crowd_scratch_);
  for (const std::uint32_t t : crowd_scratch_) {
    if (classmates(hot_[s].mutual_class, hot_[t].mutual_class)) {
      view_[std::min(s, t)].push_back(std::max(s, t));
    } else {
      view_[s].push_back(t);
      view_[t].push_back(s);
    }
  }
  visible_pairs_ += 2 * crowd_scratch_.size();
  crowd_class_[s] = 0;
  hot_[s].mutual_class &= kClassBits;
  --crowd_count_;
}

// Every member leaves (the hysteresis the tiers were made with changed): the update that
// calls this rebuilds every list.
void GridAoi::dissolve_crowds() {
  const auto slots = static_cast<std::uint32_t>(hot_.size());
  for (std::uint32_t s = 0; s < slots; ++s) {
    if (crowd_class_[s] != 0) leave_crowd(s);
  }
  crowds_.clear();
}

}  // namespace zone::aoi
