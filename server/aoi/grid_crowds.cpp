// GridAoi's crowds: the observers of one mutual class in crowded cells hand their pairs
// with each other to a CrowdTier (crowd_tier.hpp), one per class.
//
// A pair of two members of one crowd is the tier's alone: in no view, no list and no
// scheduled test (the lists skip it, and handing a pair over bumps both ends' versions at
// the next update, which makes any test of it stale). Membership changes at the end of an
// update, on that update's views and positions, and hands the pairs over without events:
// a joiner's visible pairs with members leave the views (held by the lower slot's view, as
// any mutual pair) for the tier's bits; a leaver's go back. The member is then marked
// kReclass, so that the next update handles it as a teleport in place: its version bumped,
// its list rebuilt, and every list near it given a test of its pair with it.

#include "aoi/grid_aoi.hpp"

#include "aoi/grid_aoi_internal.hpp"

#include <algorithm>
#include <memory>

namespace zone::aoi {
namespace {

// A class's crowd cells are this share of r + h: 12 m for r + h = 32 m measured best of
// 8 - 16 m on a crowd (docs/benchmarks.md, "The crowd tier").
constexpr double kCrowdCellShare = 0.375;
// The smallest cell a CrowdTier takes, and the largest r + h given a crowd (beyond the
// coordinate range every member would share one cell: nothing to gain).
constexpr double kMinCrowdCell = 0.01;
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
    if (!(reach * kCrowdCellShare >= kMinCrowdCell && reach <= kMaxCrowdReach)) return nullptr;
    tier = std::make_unique<CrowdTier>(reach * kCrowdCellShare, radius, config_.hysteresis);
    crowd_hysteresis_ = config_.hysteresis;
  }
  return tier.get();
}

// Decides the crowds' pairs on this update's positions: their events, both ways (first the
// leaves of the members removed since the last update).
void GridAoi::update_crowds() {
  for (const std::uint32_t s : removed_) {
    if (const std::uint8_t cls = crowd_[s]; cls != 0) {
      crowds_[cls - 1u]->erase(s);
      crowd_[s] = 0;
      --crowd_count_;
    }
  }
  for (const std::unique_ptr<CrowdTier>& tier : crowds_) {
    if (!tier) continue;
    for (const CrowdTier::Event& e : tier->update()) {
      emit(e.a, e.b, e.kind);
      emit(e.b, e.a, e.kind);
    }
  }
}

// An observer of a mutual class joins its class's crowd when its cell's density puts about
// crowd_min_in_view entities within its radius r (population * pi r^2 / cell_size^2), and
// a member leaves below half that. (Cells as the broad phase lists them: one that walked
// into another cell may count in its old one for a few ticks, which only delays a change.)
void GridAoi::crowd_membership() {
  const double need = config_.crowd_min_in_view;
  if (need == 0.0) return;
  crowd_joiners_.clear();
  crowd_leavers_.clear();
  double max_r2 = 0.0;  // cells too sparse for any class to join are skipped
  for (const double r : class_radius_) max_r2 = std::max(max_r2, r * r);
  const double per_r2 = 3.141592653589793 * inv_cell_ * inv_cell_;  // in view per entity and r^2
  const std::size_t cells = cell_key_.size();
  for (std::size_t c = 0; c < cells; ++c) {
    const std::uint32_t begin = cell_begin_[c];
    const std::uint32_t end = cell_begin_[c + 1];
    const double density = (end - begin) * per_r2;
    if (crowd_count_ == 0 && density * max_r2 < need) continue;
    for (std::uint32_t i = begin; i < end; ++i) {
      const std::uint32_t s = ord_slot_[i];
      const Hot& h = hot_[s];
      const double in_view = density * h.radius * h.radius;
      if (crowd_[s] != 0) {
        if (2.0 * in_view < need) crowd_leavers_.push_back(s);
      } else if (in_view >= need &&
                 (h.flags & (kAlive | kObserver | kRemoved)) == (kAlive | kObserver) &&
                 h.mutual_class != 0 && crowd_of(h.mutual_class) != nullptr) {
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
  for (const std::uint32_t s : crowd_joiners_) {
    const std::uint8_t cls = hot_[s].mutual_class;
    crowds_[cls - 1u]->insert(s, hot_[s].pos);
    crowd_[s] = cls;
    ++crowd_count_;
    hot_[s].flags |= kReclass;
  }
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
  for (const HeldPair& p : handed_) {
    crowds_[crowd_[p.holder] - 1u]->set_in_view(p.holder, p.target);
  }
  visible_pairs_ -= 2 * handed_.size();
}

// s leaves its crowd: its visible pairs with the members go back to the views, each held by
// its lower slot's view as a mutual pair, or by both views when one end has left the class
// (a member removed since the last update, whose crowd would have ended its pairs). The
// caller marks s kReclass, or rebuilds every list.
void GridAoi::leave_crowd(std::uint32_t s) {
  crowd_scratch_.clear();
  crowds_[crowd_[s] - 1u]->release(s, crowd_scratch_);
  for (const std::uint32_t t : crowd_scratch_) {
    if (classmates(hot_[s].mutual_class, hot_[t].mutual_class)) {
      view_[std::min(s, t)].push_back(std::max(s, t));
    } else {
      view_[s].push_back(t);
      view_[t].push_back(s);
    }
  }
  visible_pairs_ += 2 * crowd_scratch_.size();
  crowd_[s] = 0;
  --crowd_count_;
}

// Every member leaves (the hysteresis the tiers were made with changed): the update that
// calls this rebuilds every list.
void GridAoi::dissolve_crowds() {
  for (std::uint32_t s = 0; s < crowd_.size(); ++s) {
    if (crowd_[s] != 0) leave_crowd(s);
  }
  crowds_.clear();
}

}  // namespace zone::aoi
