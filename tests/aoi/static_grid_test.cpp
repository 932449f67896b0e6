// The static layer's grid (aoi::StaticGrid): filing by cell, the point test against brute
// force, and the collision rule: a resolved move never ends inside a circle and is never
// longer than the unobstructed one.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "aoi/static_grid.hpp"
#include "util/chunk_grid.hpp"

using zone::aoi::Bounds;
using zone::aoi::StaticCircle;
using zone::aoi::StaticGrid;
using zone::aoi::Vec2;

namespace {

bool inside_any(const std::vector<StaticCircle>& cs, Vec2 p) {
  return std::any_of(cs.begin(), cs.end(), [&](const StaticCircle& c) {
    return std::hypot(p.x - c.x, p.y - c.y) < c.radius;
  });
}

std::vector<StaticCircle> random_circles(std::mt19937_64& rng, int n, double side, double rmax) {
  std::uniform_real_distribution<double> pos(0.0, side), rad(0.2, rmax);
  std::vector<StaticCircle> cs;
  for (int i = 0; i < n; ++i) cs.push_back({pos(rng), pos(rng), rad(rng)});
  return cs;
}

}  // namespace

TEST_CASE("static grid: every circle filed once, under the cell of its centre") {
  std::mt19937_64 rng(3);
  const Bounds world{{-100.0, 50.0}, {300.0, 250.0}};
  std::vector<StaticCircle> cs;
  std::uniform_real_distribution<double> x(-100.0, 300.0), y(50.0, 250.0);
  for (int i = 0; i < 500; ++i) cs.push_back({x(rng), y(rng), 1.0});
  cs.push_back({300.0, 250.0, 1.0});  // on the max corner: the last cell
  const StaticGrid g(world, 32.0, cs);
  CHECK(g.cols() == 13);  // ceil(400 / 32)
  CHECK(g.rows() == 7);   // ceil(200 / 32)
  std::vector<int> seen(cs.size(), 0);
  for (std::uint32_t r = 0; r < g.rows(); ++r) {
    for (std::uint32_t c = 0; c < g.cols(); ++c) {
      const auto in = g.cell(c, r);
      CHECK(std::is_sorted(in.begin(), in.end()));
      for (const std::uint32_t i : in) {
        ++seen[i];
        CHECK(g.cell_of(cs[i].x, cs[i].y) == r * g.cols() + c);
      }
    }
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  CHECK(g.cell_of(300.0, 250.0) == g.cell_count() - 1);
  CHECK(g.cell(g.cols(), 0).empty());  // beyond the grid: nothing
}

// The map loader (config, which may not use the AOI) bounds the collision lists' entries
// with util::ChunkGrid::touched; it must count what the grid files.
TEST_CASE("static grid: ChunkGrid::touched counts the cells the grid files a circle under") {
  std::mt19937_64 rng(11);
  const Bounds world{{-100.0, 50.0}, {300.0, 250.0}};
  std::uniform_real_distribution<double> x(-150.0, 350.0), y(0.0, 300.0), r(0.0, 120.0);
  for (const double size : {7.0, 32.0, 64.0, 500.0}) {
    const zone::util::ChunkGrid cells{world.min.x, world.min.y, world.max.x, world.max.y, size};
    for (int i = 0; i < 400; ++i) {
      const StaticCircle c{x(rng), y(rng), r(rng)};
      CHECK(cells.touched(c.x, c.y, c.radius) == StaticGrid::cells_touched(world, size, c));
    }
    // On the max corner, and reaching past every edge.
    CHECK(cells.touched(300.0, 250.0, 0.0) ==
          StaticGrid::cells_touched(world, size, {300.0, 250.0, 0.0}));
    CHECK(cells.touched(100.0, 150.0, 1.0e6) ==
          StaticGrid::cells_touched(world, size, {100.0, 150.0, 1.0e6}));
  }
}

TEST_CASE("static grid: blocked agrees with brute force, large circles across cells included") {
  std::mt19937_64 rng(5);
  const Bounds world{{0.0, 0.0}, {200.0, 200.0}};
  std::vector<StaticCircle> cs = random_circles(rng, 300, 200.0, 20.0);
  cs.push_back({150.0, 40.0, 70.0});  // one huge one, across dozens of cells and the edge
  const StaticGrid g(world, 16.0, cs);
  std::uniform_real_distribution<double> p(-10.0, 210.0);
  int blocked = 0;
  for (int i = 0; i < 20000; ++i) {
    const Vec2 q{p(rng), p(rng)};
    const bool want = inside_any(cs, q);
    REQUIRE(g.blocked(q) == want);
    blocked += want ? 1 : 0;
  }
  CHECK(blocked > 1000);
  // The rim is outside (strict), and so are non-finite points.
  const StaticGrid one(world, 16.0, std::vector<StaticCircle>{{50.0, 50.0, 5.0}});
  CHECK_FALSE(one.blocked({55.0, 50.0}));
  CHECK(one.blocked({54.999, 50.0}));
  CHECK_FALSE(one.blocked({NAN, 50.0}));
}

TEST_CASE("static grid: a resolved move is never inside and never longer than asked") {
  std::mt19937_64 rng(7);
  const Bounds world{{0.0, 0.0}, {100.0, 100.0}};
  const std::vector<StaticCircle> cs = random_circles(rng, 120, 100.0, 4.0);
  const StaticGrid g(world, 8.0, cs);
  std::uniform_real_distribution<double> p(0.0, 100.0), angle(0.0, 6.283185307179586),
      len(0.0, 0.5);
  int slid = 0, stopped = 0, free_moves = 0, tried = 0;
  for (int i = 0; i < 50000; ++i) {
    Vec2 from{p(rng), p(rng)};
    if (g.blocked(from)) continue;
    ++tried;
    const double a = angle(rng), l = len(rng);
    const Vec2 to{from.x + std::cos(a) * l, from.y + std::sin(a) * l};
    const Vec2 end = g.resolve(from, to);
    REQUIRE_FALSE(inside_any(cs, end));
    REQUIRE(std::hypot(end.x - from.x, end.y - from.y) <= l + 1e-9);
    if (end.x == to.x && end.y == to.y) {
      ++free_moves;
      CHECK_FALSE(inside_any(cs, to));
    } else if (end.x == from.x && end.y == from.y) {
      ++stopped;
    } else {
      ++slid;
    }
  }
  CHECK(free_moves > 1000);
  CHECK(slid > 100);  // along a rim
  // Every move was one of the three (a stop is rare here: the head-on case below makes
  // one on purpose).
  CHECK(free_moves + slid + stopped == tried);
}

TEST_CASE("static grid: walking straight at a rock slides round it, never through") {
  const Bounds world{{0.0, 0.0}, {100.0, 100.0}};
  const std::vector<StaticCircle> rock{{50.0, 50.0, 3.0}};
  const StaticGrid g(world, 16.0, rock);
  // Aimed a little off centre: the walker slides along the rim and gets past.
  Vec2 at{40.0, 50.2};
  bool past = false;
  for (int t = 0; t < 400 && !past; ++t) {
    const Vec2 next = g.resolve(at, {at.x + 0.35, at.y});
    CHECK(std::hypot(next.x - 50.0, next.y - 50.0) >= 3.0);
    at = next;
    past = at.x > 53.5;
  }
  CHECK(past);
  // Dead on: it stops at the rim (no sideways push from the exact centre line).
  Vec2 head_on{40.0, 50.0};
  for (int t = 0; t < 100; ++t) head_on = g.resolve(head_on, {head_on.x + 0.35, head_on.y});
  CHECK(head_on.x <= 47.0 + 1e-6);
  CHECK(head_on.x > 46.0);
}

namespace {

// The segment ab passes strictly inside a circle: brute force over every circle.
bool segment_hits_any(const std::vector<StaticCircle>& cs, Vec2 a, Vec2 b) {
  return std::any_of(cs.begin(), cs.end(), [&](const StaticCircle& c) {
    const double dx = b.x - a.x, dy = b.y - a.y;
    const double len2 = dx * dx + dy * dy;
    const double t =
        len2 > 0.0 ? std::clamp(((c.x - a.x) * dx + (c.y - a.y) * dy) / len2, 0.0, 1.0) : 0.0;
    return std::hypot(a.x + t * dx - c.x, a.y + t * dy - c.y) < c.radius;
  });
}

}  // namespace

TEST_CASE("static grid: segment_blocked agrees with brute force over short and long segments") {
  std::mt19937_64 rng(11);
  const Bounds world{{0.0, 0.0}, {400.0, 300.0}};
  std::vector<StaticCircle> cs = random_circles(rng, 120, 300.0, 6.0);
  cs.push_back({380.0, 20.0, 40.0});  // across cells and the world's edge
  const StaticGrid g(world, 16.0, cs);
  std::uniform_real_distribution<double> p(-5.0, 405.0), q(-5.0, 305.0), near(-30.0, 30.0);
  int blocked = 0, clear = 0;
  for (int i = 0; i < 20000; ++i) {
    const Vec2 a{p(rng), q(rng)};
    // Half long (across the world), half short (a shot's range), some axis-aligned.
    Vec2 b = i % 2 == 0 ? Vec2{p(rng), q(rng)} : Vec2{a.x + near(rng), a.y + near(rng)};
    if (i % 7 == 0) b.y = a.y;
    if (i % 11 == 0) b.x = a.x;
    const bool want = segment_hits_any(cs, a, b);
    REQUIRE(g.segment_blocked(a, b) == want);
    (want ? blocked : clear) += 1;
  }
  CHECK(blocked > 1000);
  CHECK(clear > 1000);
}

TEST_CASE("static grid: segment_blocked at the rim, for a point, without circles, and for NaN") {
  const Bounds world{{0.0, 0.0}, {200.0, 200.0}};
  const StaticGrid one(world, 16.0, std::vector<StaticCircle>{{50.0, 50.0, 5.0}});
  CHECK(one.segment_blocked({40.0, 50.0}, {60.0, 50.0}));        // straight through
  CHECK_FALSE(one.segment_blocked({40.0, 55.0}, {60.0, 55.0}));  // along the rim: touching
  CHECK(one.segment_blocked({40.0, 54.9}, {60.0, 54.9}));
  CHECK_FALSE(one.segment_blocked({40.0, 50.0}, {44.0, 50.0}));  // stops short
  CHECK_FALSE(one.segment_blocked({10.0, 10.0}, {10.0, 10.0}));
  CHECK(one.segment_blocked({10.0, 10.0}, {NAN, 10.0}));
  const StaticGrid none(world, 16.0, std::vector<StaticCircle>{});
  CHECK_FALSE(none.segment_blocked({0.0, 0.0}, {200.0, 200.0}));
}
