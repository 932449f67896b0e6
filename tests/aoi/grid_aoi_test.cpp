// Focused unit tests for the grid AOI core (server/aoi/grid_aoi.hpp).
//
// Every distance used below is exactly representable, and so are its square, so "exactly
// on r" and "exactly on r + h" really are on the boundary in double arithmetic.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "aoi/grid_aoi.hpp"
#include "event_order.hpp"

using namespace zone::aoi;
using zone::aoi::test::rebuild_order_error;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMax = GridAoi::kMaxCoordinate;

double above(double v) {
  return std::nextafter(v, kInf);
}
double below(double v) {
  return std::nextafter(v, -kInf);
}

GridConfig make_config(double cell_size = 32.0, double hysteresis = 2.0,
                       Bounds bounds = {{0.0, 0.0}, {1000.0, 1000.0}}) {
  GridConfig c;
  c.bounds = bounds;
  c.cell_size = cell_size;
  c.hysteresis = hysteresis;
  return c;
}

// A copy of one tick's events (the span returned by update() dies at the next update).
struct Event {
  EntityHandle observer;
  EntityHandle target;
  EventKind kind;
  friend bool operator==(const Event&, const Event&) = default;
};

std::vector<Event> tick(GridAoi& aoi) {
  std::vector<Event> out;
  for (const VisibilityEvent& e : aoi.update()) out.push_back({e.observer, e.target, e.kind});
  return out;
}

std::size_t count(const std::vector<Event>& events, EntityHandle observer, EntityHandle target,
                  EventKind kind) {
  return static_cast<std::size_t>(
      std::count(events.begin(), events.end(), Event{observer, target, kind}));
}
bool entered(const std::vector<Event>& ev, EntityHandle a, EntityHandle b) {
  return count(ev, a, b, EventKind::kEnter) == 1;
}
bool left(const std::vector<Event>& ev, EntityHandle a, EntityHandle b) {
  return count(ev, a, b, EventKind::kLeave) == 1;
}

using Key = std::tuple<std::uint32_t, std::uint32_t>;  // (slot index, generation)
Key key(EntityHandle h) {
  return {h.index, h.generation};
}

}  // namespace

// Readable failure output for sets of handles: {index:generation, ...}.
template <>
struct doctest::StringMaker<std::set<Key>> {
  static doctest::String convert(const std::set<Key>& keys) {
    std::string out = "{";
    for (const auto& [index, generation] : keys) {
      if (out.size() > 1) out += ", ";
      out += std::to_string(index) + ":" + std::to_string(generation);
    }
    out += "}";
    return out.c_str();
  }
};

namespace {

std::set<Key> view_of(const GridAoi& aoi, EntityHandle observer) {
  std::vector<EntityHandle> v;
  aoi.view_set(observer, v);
  std::set<Key> out;
  for (const EntityHandle h : v) out.insert(key(h));
  REQUIRE(out.size() == v.size());  // no duplicates in a view
  return out;
}

std::set<Key> query(const GridAoi& aoi, Vec2 c, double r) {
  std::vector<EntityHandle> v;
  aoi.query_radius(c, r, v);
  std::set<Key> out;
  for (const EntityHandle h : v) out.insert(key(h));
  REQUIRE(out.size() == v.size());
  return out;
}

double dist2(Vec2 a, Vec2 b) {
  const double dx = b.x - a.x;
  const double dy = b.y - a.y;
  return dx * dx + dy * dy;
}

}  // namespace

// ---- basic visibility ----------------------------------------------------------------------

TEST_CASE("spawn: two observers in range enter each other's view in both directions") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({100, 100}, 30, true);
  const auto b = aoi.add({120, 100}, 30, true);
  REQUIRE(a.valid());
  REQUIRE(b.valid());
  CHECK_FALSE(aoi.sees(a, b));  // nothing happens before update()
  const auto ev = tick(aoi);
  CHECK(ev.size() == 2);
  CHECK(entered(ev, a, b));
  CHECK(entered(ev, b, a));
  CHECK(aoi.sees(a, b));
  CHECK(aoi.sees(b, a));
  CHECK(view_of(aoi, a) == std::set<Key>{key(b)});
  // Nothing changed: no events on the next ticks.
  CHECK(tick(aoi).empty());
  CHECK(tick(aoi).empty());
}

TEST_CASE("spawn: only the observer whose radius reaches sees the other") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({100, 100}, 50, true);
  const auto b = aoi.add({140, 100}, 10, true);
  const auto ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(entered(ev, a, b));
  CHECK(aoi.sees(a, b));
  CHECK_FALSE(aoi.sees(b, a));
}

TEST_CASE("an entity never observes itself whatever its radius") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({500, 500}, 1000, true);
  const auto z = aoi.add({10, 10}, 0, true);  // radius 0: its own position is at distance 0
  CHECK(tick(aoi).size() == 1);               // a sees z; z sees nothing
  CHECK_FALSE(aoi.sees(a, a));
  CHECK_FALSE(aoi.sees(z, z));
  CHECK(view_of(aoi, a) == std::set<Key>{key(z)});
  CHECK(view_of(aoi, z).empty());
  CHECK(aoi.stats().visible_pairs == 1);
}

TEST_CASE("a lone observer sees nothing and produces no events") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({500, 500}, 1000, true);
  CHECK(tick(aoi).empty());
  CHECK(view_of(aoi, a).empty());
}

TEST_CASE("a non-observer has no view but is seen by observers") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({100, 100}, 30, true);
  const auto n = aoi.add({110, 100}, 500, false);  // a large radius does not make it see
  const auto ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(entered(ev, a, n));
  CHECK(aoi.sees(a, n));
  CHECK_FALSE(aoi.sees(n, a));
  CHECK(view_of(aoi, n).empty());
  CHECK(aoi.is_observer(a));
  CHECK_FALSE(aoi.is_observer(n));
  const auto s = aoi.stats();
  CHECK(s.entities == 2);
  CHECK(s.observers == 1);
  CHECK(s.visible_pairs == 1);
}

TEST_CASE("two non-observers never produce events") {
  GridAoi aoi(make_config());
  aoi.add({100, 100}, 30, false);
  aoi.add({100, 100}, 30, false);
  CHECK(tick(aoi).empty());
  CHECK(aoi.stats().visible_pairs == 0);
}

// ---- the exact rule: enter at <= r, leave at > r + h ----------------------------------------

TEST_CASE("hysteresis: enter at exactly r - stay up to exactly r + h - leave just beyond") {
  GridAoi aoi(make_config(32.0, 2.0));
  const auto a = aoi.add({500, 500}, 10, true);
  const auto b = aoi.add({511, 500}, 0, false);  // between r and r + h, never in view

  CHECK(tick(aoi).empty());  // 11 > r: does not enter although within r + h
  REQUIRE(aoi.move(b, {512, 500}));
  CHECK(tick(aoi).empty());  // exactly r + h: still not entering
  REQUIRE(aoi.move(b, {above(510.0), 500}));
  CHECK(tick(aoi).empty());  // just beyond r
  CHECK_FALSE(aoi.sees(a, b));

  REQUIRE(aoi.move(b, {510, 500}));  // exactly r
  auto ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(entered(ev, a, b));

  REQUIRE(aoi.move(b, {511, 500}));  // parked between r and r + h: stays
  CHECK(tick(aoi).empty());
  CHECK(tick(aoi).empty());
  CHECK(aoi.sees(a, b));

  REQUIRE(aoi.move(b, {512, 500}));  // exactly r + h: stays
  CHECK(tick(aoi).empty());
  CHECK(aoi.sees(a, b));

  REQUIRE(aoi.move(b, {above(512.0), 500}));  // just beyond r + h: leaves
  ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(left(ev, a, b));
  CHECK_FALSE(aoi.sees(a, b));

  REQUIRE(aoi.move(b, {511, 500}));  // back in the band: no re-enter
  CHECK(tick(aoi).empty());
  CHECK_FALSE(aoi.sees(a, b));

  REQUIRE(aoi.move(b, {500, below(510.0)}));  // just inside r, on the other axis
  ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(entered(ev, a, b));
}

TEST_CASE("hysteresis on a diagonal: 3-4-5 distances are exact") {
  GridAoi aoi(make_config(32.0, 5.0));
  const auto a = aoi.add({300, 300}, 15, true);
  const auto b = aoi.add({300 - 9, 300 + 12}, 0, false);   // distance exactly 15 = r
  const auto c = aoi.add({300 + 12, 300 - 16}, 0, false);  // distance 20 = r + h, not in view
  auto ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(entered(ev, a, b));
  CHECK_FALSE(aoi.sees(a, c));

  REQUIRE(aoi.move(b, {300 - 12, 300 + 16}));  // exactly r + h: stays
  CHECK(tick(aoi).empty());
  CHECK(aoi.sees(a, b));
  REQUIRE(aoi.move(b, {300 - 12, above(316.0)}));  // beyond r + h: leaves
  ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(left(ev, a, b));
}

TEST_CASE("hysteresis 0: leaves as soon as the distance exceeds r") {
  GridAoi aoi(make_config(32.0, 0.0));
  const auto a = aoi.add({200, 200}, 8, true);
  const auto b = aoi.add({208, 200}, 8, true);
  auto ev = tick(aoi);
  CHECK(ev.size() == 2);
  CHECK(entered(ev, a, b));
  CHECK(entered(ev, b, a));
  REQUIRE(aoi.move(b, {above(208.0), 200}));
  ev = tick(aoi);
  CHECK(ev.size() == 2);
  CHECK(left(ev, a, b));
  CHECK(left(ev, b, a));
}

TEST_CASE("radius 0 sees exactly the entities at its own position") {
  GridAoi aoi(make_config(32.0, 0.0));
  const auto a = aoi.add({64, 64}, 0, true);
  const auto same = aoi.add({64, 64}, 0, false);
  const auto near = aoi.add({64, above(64.0)}, 0, false);
  const auto ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(entered(ev, a, same));
  CHECK_FALSE(aoi.sees(a, near));
}

// ---- despawn -------------------------------------------------------------------------------

TEST_CASE("despawn: leaves in both directions - stale handle - slot reused with a new generation") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({100, 100}, 30, true);
  const auto b = aoi.add({110, 100}, 30, true);
  const auto n = aoi.add({90, 100}, 30, false);
  CHECK(tick(aoi).size() == 4);  // a<->b, a->n, b->n

  REQUIRE(aoi.remove(b));
  CHECK_FALSE(aoi.contains(b));      // gone for the caller right away
  CHECK_FALSE(aoi.remove(b));        // a second remove is refused
  CHECK_FALSE(aoi.move(b, {0, 0}));  // so is everything else
  CHECK_FALSE(aoi.set_view_radius(b, 5));
  CHECK_FALSE(aoi.set_observer(b, false));
  CHECK(aoi.sees(a, b));  // views are those of the last update

  // A spawn in the same tick does not reuse the slot: the old handle is still in use.
  const auto c = aoi.add({300, 300}, 1, true);
  CHECK(c.index != b.index);

  auto ev = tick(aoi);
  CHECK(ev.size() == 3);
  CHECK(left(ev, a, b));
  CHECK(left(ev, b, a));
  CHECK(left(ev, b, n));
  CHECK_FALSE(aoi.sees(a, b));
  CHECK(view_of(aoi, a) == std::set<Key>{key(n)});
  CHECK_FALSE(aoi.contains(b));
  CHECK_FALSE(aoi.move(b, {100, 100}));
  CHECK_FALSE(aoi.remove(b));
  CHECK(view_of(aoi, b).empty());

  // The freed slot is reused with a new generation; the old handle stays stale.
  const auto d = aoi.add({105, 100}, 30, true);
  CHECK(d.index == b.index);
  CHECK(d.generation != b.generation);
  CHECK_FALSE(d == b);
  CHECK(aoi.contains(d));
  CHECK_FALSE(aoi.contains(b));
  CHECK_FALSE(aoi.move(b, {0, 0}));
  ev = tick(aoi);
  CHECK(ev.size() == 3);
  CHECK(entered(ev, a, d));
  CHECK(entered(ev, d, a));
  CHECK(entered(ev, d, n));
  CHECK_FALSE(aoi.sees(a, b));  // the stale handle does not alias the new entity
  CHECK(aoi.sees(a, d));
  CHECK(aoi.stats().entities == 4);
}

TEST_CASE("despawn of a non-observer seen by many observers") {
  GridAoi aoi(make_config());
  std::vector<EntityHandle> observers;
  for (int i = 0; i < 10; ++i) observers.push_back(aoi.add({100.0 + i, 200}, 50, true));
  const auto n = aoi.add({105, 210}, 0, false);
  tick(aoi);
  REQUIRE(aoi.remove(n));
  const auto ev = tick(aoi);
  CHECK(ev.size() == observers.size());
  for (const auto o : observers) CHECK(left(ev, o, n));
}

TEST_CASE("despawn of an entity with no pairs produces no events") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({100, 100}, 10, true);
  const auto far = aoi.add({900, 900}, 10, true);
  tick(aoi);
  REQUIRE(aoi.remove(far));
  CHECK(tick(aoi).empty());
  CHECK(aoi.contains(a));
}

TEST_CASE("despawn of both entities of a pair in the same tick") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({100, 100}, 10, true);
  const auto b = aoi.add({101, 100}, 10, true);
  tick(aoi);
  REQUIRE(aoi.remove(a));
  REQUIRE(aoi.remove(b));
  const auto ev = tick(aoi);
  CHECK(ev.size() == 2);
  CHECK(left(ev, a, b));
  CHECK(left(ev, b, a));
  CHECK(aoi.stats().entities == 0);
  CHECK(aoi.stats().visible_pairs == 0);
}

TEST_CASE("an entity added and removed in the same tick never appears") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({100, 100}, 10, true);
  tick(aoi);
  const auto ghost = aoi.add({101, 100}, 10, true);
  REQUIRE(aoi.remove(ghost));
  CHECK(tick(aoi).empty());
  CHECK_FALSE(aoi.contains(ghost));
  CHECK(view_of(aoi, a).empty());
}

TEST_CASE("a moved-then-removed entity leaves with its old handle in the events") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({100, 100}, 10, true);
  const auto b = aoi.add({105, 100}, 0, false);
  tick(aoi);
  REQUIRE(aoi.move(b, {106, 100}));
  REQUIRE(aoi.remove(b));
  const auto ev = tick(aoi);
  REQUIRE(ev.size() == 1);
  CHECK(ev[0].observer == a);
  CHECK(ev[0].target == b);  // same index and generation as issued
  CHECK(ev[0].kind == EventKind::kLeave);
}

// ---- moves ---------------------------------------------------------------------------------

TEST_CASE("moves jumping many cells and across the world in one tick") {
  GridAoi aoi(make_config(16.0, 1.0));
  const auto a = aoi.add({10, 10}, 20, true);
  const auto b = aoi.add({990, 990}, 20, true);
  CHECK(tick(aoi).empty());

  REQUIRE(aoi.move(b, {15, 10}));  // ~60 cells in one move
  auto ev = tick(aoi);
  CHECK(ev.size() == 2);
  CHECK(entered(ev, a, b));
  CHECK(entered(ev, b, a));

  REQUIRE(aoi.move(b, {985, 10}));  // across the world again
  ev = tick(aoi);
  CHECK(ev.size() == 2);
  CHECK(left(ev, a, b));
  CHECK(left(ev, b, a));

  REQUIRE(aoi.move(a, {990, 20}));  // now a crosses and lands next to b
  ev = tick(aoi);
  CHECK(ev.size() == 2);
  CHECK(entered(ev, a, b));
  CHECK(entered(ev, b, a));

  // Both swap ends of the world in the same tick and stay together.
  REQUIRE(aoi.move(a, {-3000, 2500}));
  REQUIRE(aoi.move(b, {-3000, 2510}));
  CHECK(tick(aoi).empty());
  CHECK(aoi.sees(a, b));
  CHECK(aoi.sees(b, a));
  CHECK(aoi.position(a).x == -3000);
}

TEST_CASE("move_batch applies every valid move and counts the refused ones") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({100, 100}, 10, true);
  const auto b = aoi.add({500, 500}, 10, true);
  const auto dead = aoi.add({0, 0}, 10, true);
  REQUIRE(aoi.remove(dead));
  tick(aoi);
  const std::vector<GridAoi::Move> moves = {
      {a, {700, 700}}, {b, {705, 700}}, {dead, {0, 0}}, {a, {kNaN, 0}}, {b, {0, above(kMax)}}};
  CHECK(aoi.move_batch(moves) == 3);
  CHECK(aoi.position(a).x == 700);  // the refused move of a did not clobber the earlier one
  CHECK(aoi.position(b).x == 705);
  const auto ev = tick(aoi);
  CHECK(ev.size() == 2);
  CHECK(entered(ev, a, b));
  CHECK(entered(ev, b, a));
}

// ---- positions outside the world, cell and world edges -------------------------------------

TEST_CASE("entities outside the world bounds see each other exactly") {
  GridAoi aoi(make_config(32.0, 2.0));
  // Far beyond min (negative), far beyond max, and at the coordinate limit.
  const auto n1 = aoi.add({-1e6, -1e6}, 5, true);
  const auto n2 = aoi.add({-1e6 + 3, -1e6 + 4}, 5, true);  // distance exactly 5
  const auto n3 = aoi.add({-1e6 - 6, -1e6}, 5, true);      // 6: out of range of n1
  const auto f1 = aoi.add({kMax, kMax}, 5, true);
  const auto f2 = aoi.add({kMax - 3, kMax - 4}, 5, true);  // distance exactly 5
  const auto f3 = aoi.add({kMax, -kMax}, 5, true);
  const auto f4 = aoi.add({-kMax, kMax}, 5, true);
  // Clamped into the same border cell as n1 but far from it.
  const auto clamped = aoi.add({-10, -10}, 5, true);
  // Outside on one axis only, next to an entity inside the world across the border.
  const auto out_x = aoi.add({-3, 500}, 5, true);
  const auto in_x = aoi.add({2, 500}, 5, true);  // exactly 5 across the world edge
  const auto out_y = aoi.add({500, 1004}, 4, true);
  const auto in_y = aoi.add({500, 1000}, 4, true);  // on the world edge, 4 apart

  const auto ev = tick(aoi);
  CHECK(ev.size() == 8);
  CHECK(entered(ev, n1, n2));
  CHECK(entered(ev, n2, n1));
  CHECK(entered(ev, f1, f2));
  CHECK(entered(ev, f2, f1));
  CHECK(entered(ev, out_x, in_x));
  CHECK(entered(ev, in_x, out_x));
  CHECK(entered(ev, out_y, in_y));
  CHECK(entered(ev, in_y, out_y));
  CHECK_FALSE(aoi.sees(n1, n3));
  CHECK_FALSE(aoi.sees(n1, clamped));
  CHECK(view_of(aoi, f3).empty());
  CHECK(view_of(aoi, f4).empty());

  // Hysteresis applies out there too: parked at exactly r + h, then beyond.
  REQUIRE(aoi.move(n2, {-1e6 + 7, -1e6}));
  CHECK(tick(aoi).empty());
  REQUIRE(aoi.move(n2, {above(-1e6 + 7), -1e6}));
  const auto ev2 = tick(aoi);
  CHECK(ev2.size() == 2);
  CHECK(left(ev2, n1, n2));
  CHECK(left(ev2, n2, n1));
}

TEST_CASE("entities exactly on cell corners and world edges") {
  // Observers on cell corners with radii that are whole multiples of the cell size reach
  // exactly to other cell corners; every lattice point is checked against brute force.
  const double cs = 25.0;
  GridAoi aoi(make_config(cs, 0.0, {{0, 0}, {200, 200}}));
  std::vector<EntityHandle> handles;
  std::vector<Vec2> pos;
  std::vector<double> radius;
  for (int i = -2; i <= 10; ++i) {
    for (int j = -2; j <= 10; ++j) {
      const Vec2 p{i * cs, j * cs};  // includes 0 and 200: the world edges
      const double r = ((i + j) % 3 == 0) ? 2 * cs : ((i + j) % 3 == 1 ? cs : 0.5 * cs);
      handles.push_back(aoi.add(p, r, (i * 7 + j) % 2 == 0));
      pos.push_back(p);
      radius.push_back(r);
    }
  }
  tick(aoi);
  std::size_t pairs = 0;
  for (std::size_t a = 0; a < handles.size(); ++a) {
    std::set<Key> expected;
    if (aoi.is_observer(handles[a])) {
      for (std::size_t b = 0; b < handles.size(); ++b) {
        if (a != b && dist2(pos[a], pos[b]) <= radius[a] * radius[a]) {
          expected.insert(key(handles[b]));
        }
      }
    }
    CHECK(view_of(aoi, handles[a]) == expected);
    pairs += expected.size();
  }
  CHECK(aoi.stats().visible_pairs == pairs);
  CHECK(pairs > 0);
}

TEST_CASE("a pair straddling a cell edge by a tiny margin") {
  GridAoi aoi(make_config(32.0, 0.0));
  const auto a = aoi.add({below(64.0), below(64.0)}, 1, true);
  const auto b = aoi.add({64, 64}, 1, true);
  const auto c = aoi.add({above(64.0), 65}, 1, true);
  tick(aoi);
  CHECK(aoi.sees(a, b));
  CHECK(aoi.sees(b, a));
  CHECK(aoi.sees(b, c));
  CHECK(aoi.sees(c, b));
  CHECK_FALSE(aoi.sees(a, c));  // just over 1 apart: beyond r = 1
}

// ---- radius vs cell size -------------------------------------------------------------------

TEST_CASE("radius much larger than the cell size") {
  GridAoi aoi(make_config(4.0, 0.0));
  const auto a = aoi.add({500, 500}, 95, true);  // ~24 cells
  const std::vector<Vec2> on = {{595, 500},           {405, 500},          {500, 595}, {500, 405},
                                {500 + 57, 500 + 76}, {500 - 76, 500 - 57}};  // 19 * (3, 4, 5)
  const std::vector<Vec2> off = {{above(595.0), 500}, {500, below(405.0)}, {568, 568}};
  std::set<Key> expected;
  for (const Vec2 p : on) expected.insert(key(aoi.add(p, 0, false)));
  for (const Vec2 p : off) aoi.add(p, 0, false);
  const auto ev = tick(aoi);
  CHECK(ev.size() == on.size());
  CHECK(view_of(aoi, a) == expected);
}

TEST_CASE("radius much smaller than the cell size") {
  GridAoi aoi(make_config(250.0, 0.0));
  const auto a = aoi.add({250, 250}, 0.5, true);  // on a cell corner
  const std::vector<Vec2> on = {
      {250.5, 250}, {249.5, 250}, {250, 250.5}, {250, 249.5}, {250.3, 250.4}};
  const std::vector<Vec2> off = {{above(250.5), 250}, {250.375, 250.375}, {260, 250}};
  std::set<Key> expected;
  for (const Vec2 p : on) expected.insert(key(aoi.add(p, 0, false)));
  for (const Vec2 p : off) aoi.add(p, 0, false);
  tick(aoi);
  // 250.3 and 250.4 are not exact in binary: decide that one with the rule itself.
  std::set<Key> rule;
  std::vector<EntityHandle> all;
  aoi.query_radius({250, 250}, 100, all);
  for (const EntityHandle h : all) {
    if (h != a && dist2(aoi.position(a), aoi.position(h)) <= 0.25) rule.insert(key(h));
  }
  CHECK(view_of(aoi, a) == rule);
  CHECK(rule.size() >= 4);
  for (const Key& k : rule) CHECK(expected.count(k) == 1);
}

// ---- runtime changes -----------------------------------------------------------------------

TEST_CASE("set_view_radius applies at the next update with hysteresis") {
  GridAoi aoi(make_config(32.0, 2.0));
  const auto a = aoi.add({100, 100}, 10, true);
  const auto b = aoi.add({120, 100}, 0, false);
  CHECK(tick(aoi).empty());

  REQUIRE(aoi.set_view_radius(a, 20));
  CHECK(aoi.view_radius(a) == 20);
  CHECK_FALSE(aoi.sees(a, b));  // not before the update
  auto ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(entered(ev, a, b));

  REQUIRE(aoi.set_view_radius(a, 18));  // 20 <= 18 + 2: stays
  CHECK(tick(aoi).empty());
  CHECK(aoi.sees(a, b));

  REQUIRE(aoi.set_view_radius(a, below(18.0)));  // 20 > r + 2: leaves
  ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(left(ev, a, b));

  REQUIRE(aoi.set_view_radius(a, 19));  // within r + h but not r: no enter
  CHECK(tick(aoi).empty());

  // Refused radii change nothing.
  CHECK_FALSE(aoi.set_view_radius(a, -1));
  CHECK_FALSE(aoi.set_view_radius(a, kNaN));
  CHECK_FALSE(aoi.set_view_radius(a, kInf));
  CHECK_FALSE(aoi.set_view_radius(a, above(kMax)));
  CHECK(aoi.view_radius(a) == 19);
  CHECK(tick(aoi).empty());
  CHECK(aoi.set_view_radius(a, kMax));  // the limit itself is accepted
  CHECK(tick(aoi).size() == 1);
}

TEST_CASE("set_observer toggling") {
  GridAoi aoi(make_config());
  const auto a = aoi.add({100, 100}, 20, true);
  const auto b = aoi.add({110, 100}, 20, true);
  CHECK(tick(aoi).size() == 2);

  REQUIRE(aoi.set_observer(a, false));
  CHECK_FALSE(aoi.is_observer(a));
  CHECK(aoi.sees(a, b));  // the view is that of the last update
  auto ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(left(ev, a, b));  // a's view empties...
  CHECK(aoi.sees(b, a));  // ...but a is still seen
  CHECK(view_of(aoi, a).empty());
  CHECK(aoi.stats().observers == 1);
  CHECK(tick(aoi).empty());

  REQUIRE(aoi.set_observer(a, true));
  ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(entered(ev, a, b));

  // Off and on again before the update: nothing happened.
  REQUIRE(aoi.set_observer(a, false));
  REQUIRE(aoi.set_observer(a, true));
  CHECK(tick(aoi).empty());
  CHECK(aoi.sees(a, b));

  // Switching an observer off and removing it in the same tick: one leave per pair.
  REQUIRE(aoi.set_observer(a, false));
  REQUIRE(aoi.remove(a));
  ev = tick(aoi);
  CHECK(ev.size() == 2);
  CHECK(left(ev, a, b));
  CHECK(left(ev, b, a));
}

TEST_CASE("set_observer(false) on a parked pair in the hysteresis band does not re-enter it") {
  GridAoi aoi(make_config(32.0, 4.0));
  const auto a = aoi.add({100, 100}, 10, true);
  const auto b = aoi.add({110, 100}, 0, false);
  tick(aoi);
  REQUIRE(aoi.move(b, {113, 100}));  // in the band: stays
  CHECK(tick(aoi).empty());
  REQUIRE(aoi.set_observer(a, false));
  CHECK(tick(aoi).size() == 1);
  REQUIRE(aoi.set_observer(a, true));
  CHECK(tick(aoi).empty());  // 13 > r: the pair is new now, and must reach r to enter
  CHECK_FALSE(aoi.sees(a, b));
}

TEST_CASE("set_hysteresis applies at the next update") {
  GridAoi aoi(make_config(32.0, 0.0));
  const auto a = aoi.add({100, 100}, 10, true);
  const auto b = aoi.add({110, 100}, 0, false);
  tick(aoi);
  REQUIRE(aoi.set_hysteresis(5) == GridConfigError::kNone);
  CHECK(aoi.config().hysteresis == 5);
  REQUIRE(aoi.move(b, {115, 100}));
  CHECK(tick(aoi).empty());
  CHECK(aoi.sees(a, b));
  CHECK(aoi.set_hysteresis(-1) == GridConfigError::kBadHysteresis);
  CHECK(aoi.set_hysteresis(kNaN) == GridConfigError::kBadHysteresis);
  CHECK(aoi.set_hysteresis(kInf) == GridConfigError::kBadHysteresis);
  CHECK(aoi.config().hysteresis == 5);
  REQUIRE(aoi.set_hysteresis(0) == GridConfigError::kNone);
  const auto ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(left(ev, a, b));
}

TEST_CASE("set_cell_size: no events by itself - visibility unchanged - later ticks still exact") {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> coord(-100.0, 1100.0);
  std::uniform_real_distribution<double> rad(0.0, 120.0);
  const GridConfig config = make_config(32.0, 3.0);
  GridAoi aoi(config);
  GridAoi twin(config);  // same operations, cell size never changed
  std::vector<EntityHandle> hs;
  std::vector<EntityHandle> ts;
  for (int i = 0; i < 200; ++i) {
    const Vec2 p{coord(rng), coord(rng)};
    const double r = rad(rng);
    hs.push_back(aoi.add(p, r, i % 3 != 0));
    ts.push_back(twin.add(p, r, i % 3 != 0));
  }
  tick(aoi);
  tick(twin);
  // Nudge some entities into the hysteresis band so the kept view sets matter.
  for (int i = 0; i < 200; i += 7) {
    const Vec2 p{aoi.position(hs[i]).x + 2.0, aoi.position(hs[i]).y};
    aoi.move(hs[i], p);
    twin.move(ts[i], p);
  }
  tick(aoi);
  tick(twin);

  auto views = [&](const GridAoi& g) {
    std::vector<std::set<Key>> out;
    for (const auto h : hs) out.push_back(view_of(g, h));
    return out;
  };
  const auto before = views(aoi);
  const std::uint64_t pairs = aoi.stats().visible_pairs;
  for (const double cs : {1.0, 7.0, 32.0, 150.0, 5000.0, 13.0}) {
    INFO("cell size " << cs);
    const std::vector<std::pair<Vec2, double>> probes = {
        {{500, 500}, 100}, {{-100, 40}, 75}, {{1000, 1000}, 10}, {{250, 750}, 400}};
    std::vector<std::set<Key>> answers;
    for (const auto& [c, r] : probes) answers.push_back(query(aoi, c, r));
    const double old_cs = aoi.config().cell_size;
    REQUIRE(aoi.set_cell_size(cs) == GridConfigError::kNone);
    // The new size applies at the next update; until then the grid and every query
    // answer exactly as before.
    CHECK(aoi.config().cell_size == old_cs);
    for (std::size_t i = 0; i < probes.size(); ++i) {
      CHECK(query(aoi, probes[i].first, probes[i].second) == answers[i]);
    }
    CHECK(views(aoi) == before);
    CHECK(tick(aoi).empty());  // nothing moved: the change alone produces no events
    CHECK(views(aoi) == before);
    CHECK(aoi.config().cell_size == cs);
    for (std::size_t i = 0; i < probes.size(); ++i) {
      CHECK(query(aoi, probes[i].first, probes[i].second) == answers[i]);
    }
    if (cs == 5000.0) {  // a single cell holds everyone
      CHECK(aoi.stats().occupied_cells == 1);
      CHECK(aoi.stats().max_cell_population == 200);
    }
    const auto expected_cols = static_cast<std::uint32_t>(std::ceil(1000.0 / cs));
    CHECK(aoi.grid_width() == expected_cols);
    CHECK(aoi.grid_height() == expected_cols);
    CHECK(aoi.stats().cells == expected_cols * expected_cols);
    CHECK(aoi.stats().visible_pairs == pairs);
    CHECK(aoi.stats().entities == 200);
  }
  // Refused cell sizes change nothing.
  CHECK(aoi.set_cell_size(0) == GridConfigError::kBadCellSize);
  CHECK(aoi.set_cell_size(-4) == GridConfigError::kBadCellSize);
  CHECK(aoi.set_cell_size(kNaN) == GridConfigError::kBadCellSize);
  CHECK(aoi.set_cell_size(kInf) == GridConfigError::kBadCellSize);
  CHECK(aoi.set_cell_size(1e-4) == GridConfigError::kTooManyCells);
  CHECK(aoi.config().cell_size == 13.0);
  CHECK(aoi.grid_width() == 77);

  // Keep moving both; their event sets must agree tick by tick.
  std::uniform_real_distribution<double> step(-15.0, 15.0);
  for (int t = 0; t < 30; ++t) {
    for (std::size_t i = 0; i < hs.size(); ++i) {
      const Vec2 p{aoi.position(hs[i]).x + step(rng), aoi.position(hs[i]).y + step(rng)};
      aoi.move(hs[i], p);
      twin.move(ts[i], p);
    }
    auto sorted = [](std::vector<Event> ev) {
      std::vector<std::tuple<std::uint32_t, std::uint32_t, int>> out;
      for (const Event& e : ev) {
        out.emplace_back(e.observer.index, e.target.index, static_cast<int>(e.kind));
      }
      std::sort(out.begin(), out.end());
      return out;
    };
    CHECK(sorted(tick(aoi)) == sorted(tick(twin)));
  }
  for (std::size_t i = 0; i < hs.size(); ++i) CHECK(view_of(aoi, hs[i]) == view_of(twin, ts[i]));
}

TEST_CASE("set_cell_size keeps query_radius answering as of the last update") {
  // Queries are documented to reflect the last update(). A cell size change between two
  // updates must not make them reflect the pending moves, adds and removes instead.
  GridAoi aoi(make_config());
  const auto mover = aoi.add({100, 100}, 10, true);
  const auto goner = aoi.add({300, 300}, 10, false);
  tick(aoi);
  REQUIRE(aoi.move(mover, {900, 900}));  // pending until the next update
  REQUIRE(aoi.remove(goner));
  const auto newcomer = aoi.add({500, 500}, 0, false);
  REQUIRE(newcomer.valid());

  const auto at_old = query(aoi, {100, 100}, 1);
  const auto at_new = query(aoi, {900, 900}, 1);
  const auto at_goner = query(aoi, {300, 300}, 1);
  const auto at_newcomer = query(aoi, {500, 500}, 1);
  CHECK(at_old == std::set<Key>{key(mover)});  // as of the last update
  CHECK(at_new.empty());
  CHECK(at_newcomer.empty());
  const auto stats_before = aoi.stats();

  REQUIRE(aoi.set_cell_size(16.0) == GridConfigError::kNone);
  CHECK(query(aoi, {100, 100}, 1) == at_old);
  CHECK(query(aoi, {900, 900}, 1) == at_new);
  CHECK(query(aoi, {300, 300}, 1) == at_goner);
  CHECK(query(aoi, {500, 500}, 1) == at_newcomer);
  CHECK(aoi.stats().occupied_cells == stats_before.occupied_cells);

  // After the update everything reflects the new state.
  tick(aoi);
  CHECK(query(aoi, {900, 900}, 1) == std::set<Key>{key(mover)});
  CHECK(query(aoi, {100, 100}, 1).empty());
  CHECK(query(aoi, {300, 300}, 1).empty());
  CHECK(query(aoi, {500, 500}, 1) == std::set<Key>{key(newcomer)});
}

TEST_CASE("set_cell_size leaves the hysteresis band intact") {
  GridAoi aoi(make_config(32.0, 4.0));
  const auto a = aoi.add({100, 100}, 10, true);
  const auto b = aoi.add({110, 100}, 0, false);
  tick(aoi);
  REQUIRE(aoi.move(b, {113, 100}));
  CHECK(tick(aoi).empty());
  REQUIRE(aoi.set_cell_size(2.0) == GridConfigError::kNone);
  CHECK(tick(aoi).empty());
  CHECK(aoi.sees(a, b));
  REQUIRE(aoi.set_cell_size(900.0) == GridConfigError::kNone);
  REQUIRE(aoi.move(b, {115, 100}));
  const auto ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(left(ev, a, b));
}

// ---- refused input -------------------------------------------------------------------------

TEST_CASE("refused input: non-finite or out-of-range positions and radii are never stored") {
  GridAoi aoi(make_config());
  const std::vector<Vec2> bad_positions = {
      {kNaN, 0},        {0, kNaN},         {kInf, 0},         {0, -kInf},     {above(kMax), 0},
      {0, above(kMax)}, {-above(kMax), 0}, {0, -above(kMax)}, {1e300, 1e300}, {kNaN, kNaN}};
  const std::vector<double> bad_radii = {-1.0, below(0.0), kNaN, kInf, -kInf, above(kMax), 1e300};
  for (const Vec2 p : bad_positions) {
    CHECK_FALSE(aoi.add(p, 10, true).valid());
    CHECK_FALSE(aoi.add(p, 10, false).valid());
  }
  for (const double r : bad_radii) CHECK_FALSE(aoi.add({10, 10}, r, true).valid());
  CHECK(tick(aoi).empty());
  CHECK(aoi.stats().entities == 0);
  CHECK(aoi.stats().occupied_cells == 0);

  // The limits themselves are accepted.
  const auto lim = aoi.add({kMax, -kMax}, kMax, true);
  const auto zero = aoi.add({-kMax, kMax}, 0.0, true);
  CHECK(lim.valid());
  CHECK(zero.valid());

  // Refused moves change nothing.
  const auto a = aoi.add({100, 100}, 10, true);
  const auto b = aoi.add({105, 100}, 10, true);
  tick(aoi);
  REQUIRE(aoi.sees(a, b));
  for (const Vec2 p : bad_positions) {
    CHECK_FALSE(aoi.move(b, p));
    CHECK(aoi.position(b).x == 105);
    CHECK(aoi.position(b).y == 100);
  }
  for (const double r : bad_radii) CHECK_FALSE(aoi.set_view_radius(a, r));
  CHECK(aoi.view_radius(a) == 10);
  CHECK(tick(aoi).empty());
  CHECK(aoi.sees(a, b));

  // The invalid handle is refused everywhere.
  const EntityHandle none{};
  CHECK_FALSE(none.valid());
  CHECK_FALSE(aoi.contains(none));
  CHECK_FALSE(aoi.move(none, {1, 1}));
  CHECK_FALSE(aoi.remove(none));
  CHECK_FALSE(aoi.set_view_radius(none, 1));
  CHECK_FALSE(aoi.set_observer(none, true));
  CHECK_FALSE(aoi.sees(none, a));
  CHECK_FALSE(aoi.sees(a, none));
  CHECK(view_of(aoi, none).empty());
  // A handle with a valid index but a wrong generation is stale.
  CHECK_FALSE(aoi.contains({a.index, a.generation + 1}));
  CHECK_FALSE(aoi.move({a.index, a.generation + 1}, {1, 1}));
  CHECK_FALSE(aoi.sees(a, {b.index, b.generation + 1}));

  // Queries refuse bad input by returning nothing.
  std::vector<EntityHandle> out;
  aoi.query_radius({kNaN, 100}, 10, out);
  aoi.query_radius({100, 100}, kNaN, out);
  aoi.query_radius({100, 100}, -1, out);
  aoi.query_radius({100, kInf}, 10, out);
  CHECK(out.empty());
}

TEST_CASE(
    "validate rejects bad bounds - cell size - grid size - hysteresis and the constructor throws") {
  CHECK(GridAoi::validate(GridConfig{}) == GridConfigError::kNone);
  CHECK(GridAoi::validate(make_config(0.5, 0.0)) == GridConfigError::kNone);

  struct Case {
    GridConfig config;
    GridConfigError expected;
  };
  const Bounds ok{{0, 0}, {1000, 1000}};
  const std::vector<Case> cases = {
      {make_config(32, 2, {{0, 0}, {0, 1000}}), GridConfigError::kBadBounds},  // min == max
      {make_config(32, 2, {{0, 0}, {1000, 0}}), GridConfigError::kBadBounds},
      {make_config(32, 2, {{10, 0}, {5, 1000}}), GridConfigError::kBadBounds},  // min > max
      {make_config(32, 2, {{0, 10}, {1000, 5}}), GridConfigError::kBadBounds},
      {make_config(32, 2, {{kNaN, 0}, {1000, 1000}}), GridConfigError::kBadBounds},
      {make_config(32, 2, {{0, 0}, {1000, kNaN}}), GridConfigError::kBadBounds},
      {make_config(32, 2, {{-kInf, 0}, {1000, 1000}}), GridConfigError::kBadBounds},
      {make_config(32, 2, {{0, 0}, {kInf, 1000}}), GridConfigError::kBadBounds},
      {make_config(32, 2, {{0, 0}, {above(kMax), 1000}}), GridConfigError::kBadBounds},
      {make_config(0, 2, ok), GridConfigError::kBadCellSize},
      {make_config(-0.0, 2, ok), GridConfigError::kBadCellSize},
      {make_config(-32, 2, ok), GridConfigError::kBadCellSize},
      {make_config(kNaN, 2, ok), GridConfigError::kBadCellSize},
      {make_config(kInf, 2, ok), GridConfigError::kBadCellSize},
      {make_config(-kInf, 2, ok), GridConfigError::kBadCellSize},
      {make_config(0.01, 2, ok), GridConfigError::kTooManyCells},  // 10^10 cells
      {make_config(1.0, 2, {{0, 0}, {4097, 4096}}), GridConfigError::kTooManyCells},
      {make_config(1e-300, 2, ok), GridConfigError::kTooManyCells},
      {make_config(1.0, 2, {{-kMax, -kMax}, {kMax, kMax}}), GridConfigError::kTooManyCells},
      {make_config(32, -1, ok), GridConfigError::kBadHysteresis},
      {make_config(32, below(0.0), ok), GridConfigError::kBadHysteresis},
      {make_config(32, kNaN, ok), GridConfigError::kBadHysteresis},
      {make_config(32, kInf, ok), GridConfigError::kBadHysteresis},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    CHECK(GridAoi::validate(cases[i].config) == cases[i].expected);
    CHECK_THROWS_AS(GridAoi{cases[i].config}, std::invalid_argument);
    CHECK(std::string(to_string(cases[i].expected)).size() > 0);
  }
  // Exactly kMaxCells is still allowed (validated only: building it takes 64 MiB).
  CHECK(GridAoi::validate(make_config(1.0, 2, {{0, 0}, {4096, 4096}})) == GridConfigError::kNone);
  // Valid odd shapes construct fine.
  CHECK_NOTHROW(GridAoi{make_config(1e300, 0, ok)});                         // a single cell
  CHECK_NOTHROW(GridAoi{make_config(3, 0, {{-kMax, 0}, {-kMax + 10, 1}})});  // one thin row
  const GridAoi wide(make_config(1000, 0, {{-kMax, -1}, {kMax, 1}}));
  CHECK(wide.grid_width() == 20000);
  CHECK(wide.grid_height() == 1);
}

// ---- queries and stats ---------------------------------------------------------------------

TEST_CASE("query_radius returns exactly the entities within the radius") {
  GridAoi aoi(make_config(20.0, 2.0, {{0, 0}, {400, 400}}));
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> coord(-60.0, 460.0);
  std::vector<EntityHandle> hs;
  std::vector<Vec2> ps;
  for (int i = 0; i < 300; ++i) {
    const Vec2 p = i % 5 == 0 ? Vec2{std::round(coord(rng)), std::round(coord(rng))}
                              : Vec2{coord(rng), coord(rng)};
    hs.push_back(aoi.add(p, 5, i % 2 == 0));
    ps.push_back(p);
  }
  // Exact boundary residents around (200, 200): on the radius 30 circle and just outside.
  hs.push_back(aoi.add({230, 200}, 0, false));
  ps.push_back({230, 200});
  hs.push_back(aoi.add({200 - 18, 200 + 24}, 0, false));
  ps.push_back({200 - 18, 200 + 24});
  hs.push_back(aoi.add({200, above(230.0)}, 0, false));
  ps.push_back({200, above(230.0)});
  const auto pending = aoi.add({200, 200}, 0, false);  // added after the last update
  tick(aoi);
  REQUIRE(aoi.remove(pending));

  auto brute = [&](Vec2 c, double r) {
    std::set<Key> out;
    for (std::size_t i = 0; i < hs.size(); ++i) {
      if (dist2(c, ps[i]) <= r * r) out.insert(key(hs[i]));
    }
    return out;
  };
  const std::vector<std::pair<Vec2, double>> queries = {
      {{200, 200}, 30},   {{200, 200}, 0},       {{0, 0}, 50},       {{-50, -50}, 20},
      {{400, 400}, 45.5}, {{1e6, 1e6}, 10},      {{-1e6, 200}, 1e6}, {{200, 200}, kMax},
      {{20, 20}, 20},     {{123.4, 321.9}, 77.7}};
  for (const auto& [c, r] : queries) {
    INFO("query (" << c.x << ", " << c.y << ") r=" << r);
    const auto got = query(aoi, c, r);
    // The removed-but-not-yet-updated entity may or may not be reported; ignore it.
    auto got_live = got;
    got_live.erase(key(pending));
    CHECK(got_live == brute(c, r));
  }
  CHECK(query(aoi, {200, 200}, kMax).size() >= hs.size());
  const auto ring = brute({200, 200}, 30);
  CHECK(ring.count(key(hs[300])) == 1);
  CHECK(ring.count(key(hs[301])) == 1);
  CHECK(ring.count(key(hs[302])) == 0);
  tick(aoi);
  CHECK(query(aoi, {200, 200}, kMax).size() == hs.size());
}

TEST_CASE("stats: entities - observers - cells - occupancy - visible pairs") {
  GridAoi aoi(make_config(32.0, 2.0));  // 1000 / 32 -> 32 x 32 cells
  auto s = aoi.stats();
  CHECK(s.entities == 0);
  CHECK(s.cells == 32 * 32);
  CHECK(s.occupied_cells == 0);
  CHECK(s.max_cell_population == 0);
  CHECK(s.visible_pairs == 0);

  const auto a = aoi.add({1, 1}, 10, true);
  const auto b = aoi.add({2, 2}, 10, true);
  const auto c = aoi.add({3, 3}, 10, false);
  aoi.add({-50, -50}, 10, false);   // clamped into cell (0, 0)
  aoi.add({100, 100}, 10, true);    // alone in cell (3, 3)
  aoi.add({999, 999}, 10, false);   // last cell
  aoi.add({5000, 999}, 10, false);  // clamped into the last cell too
  tick(aoi);
  s = aoi.stats();
  CHECK(s.entities == 7);
  CHECK(s.observers == 3);
  CHECK(s.cells == 1024);
  CHECK(s.occupied_cells == 3);
  CHECK(s.max_cell_population == 4);
  CHECK(s.visible_pairs == 4);  // a->b, a->c, b->a, b->c

  REQUIRE(aoi.remove(c));
  REQUIRE(aoi.set_observer(b, false));
  tick(aoi);
  s = aoi.stats();
  CHECK(s.entities == 6);
  CHECK(s.observers == 2);
  CHECK(s.occupied_cells == 3);
  CHECK(s.max_cell_population == 3);
  CHECK(s.visible_pairs == 1);  // a->b
  CHECK(aoi.sees(a, b));
}

// ---- determinism and event hygiene ---------------------------------------------------------

namespace {

// Plays a random but seeded scenario and returns every tick's events in AOI order.
std::vector<std::vector<Event>> scripted_run(std::uint64_t seed, int ticks) {
  std::mt19937_64 rng(seed);
  auto u = [&](double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(rng() >> 11) * 0x1.0p-53);
  };
  GridAoi aoi(make_config(24.0, 2.0, {{0, 0}, {600, 600}}));
  std::vector<EntityHandle> live;
  std::vector<std::vector<Event>> out;
  for (int t = 0; t < ticks; ++t) {
    for (int k = static_cast<int>(rng() % 4); k > 0 || live.size() < 80; --k) {
      live.push_back(aoi.add({u(-50, 650), u(-50, 650)}, u(0, 80), rng() % 3 != 0));
    }
    for (int k = static_cast<int>(rng() % 3); k > 0 && !live.empty(); --k) {
      const std::size_t i = rng() % live.size();
      aoi.remove(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
    for (const auto h : live) {
      if (rng() % 2) aoi.move(h, {aoi.position(h).x + u(-8, 8), aoi.position(h).y + u(-8, 8)});
    }
    if (!live.empty()) {
      aoi.set_view_radius(live[rng() % live.size()], u(0, 100));
      aoi.set_observer(live[rng() % live.size()], rng() % 2 == 0);
      aoi.move(live[rng() % live.size()], {u(-2000, 2000), u(-2000, 2000)});
    }
    out.push_back(tick(aoi));
  }
  return out;
}

}  // namespace

TEST_CASE("determinism: identical operation sequences give identical event sequences") {
  const auto first = scripted_run(1234, 150);
  const auto second = scripted_run(1234, 150);
  REQUIRE(first.size() == second.size());
  std::size_t total = 0;
  for (std::size_t t = 0; t < first.size(); ++t) {
    INFO("tick " << t);
    CHECK(first[t] == second[t]);  // same events in the same order
    total += first[t].size();
  }
  CHECK(total > 500);
  CHECK(scripted_run(99, 40) != scripted_run(1234, 40));  // the scenario really varies
}

TEST_CASE("events: no duplicates per tick - documented order - never enter and leave together") {
  const auto run = scripted_run(777, 200);
  for (std::size_t t = 0; t < run.size(); ++t) {
    INFO("tick " << t);
    const auto& ev = run[t];
    std::set<std::pair<Key, Key>> pairs;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      // One event per (observer, target) pair per tick: no duplicate enters or leaves, and
      // never an enter and a leave of the same pair.
      CHECK(pairs.insert({key(ev[i].observer), key(ev[i].target)}).second);
      CHECK_FALSE(ev[i].observer == ev[i].target);
    }
    // Observers by ascending slot index; per observer, enters before leaves.
    CHECK(rebuild_order_error(ev) == "");
  }
}

TEST_CASE("view_set - sees - visible_pairs agree") {
  GridAoi aoi(make_config(10.0, 1.0, {{0, 0}, {100, 100}}));
  std::vector<EntityHandle> hs;
  // Two radii: mutual pairs within each class (held by one view), one-way pairs across.
  for (int i = 0; i < 40; ++i) {
    hs.push_back(aoi.add({i * 2.5, (i % 7) * 3.0}, i % 3 == 0 ? 8 : 12, i % 4 != 0));
  }
  tick(aoi);
  std::uint64_t pairs = 0;
  for (const auto a : hs) {
    std::vector<EntityHandle> v;
    aoi.view_set(a, v);
    for (const EntityHandle t : v) {
      CHECK(t == aoi.handle_at(t.index));
      CHECK(aoi.sees(a, t));
    }
    std::set<Key> unique;
    for (const EntityHandle t : v) unique.insert(key(t));
    CHECK(unique.size() == v.size());
    for (const auto b : hs) {
      const double r = aoi.view_radius(a);
      const bool expected =
          aoi.is_observer(a) && a != b && dist2(aoi.position(a), aoi.position(b)) <= r * r;
      CHECK(aoi.sees(a, b) == expected);
      CHECK(unique.count(key(b)) == (expected ? 1u : 0u));
    }
    pairs += v.size();
  }
  CHECK(aoi.stats().visible_pairs == pairs);
  CHECK(pairs > 0);
  CHECK(aoi.stats().mutual_observers > 0);
}

// ---- displacement bound (max_step) -----------------------------------------------------------

namespace {

std::set<std::tuple<Key, Key, EventKind>> event_set(const std::vector<Event>& ev) {
  std::set<std::tuple<Key, Key, EventKind>> out;
  for (const Event& e : ev) out.insert({key(e.observer), key(e.target), e.kind});
  return out;
}

GridConfig bounded_config(double max_step, double cell_size = 32.0, double hysteresis = 2.0) {
  GridConfig c = make_config(cell_size, hysteresis);
  c.max_step = max_step;
  return c;
}

}  // namespace

TEST_CASE("max_step: validation and set_max_step") {
  GridConfig c = make_config();
  CHECK(c.max_step == kInf);  // no bound by default
  c.max_step = 0.0;
  CHECK(GridAoi::validate(c) == GridConfigError::kNone);
  c.max_step = -0.5;
  CHECK(GridAoi::validate(c) == GridConfigError::kBadMaxStep);
  c.max_step = kNaN;
  CHECK(GridAoi::validate(c) == GridConfigError::kBadMaxStep);
  GridAoi aoi(make_config());
  CHECK(aoi.set_max_step(-1.0) == GridConfigError::kBadMaxStep);
  CHECK(aoi.set_max_step(0.25) == GridConfigError::kNone);
  CHECK(aoi.config().max_step == 0.25);
  CHECK(aoi.set_max_step(kInf) == GridConfigError::kNone);
}

TEST_CASE("max_step: a pair asleep deep inside the view leaves when its target teleports") {
  GridAoi aoi(bounded_config(0.5));
  const auto a = aoi.add({500, 500}, 30, true);
  const auto b = aoi.add({505, 500}, 30, true);  // 25 m inside the leave threshold
  CHECK(entered(tick(aoi), a, b));
  for (int t = 0; t < 5; ++t) CHECK(tick(aoi).empty());  // nothing can change: no tests
  REQUIRE(aoi.move(b, {900, 900}));                      // far beyond the bound: a teleport
  const auto ev = tick(aoi);
  CHECK(left(ev, a, b));
  CHECK(left(ev, b, a));
  CHECK(aoi.check_invariants().empty());
}

TEST_CASE("max_step: a teleport into an observer's view enters at once") {
  GridAoi aoi(bounded_config(0.5));
  const auto a = aoi.add({500, 500}, 30, true);
  const auto b = aoi.add({100, 100}, 30, false);
  CHECK(tick(aoi).empty());
  REQUIRE(aoi.move(b, {510, 500}));
  CHECK(entered(tick(aoi), a, b));
  CHECK(aoi.check_invariants().empty());
}

TEST_CASE("max_step: steps of exactly the bound reach both thresholds on time") {
  // b walks away from a at exactly max_step per tick, then back: it must leave on the first
  // tick beyond r + h and enter on the first tick within r, whatever was scheduled.
  GridAoi aoi(bounded_config(0.5));
  const auto a = aoi.add({500, 500}, 10, true);
  const auto b = aoi.add({500, 500}, 0, false);
  CHECK(entered(tick(aoi), a, b));
  int tick_left = -1;
  for (int t = 1; t <= 40; ++t) {
    REQUIRE(aoi.move(b, {500 + 0.5 * t, 500}));
    if (left(tick(aoi), a, b)) tick_left = t;
  }
  CHECK(tick_left == 25);  // 12.5 > r + h = 12, 12.0 is not
  int tick_entered = -1;
  for (int t = 39; t >= 0; --t) {
    REQUIRE(aoi.move(b, {500 + 0.5 * t, 500}));
    if (entered(tick(aoi), a, b)) tick_entered = t;
    if (tick_entered >= 0) break;
  }
  CHECK(tick_entered == 20);  // 10.0 <= r
  CHECK(aoi.check_invariants().empty());
}

TEST_CASE("max_step: a move beyond the bound by a hair is handled as a teleport") {
  GridAoi aoi(bounded_config(1.0));
  const auto a = aoi.add({500, 500}, 10, true);
  const auto b = aoi.add({520, 500}, 0, false);
  CHECK(tick(aoi).empty());
  for (int t = 0; t < 3; ++t) CHECK(tick(aoi).empty());
  // 9.75 m in one tick with a bound of 1 m: the schedule did not expect b for a while.
  REQUIRE(aoi.move(b, {510.25, 500}));
  CHECK(tick(aoi).empty());
  REQUIRE(aoi.move(b, {509.9999, 500}));  // 0.25 mm: within the bound
  CHECK(entered(tick(aoi), a, b));
  CHECK(aoi.check_invariants().empty());
}

TEST_CASE("max_step: radius changes while pairs are asleep") {
  GridAoi aoi(bounded_config(0.25));
  const auto a = aoi.add({500, 500}, 30, true);
  const auto near = aoi.add({510, 500}, 0, false);  // deep inside: asleep
  const auto far = aoi.add({560, 500}, 0, false);   // far outside: not even a candidate
  CHECK(entered(tick(aoi), a, near));
  for (int t = 0; t < 3; ++t) CHECK(tick(aoi).empty());
  REQUIRE(aoi.set_view_radius(a, 5));  // near is now beyond 5 + 2
  auto ev = tick(aoi);
  CHECK(left(ev, a, near));
  CHECK(ev.size() == 1);
  REQUIRE(aoi.set_view_radius(a, 70));
  ev = tick(aoi);
  CHECK(entered(ev, a, near));
  CHECK(entered(ev, a, far));
  CHECK(aoi.check_invariants().empty());
}

TEST_CASE("mutual pairs: observers of one radius enter and leave each other together") {
  GridAoi aoi(bounded_config(0.5, 16.0));
  const auto a = aoi.add({100, 100}, 30, true);
  const auto b = aoi.add({120, 100}, 30, true);  // same radius: a mutual pair
  auto ev = tick(aoi);
  REQUIRE(ev.size() == 2);
  // The owner's (lower slot's) event first, the other way round right after it.
  CHECK(ev[0] == Event{a, b, EventKind::kEnter});
  CHECK(ev[1] == Event{b, a, EventKind::kEnter});
  // b walks away at the bound: both keep each other up to r + h = 32 and leave together
  // in the first tick beyond.
  for (int t = 1; t <= 30; ++t) {
    INFO("tick " << t);
    REQUIRE(aoi.move(b, {120 + 0.5 * t, 100}));
    ev = tick(aoi);
    const double d = 20 + 0.5 * t;
    if (t == 25) {
      REQUIRE(ev.size() == 2);
      CHECK(ev[0] == Event{a, b, EventKind::kLeave});
      CHECK(ev[1] == Event{b, a, EventKind::kLeave});
    } else {
      CHECK(ev.empty());
    }
    CHECK(aoi.sees(a, b) == (d <= 32));
    CHECK(aoi.sees(b, a) == (d <= 32));
    CHECK(aoi.check_invariants().empty());
  }
}

TEST_CASE("mutual pairs: a radius change splits a pair - it joins again once seen both ways") {
  GridAoi aoi(bounded_config(0.5, 16.0));
  const auto a = aoi.add({100, 100}, 30, true);
  const auto b = aoi.add({120, 100}, 30, true);
  CHECK(tick(aoi).size() == 2);
  CHECK(aoi.stats().mutual_observers == 2);
  REQUIRE(aoi.set_view_radius(b, 10));  // 20 > 10 + 2: b loses a, a keeps b
  CHECK(aoi.stats().mutual_observers == 1);
  auto ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(left(ev, b, a));
  CHECK(aoi.sees(a, b));
  CHECK(aoi.stats().mutual_observers == 2);  // b alone in the class of radius 10
  CHECK(aoi.check_invariants().empty());
  // Back to 30: b sees a again, and nothing is seen one way only: b is a's classmate again.
  REQUIRE(aoi.set_view_radius(b, 30));
  ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(entered(ev, b, a));
  CHECK(aoi.stats().mutual_observers == 2);
  CHECK(aoi.check_invariants().empty());

  // In the hysteresis band the pair can be seen one way only: b cannot join then.
  REQUIRE(aoi.move(b, {131, 100}));  // 31 m: both keep each other (<= 32)
  CHECK(tick(aoi).empty());
  REQUIRE(aoi.set_view_radius(b, 10));
  ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(left(ev, b, a));
  REQUIRE(aoi.set_view_radius(b, 30));  // 31 > 30: b does not see a, a still sees b
  CHECK(tick(aoi).empty());
  CHECK(aoi.sees(a, b));
  CHECK_FALSE(aoi.sees(b, a));
  CHECK(aoi.stats().mutual_observers == 1);
  CHECK(aoi.check_invariants().empty());
  // b steps in to 29.5 m: it sees a, and joins at the rebuild its list gets after the jump.
  REQUIRE(aoi.move(b, {129.5, 100}));
  ev = tick(aoi);
  CHECK(ev.size() == 1);
  CHECK(entered(ev, b, a));
  CHECK(aoi.stats().mutual_observers == 2);
  CHECK(aoi.check_invariants().empty());
  // Apart again: both leave in the same tick, the owner's event first.
  for (int t = 1; t <= 8; ++t) {
    INFO("tick " << t);
    REQUIRE(aoi.move(a, {100 - 0.5 * t, 100}));
    ev = tick(aoi);
    const double d = 29.5 + 0.5 * t;
    if (d > 32 && d <= 32.5) {
      REQUIRE(ev.size() == 2);
      CHECK(ev[0] == Event{a, b, EventKind::kLeave});
      CHECK(ev[1] == Event{b, a, EventKind::kLeave});
    } else {
      CHECK(ev.empty());
    }
    CHECK(aoi.check_invariants().empty());
  }
}

TEST_CASE("mutual pairs: the owner stops observing or despawns, the other keeps its view") {
  GridAoi aoi(bounded_config(0.5, 16.0));
  const auto a = aoi.add({100, 100}, 30, true);  // the lower slot: owns the pair
  const auto b = aoi.add({110, 100}, 30, true);
  const auto c = aoi.add({200, 100}, 30, true);
  const auto d = aoi.add({210, 100}, 30, true);
  CHECK(tick(aoi).size() == 4);
  for (int t = 0; t < 3; ++t) CHECK(tick(aoi).empty());  // deep inside: asleep
  REQUIRE(aoi.set_observer(a, false));
  REQUIRE(aoi.remove(c));
  auto ev = tick(aoi);
  CHECK(ev.size() == 3);
  CHECK(left(ev, a, b));  // a's view is gone
  CHECK(left(ev, c, d));  // c despawned: gone both ways
  CHECK(left(ev, d, c));
  CHECK(aoi.sees(b, a));  // b still sees the non-observer a
  CHECK(aoi.check_invariants().empty());
  // Now b's list must follow the pair: b walks away and drops a beyond 32 m.
  for (int t = 1; t <= 30; ++t) {
    INFO("tick " << t);
    REQUIRE(aoi.move(b, {110 + 0.5 * t, 100}));
    ev = tick(aoi);
    const double dist = 10 + 0.5 * t;
    CHECK(ev.size() == (dist > 32 && dist <= 32.5 ? 1u : 0u));
    CHECK(aoi.sees(b, a) == (dist <= 32));
    CHECK(aoi.check_invariants().empty());
  }
}

TEST_CASE("mutual pairs: views answer as of the last update while pairs are split") {
  // A mutual pair is held by the lower slot's view alone; view_set() and sees() must
  // still answer both directions, also after mutations that split pairs before the update.
  GridAoi aoi(bounded_config(0.5, 16.0));
  std::vector<EntityHandle> hs;
  for (int i = 0; i < 12; ++i) hs.push_back(aoi.add({100.0 + 4.0 * i, 100}, 30, true));
  tick(aoi);
  REQUIRE(aoi.stats().mutual_observers == 12);
  auto expected_view = [&](EntityHandle a) {
    std::set<Key> out;
    if (!aoi.is_observer(a)) return out;
    for (const EntityHandle b : hs) {
      if (b != a && dist2(aoi.position(a), aoi.position(b)) <= 30.0 * 30.0) out.insert(key(b));
    }
    return out;
  };
  std::vector<std::set<Key>> before;
  for (const EntityHandle a : hs) {
    before.push_back(expected_view(a));
    CHECK(view_of(aoi, a) == before.back());
    for (const EntityHandle b : hs) CHECK(aoi.sees(a, b) == (before.back().count(key(b)) == 1));
  }
  // Split pairs three ways (slots low, middle and high), then move everyone a little:
  // until the update, every view is the last update's.
  REQUIRE(aoi.set_view_radius(hs[0], 20));
  REQUIRE(aoi.set_observer(hs[5], false));
  REQUIRE(aoi.remove(hs[11]));
  for (std::size_t i = 0; i + 1 < hs.size(); ++i) {
    REQUIRE(aoi.move(hs[i], {100.0 + 4.0 * static_cast<double>(i) + 0.25, 100.25}));
  }
  for (std::size_t i = 0; i + 1 < hs.size(); ++i) {
    INFO("observer " << i);
    CHECK(view_of(aoi, hs[i]) == before[i]);
    for (std::size_t j = 0; j < hs.size(); ++j) {
      CHECK(aoi.sees(hs[i], hs[j]) == (before[i].count(key(hs[j])) == 1));
    }
  }
  hs.pop_back();
  // After the update (and the joins that follow), the views are exact again.
  for (int t = 0; t < 40; ++t) {
    INFO("tick " << t);
    tick(aoi);
    CHECK(aoi.check_invariants().empty());
    for (const EntityHandle a : hs) {
      if (a == hs[0]) continue;  // radius 20: checked below
      CHECK(view_of(aoi, a) == expected_view(a));
    }
  }
  CHECK(view_of(aoi, hs[0]).size() == 5);     // within 20 m: 4, 8, 12, 16, 20
  CHECK(aoi.stats().mutual_observers == 10);  // hs[0] joined the 20 m class, hs[5] observes no more
}

TEST_CASE("mutual classes: radii beyond the 127th get no class, and views stay exact") {
  GridAoi aoi(bounded_config(0.5, 16.0));
  // 127 radii, one class each, 3.9 m apart along a row: no pairs between them.
  std::vector<EntityHandle> row;
  for (int i = 0; i < 127; ++i) row.push_back(aoi.add({5.0 + 3.9 * i, 10}, 1.0 + 0.01 * i, true));
  // A crowd of a radius first seen after that: no class, every pair followed both ways.
  std::vector<EntityHandle> crowd;
  for (int i = 0; i < 6; ++i) crowd.push_back(aoi.add({100.0 + 7.0 * i, 500}, 30, true));
  // The rule with hysteresis, applied tick by tick: the crowd's views.
  std::map<Key, std::set<Key>> seen;
  auto expect_views = [&] {
    for (const EntityHandle a : crowd) {
      const double r = aoi.view_radius(a);
      for (const EntityHandle b : crowd) {
        if (b == a) continue;
        const double d2 = dist2(aoi.position(a), aoi.position(b));
        if (d2 <= r * r) seen[key(a)].insert(key(b));
        if (d2 > (r + 2.0) * (r + 2.0)) seen[key(a)].erase(key(b));
      }
    }
  };
  tick(aoi);
  expect_views();
  CHECK(aoi.stats().mutual_observers == 127);
  // A row member takes the crowd's radius and joins it: it leaves its class and finds
  // none for the new radius.
  REQUIRE(aoi.set_view_radius(row[0], 30));
  REQUIRE(aoi.move(row[0], {135, 500}));  // a teleport, beside the crowd
  crowd.push_back(row[0]);
  for (int t = 0; t < 40; ++t) {
    INFO("tick " << t);
    // The crowd spreads out slowly: pairs cross r and r + h both ways.
    for (std::size_t i = 0; i < crowd.size(); ++i) {
      const Vec2 p = aoi.position(crowd[i]);
      REQUIRE(aoi.move(crowd[i], {p.x + 0.25 * (static_cast<double>(i) - 3.0), p.y}));
    }
    tick(aoi);
    expect_views();
    CHECK(aoi.check_invariants().empty());
    for (const EntityHandle a : crowd) CHECK(view_of(aoi, a) == seen[key(a)]);
    CHECK(aoi.stats().mutual_observers == 126);
  }
}

TEST_CASE("max_step: changing the bound - the hysteresis - the cell size keeps views exact") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> coord(0.0, 400.0);
  std::uniform_real_distribution<double> step(-0.3, 0.3);
  GridAoi bounded(bounded_config(0.5, 16.0));
  GridAoi plain(make_config(16.0));  // no bound: everything re-tested every tick
  std::vector<std::pair<EntityHandle, EntityHandle>> hs;
  for (int i = 0; i < 300; ++i) {
    const Vec2 p{coord(rng), coord(rng)};
    hs.push_back({bounded.add(p, 25, i % 2 == 0), plain.add(p, 25, i % 2 == 0)});
  }
  for (int t = 0; t < 120; ++t) {
    for (const auto& [h1, h2] : hs) {
      const Vec2 p{bounded.position(h1).x + step(rng), bounded.position(h1).y + step(rng)};
      bounded.move(h1, p);
      plain.move(h2, p);
    }
    if (t == 30) REQUIRE(bounded.set_max_step(0.3) == GridConfigError::kNone);
    if (t == 50) {
      REQUIRE(bounded.set_hysteresis(4.0) == GridConfigError::kNone);
      REQUIRE(plain.set_hysteresis(4.0) == GridConfigError::kNone);
    }
    if (t == 70) REQUIRE(bounded.set_cell_size(3.0) == GridConfigError::kNone);
    if (t == 90) REQUIRE(bounded.set_max_step(kInf) == GridConfigError::kNone);
    if (t == 100) REQUIRE(bounded.set_max_step(0.3) == GridConfigError::kNone);
    INFO("tick " << t);
    CHECK(event_set(tick(bounded)) == event_set(tick(plain)));
    CHECK(bounded.stats().visible_pairs == plain.stats().visible_pairs);
  }
  CHECK(bounded.check_invariants().empty());
}

TEST_CASE("cells: a 16 Mi cell grid with few entities gives the same events as a coarse one") {
  // The grid is sparse: nothing is stored or visited per empty cell. (aoi-bench
  // --cell-scaling times this case: the update time does not grow with the cell count.)
  GridConfig fine = bounded_config(0.25, 0.5);
  fine.bounds = {{0.0, 0.0}, {2000.0, 2000.0}};
  GridConfig coarse = fine;
  coarse.cell_size = 64.0;
  REQUIRE(GridAoi::validate(fine) == GridConfigError::kNone);
  GridAoi a(fine);
  GridAoi b(coarse);
  CHECK(a.stats().cells == 4000u * 4000u);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> coord(900.0, 1100.0);
  std::uniform_real_distribution<double> step(-0.17, 0.17);
  std::vector<std::pair<EntityHandle, EntityHandle>> hs;
  for (int i = 0; i < 100; ++i) {
    const Vec2 p{coord(rng), coord(rng)};
    hs.push_back({a.add(p, 30, true), b.add(p, 30, true)});
  }
  for (int t = 0; t < 100; ++t) {
    for (const auto& [h1, h2] : hs) {
      const Vec2 p{a.position(h1).x + step(rng), a.position(h1).y + step(rng)};
      a.move(h1, p);
      b.move(h2, p);
    }
    CHECK(event_set(tick(a)) == event_set(tick(b)));
  }
  CHECK(a.stats().occupied_cells == 100);
  CHECK(a.stats().visible_pairs == b.stats().visible_pairs);
  CHECK(a.stats().visible_pairs > 0);
}

TEST_CASE("cells: an entity that walked into another cell is found before it is listed there") {
  // Walking (within max_step) into another cell does not rewrite the cell order at once:
  // the entity stays listed under its old cell for a few ticks, and every query must still
  // find it, even one whose disc only reaches the cell the entity is in now.
  // (Cells of 320 m and a bound of 1 m: the rewrite may be deferred for 7 ticks.)
  GridAoi aoi(bounded_config(1.0, 320.0));
  const auto e = aoi.add({319.5, 50}, 0, false);
  CHECK(tick(aoi).empty());
  for (int t = 1; t <= 12; ++t) {
    const double x = 319.5 + 0.9 * t;  // into the next cell at the first tick
    REQUIRE(aoi.move(e, {x, 50}));
    tick(aoi);
    INFO("tick " << t << ", x " << x);
    CHECK(query(aoi, {x + 5.0, 50}, 5.001).count(key(e)) == 1);
    CHECK(aoi.check_invariants().empty());
  }
}

TEST_CASE("cells: a list rebuilt while its target is listed under its old cell still follows it") {
  // 320 m cells and a bound of 1 m (the rewrite may be deferred for 7 ticks; lists live
  // 32 ticks and reach r + 62 m). At tick 1, t walks across x = 320 into the next cell but
  // stays listed under the old one, and o's list is rebuilt (its radius changed) with o
  // more than a list radius to the right of that edge: only a query widened by the walk
  // finds t. Then both walk towards each other at the bound, and t must enter exactly when
  // it comes within r - not when o's list next expires.
  GridAoi aoi(bounded_config(1.0, 320.0));
  const auto t = aoi.add({319.6, 50}, 0, false);
  const auto o = aoi.add({392.8, 50}, 10.0, true);
  CHECK(tick(aoi).empty());
  REQUIRE(aoi.move(t, {320.5, 50}));
  REQUIRE(aoi.set_view_radius(o, 10.5));
  CHECK(tick(aoi).empty());
  double tx = 320.5;
  double ox = 392.8;
  for (int k = 2; k <= 40; ++k) {
    tx += 0.999;
    ox -= 0.999;
    REQUIRE(aoi.move(t, {tx, 50}));
    REQUIRE(aoi.move(o, {ox, 50}));
    const auto events = tick(aoi);
    INFO("tick " << k << ", distance " << ox - tx);
    CHECK(entered(events, o, t) == (ox - tx <= 10.5 && ox - tx + 1.998 > 10.5));
    CHECK(aoi.check_invariants().empty());
  }
  CHECK(aoi.sees(o, t));
}

TEST_CASE(
    "cells: the bound, the hysteresis and the cell size changed while entities are listed late") {
  // Entities walk into other cells of 320 m (listed late), then the settings change under
  // them: views, queries and invariants stay exact through every change.
  GridAoi aoi(bounded_config(1.0, 320.0));
  std::vector<EntityHandle> hs;
  for (int i = 0; i < 6; ++i) {
    hs.push_back(aoi.add({318.0 + 0.7 * i, 300.0 + 3.0 * i}, 12.0, i % 2 == 0));
  }
  tick(aoi);
  auto walk = [&](int ticks) {
    for (int t = 0; t < ticks; ++t) {
      for (std::size_t i = 0; i < hs.size(); ++i) {
        const Vec2 p = aoi.position(hs[i]);
        REQUIRE(aoi.move(hs[i], {p.x + (i % 2 == 0 ? 0.9 : -0.9), p.y + 0.3}));
      }
      tick(aoi);
      REQUIRE(aoi.check_invariants().empty());
      for (const EntityHandle h : hs) {
        CHECK(query(aoi, aoi.position(h), 0.001).count(key(h)) == 1);
      }
    }
  };
  walk(3);  // across x = 320 and listed late
  REQUIRE(aoi.set_max_step(std::numeric_limits<double>::infinity()) == GridConfigError::kNone);
  walk(2);
  REQUIRE(aoi.set_max_step(1.0) == GridConfigError::kNone);
  walk(3);
  REQUIRE(aoi.set_hysteresis(0.5) == GridConfigError::kNone);
  walk(2);
  REQUIRE(aoi.set_cell_size(7.0) == GridConfigError::kNone);
  walk(2);
  REQUIRE(aoi.set_cell_size(640.0) == GridConfigError::kNone);
  walk(4);
  for (const EntityHandle a : hs) {
    if (!aoi.is_observer(a)) continue;
    for (const EntityHandle b : hs) {
      if (a == b) continue;
      const double d = std::sqrt(dist2(aoi.position(a), aoi.position(b)));
      if (d <= 12.0) CHECK(aoi.sees(a, b));
      if (d > 12.5) CHECK_FALSE(aoi.sees(a, b));
    }
  }
}
