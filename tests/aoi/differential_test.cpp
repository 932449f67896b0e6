// Differential test: GridAoi against the brute-force Oracle (oracle.hpp).
//
// Both are driven by the same seeded random operations: spawns, despawns, ordinary
// moves, teleports anywhere (including outside the world bounds and out to
// +-kMaxCoordinate), mixed radii, radius changes, observer toggling, refused input,
// runtime cell size / hysteresis / displacement bound changes, and pairs parked exactly at
// distance r and r + h (and just inside / just beyond) of an observer. With a displacement
// bound (max_step), ordinary moves walk up to exactly the bound, some overstep it (slightly
// or by far) and are handled as teleports. After every update() the tick's enter and leave
// events, every view set and the stats are compared, and the AOI's own invariants
// (GridAoi::check_invariants: candidate lists, scheduled re-tests, broad phase) checked.
//
// Seeds are fixed so a failure reproduces; the failure message names the configuration,
// seed and tick. Environment overrides for soak runs:
//   ZONE_AOI_DIFF_SEED=<n>   use this seed for every configuration
//   ZONE_AOI_DIFF_SCALE=<k>  run k times as many ticks
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "aoi/grid_aoi.hpp"
#include "event_order.hpp"
#include "oracle.hpp"

using zone::aoi::Bounds;
using zone::aoi::EntityHandle;
using zone::aoi::EventKind;
using zone::aoi::GridAoi;
using zone::aoi::GridConfig;
using zone::aoi::GridConfigError;
using zone::aoi::Vec2;
using zone::aoi::VisibilityEvent;
using zone::aoi::test::Oracle;
using zone::aoi::test::rebuild_order_error;

namespace {

using Id = Oracle::Id;
using Pair = Oracle::Pair;

constexpr double kMax = GridAoi::kMaxCoordinate;

struct RadiusBand {
  double weight;
  double lo;
  double hi;
};

struct DiffConfig {
  const char* name;
  std::uint64_t seed;
  GridConfig grid;
  int ticks;
  int target_entities;
  double observer_fraction;
  std::vector<RadiusBand> radii;
  double step;                 // ordinary move: up to +-step per axis
  double move_fraction;        // share of live entities moved per tick
  double jump_fraction;        // share of moves that jump several cells instead
  int teleports_per_tick;      // up to this many teleports per tick
  double far_teleport_chance;  // teleport out to +-kMaxCoordinate territory
  int churn_per_tick;          // up to this many spawns and despawns per tick
  int radius_changes_per_tick;
  int toggles_per_tick;
  int parked_pairs;                        // persistent pairs parked on the r / r+h boundary
  std::vector<double> cell_size_choices;   // runtime set_cell_size (empty: never)
  std::vector<double> hysteresis_choices;  // runtime set_hysteresis (empty: never)
  std::vector<double> max_step_choices;    // runtime set_max_step (empty: never)
  // Share of ordinary moves that overstep the displacement bound (when there is one):
  // half of them by a hair, half by up to three times the bound.
  double overstep_fraction = 0.0;
};

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 10);
}

bool valid_coordinate(double v) {
  return std::isfinite(v) && std::abs(v) <= kMax;
}
bool valid_position(Vec2 p) {
  return valid_coordinate(p.x) && valid_coordinate(p.y);
}
double clamp_coordinate(double v) {
  return std::clamp(v, -kMax, kMax);
}
double snap8(double v) {
  return std::round(v * 8.0) / 8.0;
}  // multiples of 1/8 are exact

class Harness {
 public:
  explicit Harness(const DiffConfig& cfg)
      : cfg_(cfg),
        seed_(env_u64("ZONE_AOI_DIFF_SEED", cfg.seed)),
        rng_(seed_),
        aoi_(cfg.grid),
        oracle_(cfg.grid.hysteresis) {}

  void run() {
    const int ticks = static_cast<int>(cfg_.ticks * env_u64("ZONE_AOI_DIFF_SCALE", 1));
    for (tick_ = 0; tick_ < ticks; ++tick_) {
      mutate();
      if (failed_) FAIL(report_.str());
      compare_views_before_update();
      if (failed_) FAIL(report_.str());
      const auto events = aoi_.update();
      if (pending_cell_size_ > 0.0) {
        REQUIRE(aoi_.config().cell_size == pending_cell_size_);
        pending_cell_size_ = 0.0;
      }
      const Oracle::StepResult expected = oracle_.step();
      compare(events, expected);
      if (failed_) return;
      if (const std::string broken = aoi_.check_invariants(); !broken.empty()) {
        fail() << "AOI invariants: " << broken.substr(0, 2000);
        FAIL(report_.str());
      }
      forget_despawned();
      if (failed_) FAIL(report_.str());
      const std::uint32_t members = aoi_.stats().crowd_members;
      crowd_joins_ += members > crowd_members_ ? members - crowd_members_ : 0;
      crowd_leaves_ += members < crowd_members_ ? crowd_members_ - members : 0;
      crowd_members_ = members;
    }
    MESSAGE(std::string(cfg_.name)
            << ": seed " << seed_ << ", " << ticks << " ticks, " << total_enters_ << " enters, "
            << total_leaves_ << " leaves, " << spawned_ << " spawns, exact-r enters "
            << exact_r_enters_ << ", exact-(r+h) keeps " << exact_outer_keeps_
            << ", hysteresis keeps " << band_keeps_ << ", crowd members joined " << crowd_joins_
            << " left " << crowd_leaves_);
    // The run must really have exercised what it claims to.
    CHECK(total_enters_ > 0);
    CHECK(total_leaves_ > 0);
    if (cfg_.parked_pairs > 0) {
      CHECK(exact_r_enters_ > 0);
      CHECK(exact_outer_keeps_ > 0);
    }
    if (cfg_.grid.crowd_min_in_view > 0) {  // observers went into crowds and out again
      CHECK(crowd_joins_ > 0);
      CHECK(crowd_leaves_ > 0);
    }
  }

 private:
  // ---- random helpers (bit-exact across standard libraries) -------------------------------
  double u01() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * u01(); }
  std::uint64_t below(std::uint64_t n) { return rng_() % n; }
  bool chance(double p) { return u01() < p; }

  // Net changes of the crowds' membership from one update to the next, summed.
  std::uint32_t crowd_members_ = 0;
  std::uint64_t crowd_joins_ = 0;
  std::uint64_t crowd_leaves_ = 0;

  double span_x() const { return cfg_.grid.bounds.max.x - cfg_.grid.bounds.min.x; }
  double span_y() const { return cfg_.grid.bounds.max.y - cfg_.grid.bounds.min.y; }

  // A coordinate on a cell edge (possibly outside the world), computed the obvious way.
  double cell_edge(double min, double span) {
    const double cs = aoi_.config().cell_size;
    const auto cells = static_cast<std::int64_t>(std::ceil(span / cs));
    const auto k = static_cast<std::int64_t>(below(static_cast<std::uint64_t>(cells + 5))) - 2;
    return min + static_cast<double>(k) * cs;
  }

  double random_coordinate(double min, double span) {
    const double roll = u01();
    if (roll < 0.15) return clamp_coordinate(cell_edge(min, span));
    if (roll < 0.20) return roll < 0.175 ? min : min + span;  // world edges
    // Mostly inside, some outside the bounds by up to a quarter of the world.
    const double v = uniform(min - 0.25 * span, min + 1.25 * span);
    return clamp_coordinate(roll < 0.3 ? snap8(v) : v);
  }

  Vec2 random_position() {
    return {random_coordinate(cfg_.grid.bounds.min.x, span_x()),
            random_coordinate(cfg_.grid.bounds.min.y, span_y())};
  }

  Vec2 far_position() {
    auto far = [&]() {
      const double roll = u01();
      if (roll < 0.2) return roll < 0.1 ? kMax : -kMax;
      return snap8(uniform(-kMax, kMax));
    };
    // Sometimes only one axis goes far so the entity lands in a border row or column.
    const double roll = u01();
    Vec2 p = random_position();
    if (roll < 0.4) p.x = far();
    if (roll > 0.3) p.y = far();
    return p;
  }

  double random_radius() {
    double total = 0.0;
    for (const RadiusBand& b : cfg_.radii) total += b.weight;
    double pick = uniform(0.0, total);
    for (const RadiusBand& b : cfg_.radii) {
      if (pick < b.weight || &b == &cfg_.radii.back()) {
        const double r = uniform(b.lo, b.hi);
        return chance(0.5) ? snap8(r) : r;
      }
      pick -= b.weight;
    }
    return 0.0;
  }

  // A displacement for one tick under the bound b: often exactly b along an axis or in a
  // random direction (the worst case for the schedule), otherwise shorter; a few overstep.
  Vec2 bounded_step(double b) {
    const double angle = uniform(0.0, 6.283185307179586);
    if (chance(cfg_.overstep_fraction)) {
      const double len = chance(0.5) ? b * (1.0 + 1e-6) + 1e-9 : b * uniform(1.0, 3.0) + 1e-6;
      return {len * std::cos(angle), len * std::sin(angle)};
    }
    const double roll = u01();
    if (roll < 0.3) {
      switch (below(4)) {
        case 0:
          return {b, 0.0};
        case 1:
          return {-b, 0.0};
        case 2:
          return {0.0, b};
        default:
          return {0.0, -b};
      }
    }
    const double len = roll < 0.6 ? b : uniform(0.0, b);
    return {len * std::cos(angle), len * std::sin(angle)};
  }

  // ---- operations on both models ---------------------------------------------------------
  void spawn(Vec2 p, double radius, bool observer) {
    const EntityHandle h = aoi_.add(p, radius, observer);
    REQUIRE(h.valid());
    const Id id = oracle_.spawn(p.x, p.y, radius, observer);
    REQUIRE(id == handles_.size());
    handles_.push_back(h);
    if (by_slot_.size() <= h.index) by_slot_.resize(h.index + 1);
    // A slot is only reused after the update that released it.
    REQUIRE_FALSE(by_slot_[h.index].used);
    by_slot_[h.index] = {h.generation, id, true};
    live_.push_back(id);
    ++spawned_;
  }

  void despawn(std::size_t live_index) {
    const Id id = live_[live_index];
    expect(aoi_.remove(handles_[id]), "remove() of a live entity");
    expect(!aoi_.contains(handles_[id]), "contains() false right after remove()");
    expect(!aoi_.remove(handles_[id]), "a second remove() is refused");
    oracle_.despawn(id);
    live_[live_index] = live_.back();
    live_.pop_back();
    despawned_now_.push_back(id);
  }

  void move(Id id, Vec2 p) {
    const bool ok = valid_position(p);
    expect(aoi_.move(handles_[id], p) == ok, "move() accepts exactly the valid positions");
    if (ok) oracle_.move(id, p.x, p.y);
  }

  void set_radius(Id id, double r) {
    expect(aoi_.set_view_radius(handles_[id], r), "set_view_radius() of a live entity");
    oracle_.set_radius(id, r);
  }

  void set_observer(Id id, bool observer) {
    expect(aoi_.set_observer(handles_[id], observer), "set_observer() of a live entity");
    oracle_.set_observer(id, observer);
  }

  Id random_live() { return live_[below(live_.size())]; }

  void mutate() {
    // Despawns and spawns, drifting towards the target population.
    const auto target = static_cast<std::size_t>(cfg_.target_entities);
    if (tick_ == 0) {
      for (std::size_t i = 0; i < target; ++i) {
        spawn(random_position(), random_radius(), chance(cfg_.observer_fraction));
      }
    } else {
      const auto churn = static_cast<std::uint64_t>(cfg_.churn_per_tick) + 1;
      std::uint64_t despawns = below(churn);
      std::uint64_t spawns = below(churn);
      if (live_.size() < target) ++spawns;
      if (live_.size() > target + target / 5) ++despawns;
      for (std::uint64_t i = 0; i < despawns && !live_.empty(); ++i) despawn(below(live_.size()));
      for (std::uint64_t i = 0; i < spawns; ++i) {
        spawn(random_position(), random_radius(), chance(cfg_.observer_fraction));
      }
      // Occasionally an entity lives for no tick at all: never seen, never any event.
      if (chance(0.05)) {
        spawn(random_position(), random_radius(), true);
        despawn(live_.size() - 1);
      }
    }
    if (live_.empty()) return;

    // Ordinary moves (sometimes several cells at once), half of the ticks as one batch.
    const bool batch = chance(0.5);
    std::vector<GridAoi::Move> moves;
    std::vector<std::pair<Id, Vec2>> applied;
    const double cs = aoi_.config().cell_size;
    for (const Id id : live_) {
      if (!chance(cfg_.move_fraction)) continue;
      const Oracle::Entity& e = oracle_.entity(id);
      Vec2 p;
      if (chance(cfg_.jump_fraction)) {
        const double reach = 10.0 * cs;
        p = {clamp_coordinate(e.x + uniform(-reach, reach)),
             clamp_coordinate(e.y + uniform(-reach, reach))};
      } else if (std::isfinite(aoi_.config().max_step)) {
        const Vec2 d = bounded_step(aoi_.config().max_step);
        p = {clamp_coordinate(e.x + d.x), clamp_coordinate(e.y + d.y)};
      } else {
        p = {clamp_coordinate(e.x + uniform(-cfg_.step, cfg_.step)),
             clamp_coordinate(e.y + uniform(-cfg_.step, cfg_.step))};
      }
      if (batch) {
        moves.push_back({handles_[id], p});
        applied.emplace_back(id, p);
      } else {
        move(id, p);
      }
    }
    if (batch) {
      std::size_t refused_expected = 0;
      if (chance(0.3)) {  // a refused move inside the batch changes nothing
        moves.push_back({handles_[random_live()], {std::nan(""), 0.0}});
        ++refused_expected;
      }
      if (chance(0.3) && !dead_handles_.empty()) {
        moves.push_back({dead_handles_[below(dead_handles_.size())], {1.0, 1.0}});
        ++refused_expected;
      }
      REQUIRE(aoi_.move_batch(moves) == refused_expected);
      for (const auto& [id, p] : applied) oracle_.move(id, p.x, p.y);
    }

    // Teleports anywhere, including far outside the world.
    for (std::uint64_t i = below(static_cast<std::uint64_t>(cfg_.teleports_per_tick) + 1); i > 0;
         --i) {
      move(random_live(), chance(cfg_.far_teleport_chance) ? far_position() : random_position());
    }
    for (std::uint64_t i = below(static_cast<std::uint64_t>(cfg_.radius_changes_per_tick) + 1);
         i > 0; --i) {
      set_radius(random_live(), random_radius());
    }
    for (std::uint64_t i = below(static_cast<std::uint64_t>(cfg_.toggles_per_tick) + 1); i > 0;
         --i) {
      const Id id = random_live();
      set_observer(id, !oracle_.entity(id).observer);
      // Toggling twice in one tick must be invisible.
      if (chance(0.2)) set_observer(id, !oracle_.entity(id).observer);
    }

    refused_input();
    retune();
    park();
  }

  // Input the AOI must refuse without storing anything.
  void refused_input() {
    if (!chance(0.2)) return;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const Vec2 bad_positions[] = {{nan, 0.0},
                                  {0.0, inf},
                                  {-inf, 1.0},
                                  {std::nextafter(kMax, inf), 0.0},
                                  {0.0, -std::nextafter(kMax, inf)}};
    const double bad_radii[] = {-1.0, -0.125, nan, inf, std::nextafter(kMax, inf)};
    const Vec2 bad_p = bad_positions[below(std::size(bad_positions))];
    const double bad_r = bad_radii[below(std::size(bad_radii))];
    REQUIRE_FALSE(aoi_.add(bad_p, 10.0, true).valid());
    REQUIRE_FALSE(aoi_.add({0.0, 0.0}, bad_r, true).valid());
    const Id id = random_live();
    REQUIRE_FALSE(aoi_.move(handles_[id], bad_p));
    REQUIRE_FALSE(aoi_.set_view_radius(handles_[id], bad_r));
    REQUIRE_FALSE(aoi_.move(EntityHandle{}, {1.0, 1.0}));
    if (!dead_handles_.empty()) {
      const EntityHandle dead = dead_handles_[below(dead_handles_.size())];
      REQUIRE_FALSE(aoi_.contains(dead));
      REQUIRE_FALSE(aoi_.move(dead, {1.0, 1.0}));
      REQUIRE_FALSE(aoi_.remove(dead));
      REQUIRE_FALSE(aoi_.set_view_radius(dead, 1.0));
      REQUIRE_FALSE(aoi_.set_observer(dead, true));
    }
  }

  // Runtime cell size and hysteresis changes.
  void retune() {
    if (!cfg_.cell_size_choices.empty() && chance(0.03)) {
      const double cs = cfg_.cell_size_choices[below(cfg_.cell_size_choices.size())];
      REQUIRE(aoi_.set_cell_size(cs) == GridConfigError::kNone);
      pending_cell_size_ = cs;  // checked after the next update(), where it applies
    }
    if (!cfg_.hysteresis_choices.empty() && chance(0.03)) {
      const double h = cfg_.hysteresis_choices[below(cfg_.hysteresis_choices.size())];
      REQUIRE(aoi_.set_hysteresis(h) == GridConfigError::kNone);
      oracle_.set_hysteresis(h);
    }
    if (!cfg_.max_step_choices.empty() && chance(0.03)) {
      const double b = cfg_.max_step_choices[below(cfg_.max_step_choices.size())];
      REQUIRE(aoi_.set_max_step(b) == GridConfigError::kNone);
    }
  }

  // Persistent (observer, target) pairs whose target is placed, each tick, at an exactly
  // representable offset from the observer: on r, on r + h, in between, just inside r,
  // just beyond r + h, on a 3-4-5 diagonal, or left alone. Observer position and radius
  // are snapped to multiples of 1/8 so every difference and square below is exact.
  void park() {
    parked_.resize(static_cast<std::size_t>(cfg_.parked_pairs));
    for (auto& [a, b] : parked_) {
      const bool usable =
          a != b && oracle_.alive(a) && oracle_.alive(b) && oracle_.entity(a).observer;
      if (!usable) {
        if (live_.size() < 2) continue;
        a = random_live();
        do {
          b = random_live();
        } while (b == a);
        if (!oracle_.entity(a).observer) set_observer(a, true);
      }
      const Oracle::Entity& ea = oracle_.entity(a);
      const Vec2 base{snap8(ea.x), snap8(ea.y)};  // kMax is a multiple of 1/8 too
      if (base.x != ea.x || base.y != ea.y) move(a, base);
      const double kind_roll = u01();
      if (kind_roll < 0.1) continue;  // leave it where it is this tick
      double r = snap8(std::min(ea.radius, 2000.0));
      const bool diagonal = kind_roll < 0.3;
      if (diagonal) r = 0.625 * std::max(1.0, std::round(r / 0.625));  // 5 * k / 8
      if (r != ea.radius) set_radius(a, r);
      const double h = oracle_.hysteresis();
      double d = 0.0;
      switch (below(8)) {
        case 0:
        case 1:
          d = r;
          break;
        case 2:
        case 3:
          d = r + h;
          break;
        case 4:
          d = r + 0.5 * h;
          break;
        case 5:
          d = std::max(0.0, r - 0.125);
          break;
        case 6:
          d = r + h + 0.125;
          break;
        default:
          d = std::nextafter(r + h, 1e300);
          break;
      }
      // Offsets flip direction where the other side would pass kMaxCoordinate.
      auto offset = [](double from, double by) {
        return std::abs(from + by) <= kMax ? from + by : from - by;
      };
      Vec2 p = base;
      if (diagonal && d == snap8(d) && d != 0.0) {
        // (3/5 d, 4/5 d) is exact when d is a multiple of 5/8; otherwise fall back to an axis.
        const double unit = d / 5.0;
        if (unit * 5.0 == d && snap8(unit * 3.0) == unit * 3.0) {
          const double sx = chance(0.5) ? 1.0 : -1.0;
          const double sy = chance(0.5) ? 1.0 : -1.0;
          p = {offset(base.x, sx * 3.0 * unit), offset(base.y, sy * 4.0 * unit)};
          move(b, p);
          continue;
        }
      }
      switch (below(4)) {
        case 0:
          p.x = offset(p.x, d);
          break;
        case 1:
          p.x = offset(p.x, -d);
          break;
        case 2:
          p.y = offset(p.y, d);
          break;
        default:
          p.y = offset(p.y, -d);
          break;
      }
      move(b, p);
    }
  }

  // ---- comparison ----------------------------------------------------------------------
  // Between the mutations and the update, the views answer as of the last update: also
  // those of observers switched off, re-radiused or despawned since (their mutual pairs
  // were split), and of the entities that see them.
  void compare_views_before_update() {
    std::vector<EntityHandle> view;
    std::vector<Id> got;
    auto check = [&](Id id) {
      view.clear();
      aoi_.view_set(handles_[id], view);
      got.clear();
      for (const EntityHandle t : view) got.push_back(id_of(t));
      std::sort(got.begin(), got.end());
      const std::vector<Id> want = oracle_.view(id);
      if (got != want) {
        fail() << "view of " << id << " before the update: " << got.size() << " targets, "
               << want.size() << " as of the last update";
      }
    };
    for (const Id id : live_) check(id);
    for (const Id id : despawned_now_) check(id);
  }

  Id id_of(EntityHandle h) {
    if (h.index >= by_slot_.size() || !by_slot_[h.index].used ||
        by_slot_[h.index].generation != h.generation) {
      fail() << "event or view names unknown handle {" << h.index << ", " << h.generation << "}";
      return Oracle::Id(-1);
    }
    return by_slot_[h.index].id;
  }

  void expect(bool ok, const char* what) {
    if (!ok) fail() << "expected: " << what;
  }

  std::ostringstream& fail() {
    if (!failed_) {
      failed_ = true;
      report_ << "MISMATCH in '" << cfg_.name << "' seed=" << seed_ << " tick=" << tick_
              << " (rerun: ZONE_AOI_DIFF_SEED=" << seed_ << ")\n";
    } else {
      report_ << "\n";
    }
    return report_;
  }

  std::string describe(const Pair& p) const {
    std::ostringstream os;
    if (p.first >= handles_.size() || p.second >= handles_.size()) {
      os << "(" << p.first << " -> " << p.second << "): unknown id";
      return os.str();
    }
    const Oracle::Entity& a = oracle_.entity(p.first);
    const Oracle::Entity& b = oracle_.entity(p.second);
    const double h = oracle_.hysteresis();
    os.precision(17);
    os << "(" << p.first << " -> " << p.second << "): a=(" << a.x << ", " << a.y
       << ") r=" << a.radius << " h=" << h << " observer=" << a.observer << " alive=" << a.alive
       << "; b=(" << b.x << ", " << b.y << ") alive=" << b.alive << "; d2=" << Oracle::dist2(a, b)
       << " r2=" << a.radius * a.radius << " outer2=" << (a.radius + h) * (a.radius + h)
       << "; cell_size=" << aoi_.config().cell_size;
    return os.str();
  }

  void diff_lists(const char* what, const std::vector<Pair>& got, const std::vector<Pair>& want) {
    if (got == want) return;
    std::vector<Pair> extra;
    std::vector<Pair> missing;
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(),
                        std::back_inserter(extra));
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                        std::back_inserter(missing));
    std::ostringstream& os = fail();
    os << what << ": AOI has " << got.size() << ", oracle " << want.size();
    std::size_t shown = 0;
    for (const Pair& p : extra) {
      if (shown++ < 8) os << "\n  unexpected " << describe(p);
    }
    for (const Pair& p : missing) {
      if (shown++ < 16) os << "\n  missing    " << describe(p);
    }
    if (extra.empty() && missing.empty()) os << " (duplicates)";
  }

  void compare(std::span<const VisibilityEvent> events, const Oracle::StepResult& expected) {
    std::vector<Pair> enters;
    std::vector<Pair> leaves;
    // Documented order (event_order.hpp): without a displacement bound every list is
    // rebuilt every tick, so the whole tick follows the rebuild order (the crowds' pairs
    // come after it, in their own order: crowd_tier_test.cpp).
    if (!std::isfinite(aoi_.config().max_step) && aoi_.config().crowd_min_in_view == 0) {
      if (const std::string broken = rebuild_order_error(events); !broken.empty()) fail() << broken;
    }
    for (const VisibilityEvent& e : events) {
      const Pair p{id_of(e.observer), id_of(e.target)};
      (e.kind == EventKind::kEnter ? enters : leaves).push_back(p);
    }
    std::sort(enters.begin(), enters.end());
    std::sort(leaves.begin(), leaves.end());
    for (const auto* list : {&enters, &leaves}) {
      const auto dup = std::adjacent_find(list->begin(), list->end());
      if (dup != list->end()) {
        fail() << "duplicate " << (list == &enters ? "enter " : "leave ") << describe(*dup);
      }
    }
    diff_lists("enter events", enters, expected.enters);
    diff_lists("leave events", leaves, expected.leaves);
    total_enters_ += enters.size();
    total_leaves_ += leaves.size();

    // Every view set, and the non-observers' (empty) ones.
    std::vector<EntityHandle> view;
    std::vector<Pair> got_view;
    std::size_t observers = 0;
    for (const Id id : live_) observers += oracle_.entity(id).observer ? 1 : 0;
    for (const Id id : live_) {
      expect(aoi_.contains(handles_[id]), "contains() of a live entity");
      view.clear();
      aoi_.view_set(handles_[id], view);
      got_view.clear();
      for (const EntityHandle t : view) got_view.emplace_back(id, id_of(t));
      std::sort(got_view.begin(), got_view.end());
      std::vector<Pair> want_view;
      for (const Id t : oracle_.view(id)) want_view.emplace_back(id, t);
      diff_lists("view set", got_view, want_view);
      if (!want_view.empty()) {
        const Pair& p = want_view[below(want_view.size())];
        if (!aoi_.sees(handles_[p.first], handles_[p.second]))
          fail() << "sees() false for " << describe(p);
      }
      if (failed_) break;
    }

    const auto stats = aoi_.stats();
    if (stats.entities != live_.size() || stats.observers != observers ||
        stats.visible_pairs != oracle_.visible().size()) {
      fail() << "stats: entities " << stats.entities << " vs " << live_.size() << ", observers "
             << stats.observers << " vs " << observers << ", visible_pairs " << stats.visible_pairs
             << " vs " << oracle_.visible().size();
    }

    // One random radius query against brute force.
    if (!live_.empty() && !failed_) {
      const Oracle::Entity& c = oracle_.entity(random_live());
      const Vec2 center = chance(0.5) ? Vec2{c.x, c.y} : random_position();
      const double radius = random_radius();
      std::vector<EntityHandle> found;
      aoi_.query_radius(center, radius, found);
      std::vector<Id> got;
      for (const EntityHandle h : found) got.push_back(id_of(h));
      std::sort(got.begin(), got.end());
      std::vector<Id> want;
      for (const Id id : live_) {
        const Oracle::Entity& e = oracle_.entity(id);
        const double dx = e.x - center.x;
        const double dy = e.y - center.y;
        if (dx * dx + dy * dy <= radius * radius) want.push_back(id);
      }
      std::sort(want.begin(), want.end());
      if (got != want) {
        fail() << "query_radius((" << center.x << ", " << center.y << "), " << radius << ") found "
               << got.size() << ", brute force " << want.size();
      }
    }

    // Coverage counters for the boundary cases.
    const double h = oracle_.hysteresis();
    for (const Pair& p : expected.enters) {
      const Oracle::Entity& a = oracle_.entity(p.first);
      if (Oracle::dist2(a, oracle_.entity(p.second)) == a.radius * a.radius) ++exact_r_enters_;
    }
    for (const auto& [a_id, b_id] : parked_) {
      if (!oracle_.alive(a_id) || !oracle_.alive(b_id) || !oracle_.sees(a_id, b_id)) continue;
      const Oracle::Entity& a = oracle_.entity(a_id);
      const double d2 = Oracle::dist2(a, oracle_.entity(b_id));
      const double outer = a.radius + h;
      if (d2 == outer * outer) ++exact_outer_keeps_;
      if (d2 > a.radius * a.radius) ++band_keeps_;
    }

    if (failed_) FAIL(report_.str());
  }

  void forget_despawned() {
    for (const Id id : despawned_now_) {
      const EntityHandle h = handles_[id];
      expect(!aoi_.contains(h), "contains() false after the despawn tick");
      by_slot_[h.index].used = false;
      if (dead_handles_.size() < 64) {
        dead_handles_.push_back(h);
      } else {
        dead_handles_[below(dead_handles_.size())] = h;
      }
    }
    despawned_now_.clear();
  }

  struct SlotRef {
    std::uint32_t generation = 0;
    Id id = 0;
    bool used = false;
  };

  const DiffConfig& cfg_;
  std::uint64_t seed_;
  std::mt19937_64 rng_;
  GridAoi aoi_;
  Oracle oracle_;
  int tick_ = 0;

  std::vector<EntityHandle> handles_;  // by oracle id
  std::vector<SlotRef> by_slot_;       // AOI slot index -> oracle id
  std::vector<Id> live_;
  std::vector<Id> despawned_now_;
  std::vector<EntityHandle> dead_handles_;
  std::vector<Pair> parked_;
  double pending_cell_size_ = 0.0;

  bool failed_ = false;
  std::ostringstream report_;
  std::uint64_t total_enters_ = 0;
  std::uint64_t total_leaves_ = 0;
  std::uint64_t spawned_ = 0;
  std::uint64_t exact_r_enters_ = 0;
  std::uint64_t exact_outer_keeps_ = 0;
  std::uint64_t band_keeps_ = 0;
};

GridConfig grid(Bounds bounds, double cell_size, double hysteresis) {
  GridConfig g;
  g.bounds = bounds;
  g.cell_size = cell_size;
  g.hysteresis = hysteresis;
  REQUIRE(GridAoi::validate(g) == GridConfigError::kNone);
  return g;
}

DiffConfig base_config(const char* name, std::uint64_t seed, GridConfig g) {
  DiffConfig c{};
  c.name = name;
  c.seed = seed;
  c.grid = g;
  c.ticks = 600;
  c.target_entities = 150;
  c.observer_fraction = 0.6;
  const double cs = g.cell_size;
  c.radii = {{0.05, 0.0, 0.0},
             {0.25, 0.0, 0.5 * cs},
             {0.35, 0.5 * cs, 1.5 * cs},
             {0.25, 1.5 * cs, 3.0 * cs},
             {0.10, 3.0 * cs, 6.0 * cs}};
  c.step = 0.25 * cs;
  c.move_fraction = 0.5;
  c.jump_fraction = 0.02;
  c.teleports_per_tick = 3;
  c.far_teleport_chance = 0.1;
  c.churn_per_tick = 3;
  c.radius_changes_per_tick = 3;
  c.toggles_per_tick = 2;
  c.parked_pairs = 6;
  return c;
}

void run(const DiffConfig& cfg) {
  Harness h(cfg);
  h.run();
}

}  // namespace

TEST_CASE("differential: default world with mixed radii and hysteresis 2") {
  DiffConfig c = base_config("default", 0x5eed0001, grid({{0, 0}, {1000, 1000}}, 32.0, 2.0));
  c.ticks = 800;
  run(c);
}

TEST_CASE("differential: cells much smaller than the radii with hysteresis 0") {
  DiffConfig c = base_config("small-cells", 0x5eed0002, grid({{0, 0}, {800, 800}}, 4.0, 0.0));
  c.radii = {{0.1, 0.0, 4.0}, {0.5, 8.0, 40.0}, {0.4, 40.0, 120.0}};
  c.step = 3.0;
  c.target_entities = 120;
  run(c);
}

TEST_CASE("differential: cells much larger than the radii in an offset world") {
  DiffConfig c =
      base_config("large-cells", 0x5eed0003, grid({{-2000, 500}, {-1000, 1500}}, 400.0, 1.5));
  c.radii = {{0.1, 0.0, 0.0}, {0.5, 0.0, 20.0}, {0.4, 20.0, 80.0}};
  c.step = 10.0;
  c.jump_fraction = 0.05;
  c.target_entities = 200;
  run(c);
}

TEST_CASE("differential: sparse world with frequent far teleports") {
  DiffConfig c = base_config("far-teleports", 0x5eed0004, grid({{0, 0}, {2000, 2000}}, 64.0, 4.0));
  c.target_entities = 100;
  c.teleports_per_tick = 8;
  c.far_teleport_chance = 0.5;
  c.jump_fraction = 0.2;
  c.radii.push_back({0.05, 1000.0, 5000.0});
  run(c);
}

TEST_CASE("differential: dense crowd in a tiny world with most entities outside it") {
  DiffConfig c = base_config("dense-tiny", 0x5eed0005, grid({{0, 0}, {64, 64}}, 8.0, 0.5));
  c.ticks = 400;
  c.target_entities = 300;
  c.radii = {{0.2, 0.0, 2.0}, {0.5, 2.0, 10.0}, {0.3, 10.0, 24.0}};
  c.step = 1.5;
  c.churn_per_tick = 6;
  run(c);
}

TEST_CASE("differential: world far from the origin (float broad phase at 1e7)") {
  DiffConfig c = base_config("far-origin", 0x5eed0006,
                             grid({{9.999e6, -1.0e7}, {1.0e7, -9.999e6}}, 16.0, 2.0));
  c.ticks = 500;
  c.far_teleport_chance = 0.05;
  run(c);
}

TEST_CASE("differential: cell size and hysteresis retuned while running") {
  DiffConfig c = base_config("retune", 0x5eed0007, grid({{-500, -500}, {500, 500}}, 25.0, 1.0));
  c.cell_size_choices = {3.0, 7.5, 25.0, 64.0, 250.0, 5000.0};
  c.hysteresis_choices = {0.0, 0.5, 1.0, 2.0, 8.0, 0.0, 0.5, 2.0, 1e6, 1e300};
  run(c);
}

// ---- With a displacement bound: candidate lists, scheduled re-tests, teleports -----------

namespace {

// Many entities walking at up to the bound, few teleports: mostly the incremental path
// (re-tests from the schedule, lists rebuilt when they expire).
DiffConfig bounded_config(const char* name, std::uint64_t seed, GridConfig g, double max_step) {
  g.max_step = max_step;
  DiffConfig c = base_config(name, seed, g);
  c.target_entities = 300;
  c.move_fraction = 0.9;
  c.jump_fraction = 0.002;
  c.teleports_per_tick = 1;
  c.far_teleport_chance = 0.1;
  c.churn_per_tick = 2;
  c.radius_changes_per_tick = 1;
  c.toggles_per_tick = 1;
  c.parked_pairs = 3;
  c.overstep_fraction = 0.002;
  return c;
}

}  // namespace

TEST_CASE("bounded: walkers at up to max_step in a crowd (scheduled re-tests)") {
  DiffConfig c =
      bounded_config("bounded-crowd", 0x5eed0101, grid({{0, 0}, {300, 300}}, 16.0, 2.0), 0.5);
  c.radii = {{0.1, 0.0, 4.0}, {0.6, 10.0, 30.0}, {0.3, 30.0, 60.0}};
  c.ticks = 700;
  run(c);
}

TEST_CASE("bounded: dense tiny world with hysteresis 0 and a bound larger than some radii") {
  DiffConfig c =
      bounded_config("bounded-dense", 0x5eed0102, grid({{0, 0}, {64, 64}}, 8.0, 0.0), 1.0);
  c.radii = {{0.2, 0.0, 2.0}, {0.5, 2.0, 10.0}, {0.3, 10.0, 24.0}};
  c.ticks = 500;
  run(c);
}

TEST_CASE("bounded: bound violations - teleports - far jumps") {
  DiffConfig c =
      bounded_config("bounded-violations", 0x5eed0103, grid({{0, 0}, {500, 500}}, 32.0, 2.0), 0.75);
  c.overstep_fraction = 0.02;
  c.teleports_per_tick = 3;
  c.far_teleport_chance = 0.3;
  c.jump_fraction = 0.01;
  c.parked_pairs = 6;
  run(c);
}

TEST_CASE("bounded: radius changes and observer toggles while pairs are asleep") {
  DiffConfig c = bounded_config("bounded-radius", 0x5eed0104,
                                grid({{-400, -400}, {400, 400}}, 24.0, 3.0), 0.4);
  c.radius_changes_per_tick = 12;
  c.toggles_per_tick = 6;
  c.radii = {{0.3, 0.0, 10.0}, {0.4, 10.0, 60.0}, {0.3, 60.0, 150.0}};
  run(c);
}

TEST_CASE("bounded: cell size - hysteresis - max_step retuned while pairs are asleep") {
  DiffConfig c =
      bounded_config("bounded-retune", 0x5eed0105, grid({{0, 0}, {600, 600}}, 25.0, 1.0), 0.5);
  c.cell_size_choices = {2.0, 7.5, 25.0, 64.0, 250.0, 5000.0};
  c.hysteresis_choices = {0.0, 0.5, 1.0, 2.0, 8.0, 1e6};
  c.max_step_choices = {0.0, 0.05, 0.5, 2.0, 40.0, std::numeric_limits<double>::infinity()};
  c.ticks = 900;
  run(c);
}

TEST_CASE("bounded: observers of two shared radii (mutual pairs) with every kind of change") {
  // Most observers share one of two radii, so most pairs are decided once for both
  // directions by the lower slot's list; radius changes (often to the same value) and
  // observer toggles split pairs while they are asleep, teleports and churn move owners.
  DiffConfig c =
      bounded_config("bounded-mutual", 0x5eed0108, grid({{0, 0}, {300, 300}}, 16.0, 2.0), 0.5);
  c.radii = {{0.6, 30.0, 30.0}, {0.35, 12.0, 12.0}, {0.05, 0.0, 40.0}};
  c.observer_fraction = 0.9;
  c.radius_changes_per_tick = 4;
  c.toggles_per_tick = 3;
  c.teleports_per_tick = 3;
  c.churn_per_tick = 4;
  c.ticks = 700;
  run(c);
}

TEST_CASE("unbounded: observers of one shared radius (mutual pairs, rebuilt every tick)") {
  DiffConfig c = base_config("unbounded-mutual", 0x5eed0009, grid({{0, 0}, {400, 400}}, 32.0, 2.0));
  c.radii = {{0.9, 25.0, 25.0}, {0.1, 0.0, 60.0}};
  c.observer_fraction = 0.9;
  c.target_entities = 250;
  c.ticks = 300;
  run(c);
}

TEST_CASE("bounded: walkers in large cells (the cell order rewritten only every few ticks)") {
  // Cells of 64 m and a bound of 0.25 m: while no entity arrives, goes or jumps into a
  // cell other than its listed one, those that walk into another cell stay listed under
  // their old one for up to 7 ticks (the order is rewritten on the 8th), and every query
  // (rebuilds, notifications, joins) must still find them. No churn, teleports or parked
  // pairs (parking moves a target tens of metres), which would force rewrites.
  DiffConfig c =
      bounded_config("bounded-deferred", 0x5eed0109, grid({{0, 0}, {400, 400}}, 64.0, 2.0), 0.25);
  c.radii = {{0.6, 20.0, 20.0}, {0.4, 0.0, 70.0}};
  c.target_entities = 400;
  c.jump_fraction = 0.0;
  c.overstep_fraction = 0.0;
  c.teleports_per_tick = 0;
  c.churn_per_tick = 0;
  c.parked_pairs = 0;
  c.ticks = 600;
  run(c);
}

TEST_CASE("bounded: max_step 0 (every move is a teleport)") {
  DiffConfig c =
      bounded_config("bounded-zero", 0x5eed0106, grid({{0, 0}, {400, 400}}, 20.0, 2.0), 0.0);
  c.move_fraction = 0.05;
  run(c);
}

TEST_CASE("bounded: world far from the origin") {
  DiffConfig c = bounded_config("bounded-far-origin", 0x5eed0107,
                                grid({{9.999e6, -1.0e7}, {1.0e7, -9.999e6}}, 16.0, 2.0), 0.3);
  c.far_teleport_chance = 0.02;
  run(c);
}

// ---- Crowds: classmates in crowded cells handed to a crowd tier and back ----------------

namespace {

// Most observers share one of a few radii and crowds form at a low density (in_view: the
// entities expected within r, GridConfig::crowd_min_in_view), so that observers join and
// leave them all the time (every join and leave hands pairs over), besides every other kind
// of change the configuration makes.
DiffConfig with_crowds(DiffConfig c, std::uint32_t in_view) {
  c.grid.crowd_min_in_view = in_view;
  const double cs = c.grid.cell_size;
  c.radii = {{0.45, 1.5 * cs, 1.5 * cs},
             {0.35, 0.6 * cs, 0.6 * cs},
             {0.1, 0.0, 0.0},
             {0.1, 0.0, 3.0 * cs}};
  c.observer_fraction = 0.85;
  return c;
}

}  // namespace

TEST_CASE("crowds: bounded walkers of shared radii joining and leaving crowds") {
  DiffConfig c = with_crowds(
      bounded_config("crowds-bounded", 0x5eed0201, grid({{0, 0}, {300, 300}}, 16.0, 2.0), 0.5), 15);
  c.ticks = 700;
  run(c);
}

TEST_CASE("crowds: observers join with one other in their cell (in view 1)") {
  DiffConfig c = with_crowds(
      bounded_config("crowds-all", 0x5eed0202, grid({{0, 0}, {200, 200}}, 16.0, 2.0), 0.5), 1);
  c.ticks = 400;
  run(c);
}

TEST_CASE("crowds: dense tiny world, radius changes, toggles, teleports and churn") {
  DiffConfig c = with_crowds(
      bounded_config("crowds-dense", 0x5eed0203, grid({{0, 0}, {64, 64}}, 8.0, 0.5), 1.0), 40);
  c.radius_changes_per_tick = 6;
  c.toggles_per_tick = 4;
  c.teleports_per_tick = 4;
  c.churn_per_tick = 6;
  c.ticks = 500;
  run(c);
}

TEST_CASE("crowds: without a bound (every list rebuilt every tick)") {
  DiffConfig c = with_crowds(
      base_config("crowds-unbounded", 0x5eed0204, grid({{0, 0}, {400, 400}}, 32.0, 2.0)), 15);
  c.target_entities = 250;
  c.ticks = 300;
  run(c);
}

TEST_CASE("crowds: cell size, hysteresis and max_step retuned (crowds dissolved and formed)") {
  DiffConfig c = with_crowds(
      bounded_config("crowds-retune", 0x5eed0205, grid({{0, 0}, {600, 600}}, 25.0, 1.0), 0.5), 15);
  c.cell_size_choices = {2.0, 7.5, 25.0, 64.0, 250.0};
  c.hysteresis_choices = {0.0, 0.5, 1.0, 2.0, 8.0, 1e6};
  c.max_step_choices = {0.0, 0.05, 0.5, 2.0, 40.0, std::numeric_limits<double>::infinity()};
  c.ticks = 900;
  run(c);
}

TEST_CASE("crowds: max_step 0 and a world far from the origin") {
  DiffConfig c =
      with_crowds(bounded_config("crowds-far", 0x5eed0206,
                                 grid({{9.999e6, -1.0e7}, {1.0e7, -9.999e6}}, 16.0, 2.0), 0.0),
                  10);
  c.move_fraction = 0.3;
  c.far_teleport_chance = 0.02;
  run(c);
}
