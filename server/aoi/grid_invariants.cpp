// GridAoi::check_invariants(): the consistency check the tests use (O(N^2 + scheduled
// tests)).

#include "aoi/grid_aoi.hpp"

#include "aoi/grid_aoi_internal.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>

namespace zone::aoi {

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
    const TestWheel::Bucket& bucket = wheel_.bucket(k);
    for (std::size_t c = 0; c < bucket.chunks.size(); ++c) {
      for (const PairTest& t : bucket.chunk(c)) {
        const std::uint32_t b = t.target & ~kVisibleBit;
        if (t.observer_version != hot_[t.observer].observer_version ||
            t.target_version != hot_[b].target_version) {
          continue;
        }
        // A test of a crowd's pair, filed before both joined: dropped when it comes due.
        if (crowd_mates(hot_[t.observer].mutual_class, hot_[b].mutual_class)) continue;
        // The tick this bucket stands for: the first after now_ with these low bits.
        const std::uint32_t tick = now_ + 1 + ((k - (now_ + 1)) & wheel_.mask());
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
  // Every observer's targets: its view, the mutual pairs held by lower classmates', and
  // the pairs its crowd decides.
  std::vector<std::vector<std::uint32_t>> sees_of(capacity);
  std::uint32_t members = 0;
  std::vector<std::uint32_t> partners;
  for (std::uint32_t a = 0; a < capacity; ++a) {
    if (present(a) && (crowd_class_[a] != 0) != ((hot_[a].mutual_class & kCrowdBit) != 0)) {
      out << "crowd bit of " << a << " is not its membership\n";
    }
    if (crowd_class_[a] == 0) continue;
    ++members;
    if (!observing(a) || crowd_class_[a] != class_of(hot_[a].mutual_class)) {
      out << "crowd member " << a << " is no observer of its crowd's class\n";
      continue;
    }
    const CrowdTier* tier =
        crowd_class_[a] <= crowds_.size() ? crowds_[crowd_class_[a] - 1u].get() : nullptr;
    if (tier == nullptr || !tier->contains(a)) {
      out << "crowd member " << a << " is not in its crowd tier\n";
      continue;
    }
    partners.clear();
    tier->partners(a, partners);
    for (const std::uint32_t t : partners) {
      if (!crowd_pair(a, t)) out << "crowd pair " << a << "-" << t << " with a non-member\n";
      sees_of[a].push_back(t);
    }
  }
  if (members != crowd_count_) {
    out << "crowd member count " << crowd_count_ << " != " << members << "\n";
  }
  std::uint64_t crowd_pairs = 0;
  for (const std::unique_ptr<CrowdTier>& tier : crowds_) {
    if (!tier) continue;
    crowd_pairs += 2 * tier->visible_pairs();
    if (const std::string e = tier->check_invariants(); !e.empty()) out << "crowd tier: " << e;
  }
  for (std::uint32_t a = 0; a < capacity; ++a) {
    if (!present(a)) continue;
    for (const std::uint32_t t : view_[a]) {
      if (t < capacity && crowd_pair(a, t)) {
        out << "view of " << a << " holds crowd pair " << t << "\n";
      }
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
      if (class_radius_[class_of(hot_[a].mutual_class) - 1u] != hot_[a].radius) {
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
      // A pair that could change before the list expires must have a test scheduled; but
      // not a crowd's pair, nor one of an observer that left a crowd at this update
      // (kReclass: re-tested at the next, as a teleport in place).
      if (crowd_pair(a, t) || ((hot_[a].flags | hot_[t].flags) & kReclass)) continue;
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
  if (pairs != visible_pairs_ + crowd_pairs) {
    out << "visible pair count " << visible_pairs_ << " + " << crowd_pairs << " != " << pairs;
  }
  return out.str();
}

}  // namespace zone::aoi
