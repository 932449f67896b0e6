// Brute-force reference model of the AOI visibility rule, for differential testing.
//
// Written from the rule alone, independently of server/aoi: every step looks at every
// ordered pair of present entities, O(N^2), with no broad phase and no incremental state
// beyond the set of visible pairs.
//
//   b ENTERS a's view when (a, b) is not visible and dx*dx + dy*dy <= r_a * r_a
//   b LEAVES a's view when (a, b) is visible and dx*dx + dy*dy > (r_a + h) * (r_a + h)
//   (dx = x_b - x_a, dy = y_b - y_a, double precision), never a == b, only observers
//   have views, non-observers are still targets. A despawned entity loses every pair it
//   is part of (both directions) at the next step; an observer switched off loses its
//   whole view at the next step. Mutations only take effect at step().
//
// Its own consistency checks are doctest assertions, so they also run in optimised
// (NDEBUG) builds.
#pragma once

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace zone::aoi::test {

class Oracle {
 public:
  using Id = std::uint32_t;
  using Pair = std::pair<Id, Id>;  // (observer, target)

  struct Entity {
    double x = 0.0;
    double y = 0.0;
    double radius = 0.0;
    bool observer = false;
    bool alive = false;
  };

  struct StepResult {
    std::vector<Pair> enters;  // sorted, unique
    std::vector<Pair> leaves;  // sorted, unique
  };

  explicit Oracle(double hysteresis) : hysteresis_(hysteresis) {}

  // Ids are dense and never reused.
  Id spawn(double x, double y, double radius, bool observer) {
    const Id id = static_cast<Id>(entities_.size());
    entities_.push_back({x, y, radius, observer, true});
    present_.push_back(id);  // ids only grow, so present_ stays sorted
    return id;
  }
  void despawn(Id id) {
    REQUIRE(entities_.at(id).alive);
    entities_[id].alive = false;
  }
  void move(Id id, double x, double y) {
    entities_.at(id).x = x;
    entities_[id].y = y;
  }
  void set_radius(Id id, double radius) { entities_.at(id).radius = radius; }
  void set_observer(Id id, bool observer) { entities_.at(id).observer = observer; }
  void set_hysteresis(double hysteresis) { hysteresis_ = hysteresis; }
  double hysteresis() const { return hysteresis_; }

  const Entity& entity(Id id) const { return entities_.at(id); }
  bool alive(Id id) const { return id < entities_.size() && entities_[id].alive; }
  const std::set<Pair>& visible() const { return visible_; }
  bool sees(Id observer, Id target) const { return visible_.count({observer, target}) != 0; }

  // Sorted targets in an observer's view.
  std::vector<Id> view(Id observer) const {
    std::vector<Id> out;
    for (auto it = visible_.lower_bound({observer, 0});
         it != visible_.end() && it->first == observer; ++it) {
      out.push_back(it->second);
    }
    return out;
  }

  static double dist2(const Entity& a, const Entity& b) {
    const double dx = b.x - a.x;
    const double dy = b.y - a.y;
    return dx * dx + dy * dy;
  }

  StepResult step() {
    StepResult result;
    const double h = hysteresis_;
    // Every visible pair involves two present ids, and visible_ is ordered by
    // (observer, target) just like this double loop over the sorted present_ list, so
    // one forward walk tells whether each pair is currently visible.
    auto vis = visible_.begin();
    for (const Id a : present_) {
      const Entity& ea = entities_[a];
      const bool can_see = ea.alive && ea.observer;
      if (!can_see && (vis == visible_.end() || vis->first != a)) continue;
      const double r = ea.radius;
      const double inner2 = r * r;
      const double outer = r + h;
      const double outer2 = outer * outer;
      for (const Id b : present_) {
        const bool was_visible = vis != visible_.end() && vis->first == a && vis->second == b;
        if (was_visible) ++vis;
        if (a == b) {
          if (was_visible) FAIL_CHECK("oracle: entity " << a << " sees itself");
          continue;
        }
        const Entity& eb = entities_[b];
        if (was_visible) {
          if (!can_see || !eb.alive || dist2(ea, eb) > outer2) result.leaves.emplace_back(a, b);
        } else if (can_see && eb.alive && dist2(ea, eb) <= inner2) {
          result.enters.emplace_back(a, b);
        }
      }
    }
    if (vis != visible_.end()) {
      FAIL_CHECK("oracle: visible pair (" << vis->first << ", " << vis->second
                                          << ") not visited: the present list is broken");
    }
    for (const Pair& p : result.leaves) visible_.erase(p);
    for (const Pair& p : result.enters) visible_.insert(p);
    // Despawned entities are gone for good once their pairs have left.
    std::erase_if(present_, [this](Id id) { return !entities_[id].alive; });
    return result;
  }

 private:
  double hysteresis_;
  std::vector<Entity> entities_;
  std::vector<Id> present_;  // alive ids plus those despawned since the last step; sorted
  std::set<Pair> visible_;
};

}  // namespace zone::aoi::test
