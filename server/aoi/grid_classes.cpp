// GridAoi's mutual classes: observers of one view radius, whose pairs are decided once,
// by the lower slot's list.

#include "aoi/grid_aoi.hpp"

#include "aoi/grid_aoi_internal.hpp"

#include <cmath>
#include <vector>

namespace zone::aoi {

// The mutual class of observers of this radius; 0 (none) for a new radius once 127 radii
// have had one (ids are never reused, so that one id names one radius for good).
std::uint8_t GridAoi::class_for(double radius) {
  for (std::size_t k = 0; k < class_radius_.size(); ++k) {
    if (class_radius_[k] == radius) return static_cast<std::uint8_t>(k + 1);
  }
  if (class_radius_.size() == kClassBits) return 0;
  class_radius_.push_back(radius);
  return static_cast<std::uint8_t>(class_radius_.size());
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
  // Its crowd's pairs go back to the views first (a removed member's stay in its crowd,
  // which ends them at the next update).
  if (crowd_class_[s] != 0 && !(h.flags & kRemoved)) leave_crowd(s);
  split_pairs(s, class_of(h.mutual_class));
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
    if (classmates(hot_[t].mutual_class, cls)) {
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

// s leaves its class cls: each of its mutual pairs, held by the lower slot's view alone,
// gets an entry in the other view too (each direction is followed on its own from now on).
void GridAoi::split_pairs(std::uint32_t s, std::uint8_t cls) {
  if (hot_[s].flags & kAdded) return;  // no pairs yet
  std::vector<std::uint32_t>& view = view_[s];
  for (const std::uint32_t t : view) {
    if (t > s && classmates(hot_[t].mutual_class, cls)) view_[t].push_back(s);
  }
  for_each_holder(s, cls, [&](std::uint32_t u) { view.push_back(u); });
}

}  // namespace zone::aoi
