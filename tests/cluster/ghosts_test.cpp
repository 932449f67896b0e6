// Ghosts in a zone's world: lists from a neighbour become read-only entities that the
// AOI and replication treat like any other; they leave when no longer listed or when
// their owner goes silent, and never move faster than the zone's bound.
#include <doctest/doctest.h>

#include <cmath>

#include "../replication/loopback.hpp"
#include "world/ghosts.hpp"

using namespace zone;
using namespace std::chrono_literals;
using test::Loopback;
using test::LoopClient;
using world::GhostState;

namespace {

// The neighbour's incarnation (its start time) in the tests that do not restart it.
constexpr std::uint64_t kEpoch = 1'700'000'000'000'000;
// Ticks a restarted source's new entities wait for (the replication history plus one).
constexpr std::uint32_t kIdReuseTicks = 4;

// This zone owns [0,200] x [0,200]; its neighbour (zone 1) owns the strip east of it.
world::WorldParams zone_params() {
  world::WorldParams p = test::small_world(0);
  p.ghost_margin = 40.0;
  return p;
}

GhostState ghost(world::EntityId local, double x, double y) {
  GhostState g;
  g.id = (1u << world::kLocalIdBits) | local;
  g.kind = world::EntityKind::kNpc;
  g.x = x;
  g.y = y;
  g.properties.type = 1;
  g.name = "npc-" + std::to_string(local);
  return g;
}

}  // namespace

TEST_CASE("ghosts: collect_near lists owned entities within the distance of a rectangle") {
  world::WorldParams p = test::small_world(200);
  world::World w(p);
  w.spawn_npcs();
  const aoi::Bounds east{{200.0, 0.0}, {400.0, 200.0}};
  std::vector<GhostState> near;
  world::collect_near(w, east, 40.0, near);
  std::size_t expected = 0;
  w.for_each_entity([&](std::uint32_t, const world::Entity& e) {
    if (e.x >= 160.0) ++expected;
  });
  CHECK(near.size() == expected);
  CHECK(expected > 10);
  for (const GhostState& g : near) CHECK(g.x >= 160.0);
}

TEST_CASE("ghosts: a list spawns, moves and removes ghosts, keeping ids and kinds") {
  world::World w(zone_params());
  world::Ghosts ghosts(w, kIdReuseTicks);
  const auto t0 = world::Ghosts::Clock::now();
  ghosts.apply(1, kEpoch, std::vector<GhostState>{ghost(1, 210, 50), ghost(2, 230, 60)}, t0);
  CHECK(ghosts.count() == 2);
  CHECK(w.ghost_count() == 2);
  CHECK(w.player_count() == 0);
  const world::Entity* e = w.find(ghost(1, 0, 0).id);
  REQUIRE(e != nullptr);
  CHECK(e->ghost);
  CHECK(e->x == 210.0);
  CHECK(e->name == "npc-1");
  // Ghost 2 is no longer listed: it stays where it was for the grace, then goes; ghost 1
  // moved a little.
  ghosts.apply(1, kEpoch, std::vector<GhostState>{ghost(1, 210.2, 50)}, t0 + 50ms);
  for (std::uint32_t t = 1; t < world::kUnlistedGraceTicks; ++t) {
    ghosts.follow(0.35);
    CHECK(ghosts.count() == 2);
    CHECK(w.find(ghost(2, 0, 0).id)->x == 230.0);
  }
  ghosts.follow(0.35);
  CHECK(ghosts.count() == 1);
  CHECK(w.find(ghost(2, 0, 0).id) == nullptr);
  CHECK(w.find(ghost(1, 0, 0).id)->x == doctest::Approx(210.2));
  CHECK(ghosts.stats().spawned == 2);
  CHECK(ghosts.stats().removed == 1);
  // step() never moves a ghost, whatever its velocity.
  GhostState fast = ghost(1, 210.2, 50);
  fast.vx = 5.0f;
  ghosts.apply(1, kEpoch, std::vector<GhostState>{fast}, t0 + 100ms);
  ghosts.follow(0.35);
  w.step(0.05);
  CHECK(w.find(fast.id)->x == doctest::Approx(210.2));
}

TEST_CASE("ghosts: a ghost follows a jump in its owner's reports at the speed bound") {
  world::World w(zone_params());
  world::Ghosts ghosts(w, kIdReuseTicks);
  const auto t0 = world::Ghosts::Clock::now();
  ghosts.apply(1, kEpoch, std::vector<GhostState>{ghost(1, 210, 50)}, t0);
  ghosts.apply(1, kEpoch, std::vector<GhostState>{ghost(1, 211, 50)}, t0);  // two reports, one tick
  ghosts.follow(0.35);
  CHECK(w.find(ghost(1, 0, 0).id)->x == doctest::Approx(210.35));
  ghosts.follow(0.35);
  ghosts.follow(0.35);
  ghosts.follow(0.35);
  CHECK(w.find(ghost(1, 0, 0).id)->x == doctest::Approx(211.0));
}

TEST_CASE("ghosts: a silent source loses all its ghosts after the timeout, others stay") {
  world::World w(zone_params());
  world::Ghosts ghosts(w, kIdReuseTicks);
  const auto t0 = world::Ghosts::Clock::now();
  ghosts.apply(1, kEpoch, std::vector<GhostState>{ghost(1, 210, 50), ghost(2, 220, 50)}, t0);
  GhostState other = ghost(1, 100, 210);
  other.id = (2u << world::kLocalIdBits) | 1;
  ghosts.apply(2, kEpoch, std::vector<GhostState>{other}, t0 + 900ms);
  ghosts.expire(t0 + 999ms, 1000ms);
  CHECK(ghosts.count() == 3);
  ghosts.expire(t0 + 1001ms, 1000ms);
  CHECK(ghosts.count() == 1);
  CHECK(ghosts.sources() == 1);
  CHECK(ghosts.stats().expired == 2);
  CHECK(w.find(other.id) != nullptr);
}

TEST_CASE("ghosts: an id this zone already uses is refused, never duplicated") {
  world::World w(zone_params());
  const std::uint32_t own = w.spawn_player("p");
  world::Ghosts ghosts(w, kIdReuseTicks);
  GhostState clash = ghost(1, 210, 50);
  clash.id = w.entity(own).id;
  ghosts.apply(1, kEpoch, std::vector<GhostState>{clash}, world::Ghosts::Clock::now());
  CHECK(ghosts.count() == 0);
  // An entity this zone owns: counted apart (a player just handed over here is still on
  // its old zone's lists until that zone learns so).
  CHECK(ghosts.stats().owned_here == 1);
  CHECK(ghosts.stats().rejected == 0);
  CHECK(w.find(clash.id)->kind == world::EntityKind::kPlayer);
}

TEST_CASE("ghosts: an entity handed over between two neighbours stays one entity here") {
  world::World w(zone_params());
  world::Ghosts ghosts(w, kIdReuseTicks);
  const auto t0 = world::Ghosts::Clock::now();
  GhostState g = ghost(7, 210, 60);
  ghosts.apply(1, kEpoch, std::vector<GhostState>{g}, t0);
  REQUIRE(ghosts.count() == 1);
  const std::uint32_t slot = w.find(g.id)->aoi.index;
  CHECK(ghosts.owner(g.id) == 1u);
  CHECK(ghosts.count_from(1) == 1);
  SUBCASE("the new owner's list comes first") {
    g.x = 210.3;
    ghosts.apply(2, kEpoch, std::vector<GhostState>{g}, t0 + 50ms);
    ghosts.apply(1, kEpoch, std::vector<GhostState>{}, t0 + 50ms);
  }
  SUBCASE("the old owner's list without it comes first") {
    ghosts.apply(1, kEpoch, std::vector<GhostState>{}, t0 + 50ms);
    ghosts.follow(0.35);
    ghosts.follow(0.35);
    g.x = 210.3;
    ghosts.apply(2, kEpoch, std::vector<GhostState>{g}, t0 + 150ms);
  }
  for (int t = 0; t < 10; ++t) {
    ghosts.apply(2, kEpoch, std::vector<GhostState>{g}, t0 + 200ms + t * 50ms);
    ghosts.apply(1, kEpoch, std::vector<GhostState>{}, t0 + 200ms + t * 50ms);
    ghosts.follow(0.35);
  }
  // The same slot all along: no despawn, no spawn, nobody sees it blink.
  REQUIRE(w.find(g.id) != nullptr);
  CHECK(w.find(g.id)->aoi.index == slot);
  CHECK(w.find(g.id)->x == doctest::Approx(210.3));
  CHECK(ghosts.count() == 1);
  CHECK(ghosts.stats().rehomed == 1);
  CHECK(ghosts.stats().removed == 0);
  CHECK(ghosts.stats().spawned == 1);
  // It follows its new owner's lists now: that zone owns it, as far as this one knows.
  CHECK(ghosts.owner(g.id) == 2u);
  CHECK(ghosts.count_from(1) == 0);
  CHECK(ghosts.count_from(2) == 1);
  // Its new owner stops listing it: it goes after the grace.
  for (std::uint32_t t = 0; t < world::kUnlistedGraceTicks; ++t) {
    ghosts.apply(2, kEpoch, std::vector<GhostState>{}, t0 + 1s);
    ghosts.follow(0.35);
  }
  CHECK(w.find(g.id) == nullptr);
  CHECK(ghosts.stats().removed == 1);
  CHECK_FALSE(ghosts.owner(g.id).has_value());
}

TEST_CASE("ghosts: a restarted source's old ghosts go at once - its old lists are refused") {
  world::World w(zone_params());
  world::Ghosts ghosts(w, kIdReuseTicks);
  const auto t0 = world::Ghosts::Clock::now();
  const GhostState before = ghost(1, 210, 50);
  REQUIRE(ghosts.apply(1, kEpoch, std::vector<GhostState>{before, ghost(2, 220, 50)}, t0));
  REQUIRE(ghosts.count() == 2);
  // Restarted: its entity 1 is now something else, elsewhere. The first list of the new
  // epoch only clears the old ghosts...
  GhostState after = ghost(1, 230, 150);
  after.name = "reborn";
  CHECK(ghosts.apply(1, kEpoch + 5'000'000, std::vector<GhostState>{after}, t0 + 50ms));
  CHECK(ghosts.count() == 0);
  CHECK(ghosts.stats().restarted == 2);
  CHECK(ghosts.stats().expired == 0);
  // ...a list the old process sent before it died, delivered late, is refused...
  CHECK_FALSE(ghosts.apply(1, kEpoch, std::vector<GhostState>{before}, t0 + 60ms));
  CHECK(ghosts.count() == 0);
  CHECK(ghosts.stats().stale_lists == 1);
  // ...the new epoch's lists wait until no client can hold a frame with the old entity
  // as a baseline (id_reuse_ticks ticks)...
  for (std::uint32_t t = 0; t + 1 < kIdReuseTicks; ++t) {
    ghosts.follow(1.0);
    CHECK(ghosts.apply(1, kEpoch + 5'000'000, std::vector<GhostState>{after}, t0 + 100ms));
    CHECK(w.find(after.id) == nullptr);
  }
  ghosts.follow(1.0);
  // ...and the next list of the new epoch then brings the new entity, where it is.
  CHECK(ghosts.apply(1, kEpoch + 5'000'000, std::vector<GhostState>{after}, t0 + 100ms));
  REQUIRE(w.find(after.id) != nullptr);
  CHECK(w.find(after.id)->x == 230.0);
  CHECK(w.find(after.id)->name == "reborn");
  CHECK(ghosts.stats().spawned == 3);
}

TEST_CASE("ghosts: clients see ghosts enter, move and leave by the usual rules") {
  world::WorldParams p = zone_params();
  Loopback lb(p, test::rparams(64000));
  LoopClient& a = lb.connect("alice");
  world::World& w = lb.world;
  // Put alice at the east border (steer her there at full speed).
  for (int t = 0; t < 400; ++t) {
    const world::Entity& me = w.entity(a.slot);
    const double dx = 195.0 - me.x, dy = 100.0 - me.y;
    const double len = std::hypot(dx, dy);
    if (len < 0.5) {
      w.set_intent(a.slot, 0, 0);
      break;
    }
    w.set_intent(a.slot, dx / std::max(1.0, len), dy / std::max(1.0, len));
    lb.step();
  }
  world::Ghosts ghosts(w, kIdReuseTicks);
  const auto t0 = world::Ghosts::Clock::now();
  GhostState g = ghost(1, 215, 100);  // 20 m away, across the border
  // Its properties as its owner has them (the game's health and max_health).
  g.properties.assign(std::vector<std::int32_t>{77, 120});
  for (int t = 0; t < 40; ++t) {
    g.x = 215.0 + 0.1 * t;
    ghosts.apply(1, kEpoch, std::vector<GhostState>{g}, t0 + t * 50ms);
    ghosts.follow(0.35);
    lb.step();
  }
  CHECK(lb.diff(a).empty());
  CHECK(a.replica.find(g.id) != nullptr);
  CHECK(a.replica.info(g.id)->name == g.name);
  CHECK(a.replica.find(g.id)->values[test::kHealth] == 77);
  CHECK(a.replica.find(g.id)->values[test::kHealth + 1] == 120);
  // Its owner stops listing it: it leaves alice's view.
  for (int t = 0; t < 5; ++t) {
    ghosts.apply(1, kEpoch, std::vector<GhostState>{}, t0 + 2s);
    ghosts.follow(0.35);
    lb.step();
  }
  CHECK(a.replica.find(g.id) == nullptr);
  CHECK(lb.diff(a).empty());
  CHECK(a.replica.violations().empty());

  // It comes back; then its owner restarts and the same id is a new entity 8 m away: alice
  // sees the old one leave and the new one arrive, never one entity jumping.
  for (int t = 0; t < 10; ++t) {
    ghosts.apply(1, kEpoch, std::vector<GhostState>{g}, t0 + 3s + t * 50ms);
    ghosts.follow(0.35);
    lb.step();
  }
  REQUIRE(a.replica.find(g.id) != nullptr);
  const std::uint64_t leaves = a.replica.leaves();
  GhostState reborn = g;
  reborn.y += 8.0;
  for (int t = 0; t < 10; ++t) {
    ghosts.apply(1, kEpoch + 1, std::vector<GhostState>{reborn}, t0 + 4s + t * 50ms);
    ghosts.follow(0.35);
    lb.step();
  }
  CHECK(a.replica.leaves() > leaves);
  REQUIRE(a.replica.find(g.id) != nullptr);
  CHECK(a.replica.find(g.id)->y() == protocol::quantize_position(reborn.y));
  CHECK(lb.diff(a).empty());
  CHECK_MESSAGE(a.replica.violations().empty(), test::violations_of(a));
}
