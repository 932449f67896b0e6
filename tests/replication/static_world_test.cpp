// The static layer in the world (docs/architecture.md, "Static layer"): spawns avoid the
// objects, nothing that moves ever ends a tick inside one, no move is longer than the
// speed allows (the AOI's bound and the clients' jump check rely on it), and NPCs that
// walk into an object do not stay stuck against it.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "loopback.hpp"

using namespace zone;

namespace {

// Rocks of 1-6 m over a 200 m square (about 12% of it), clumped in places.
world::StaticParams rocky(std::uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> pos(0.0, 200.0), rad(1.0, 6.0);
  auto objects = std::make_shared<std::vector<world::StaticObject>>();
  for (int i = 0; i < count; ++i) {
    objects->push_back({static_cast<std::uint32_t>(i + 1), world::StaticKind::kRock, pos(rng),
                        pos(rng), rad(rng)});
  }
  return {objects, 16.0};
}

const world::StaticObject* inside(const world::World& w, double x, double y) {
  for (const world::StaticObject& o : w.statics()) {
    if (std::hypot(x - o.x, y - o.y) < o.radius) return &o;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("static world: spawns avoid objects - nothing ever ends a tick inside one") {
  for (const world::NpcBehaviour behaviour :
       {world::NpcBehaviour::kWander, world::NpcBehaviour::kPatrol}) {
    CAPTURE(static_cast<int>(behaviour));
    world::WorldParams wp = test::small_world(150, behaviour);
    wp.npcs.idle_fraction = 0.0;
    wp.npcs.patrol_length = 60.0;
    wp.statics = rocky(9, 120);
    world::World w(wp);
    w.spawn_npcs();
    std::vector<std::uint32_t> players;
    std::vector<test::Tour> tours;
    for (int i = 0; i < 12; ++i) {
      std::string name = "p";  // not "p" + ...: GCC 12 -O3 warns falsely (-Wrestrict)
      name += std::to_string(i);
      players.push_back(w.spawn_player(name));
      tours.push_back(test::square_tour(10.0 + i * 5.0, 190.0 - i * 5.0));
    }
    const double dt = 0.05;
    const double bound = std::max(wp.player_max_speed, wp.npcs.speed) * dt;
    std::map<std::uint32_t, std::pair<double, double>> last;
    std::map<std::uint32_t, int> still;  // ticks an entity that means to move has not
    int worst_still = 0;
    w.for_each_entity([&](std::uint32_t s, const world::Entity& e) {
      CHECK(inside(w, e.x, e.y) == nullptr);
      last[s] = {e.x, e.y};
    });
    for (int t = 0; t < 800; ++t) {
      for (std::size_t i = 0; i < players.size(); ++i) tours[i].steer(w, players[i]);
      w.step(dt);
      w.update_aoi();
      w.for_each_entity([&](std::uint32_t s, const world::Entity& e) {
        const world::StaticObject* o = inside(w, e.x, e.y);
        REQUIRE_MESSAGE(o == nullptr, "entity ", e.id, " inside object ", o->id, " at tick ", t);
        const auto [x0, y0] = last[s];
        const double moved = std::hypot(e.x - x0, e.y - y0);
        REQUIRE(moved <= bound + 1e-9);
        if (e.kind == world::EntityKind::kNpc) {
          still[s] = e.moving() && moved == 0.0 ? still[s] + 1 : 0;
          worst_still = std::max(worst_still, still[s]);
        }
        last[s] = {e.x, e.y};
      });
    }
    CHECK(w.collisions() > 100);
    // A stopped NPC turns back: none stays pressed against a rock.
    CHECK(worst_still <= 2);
  }
}

TEST_CASE("static world: without objects the world is as it always was") {
  world::WorldParams wp = test::small_world(50, world::NpcBehaviour::kWander);
  world::World plain(wp);
  wp.statics = {std::make_shared<std::vector<world::StaticObject>>(), 16.0};
  world::World empty_map(wp);
  plain.spawn_npcs();
  empty_map.spawn_npcs();
  const std::uint32_t a = plain.spawn_player("a"), b = empty_map.spawn_player("a");
  for (int t = 0; t < 200; ++t) {
    plain.set_intent(a, 1.0, 0.3);
    empty_map.set_intent(b, 1.0, 0.3);
    plain.step(0.05);
    empty_map.step(0.05);
  }
  plain.for_each_entity([&](std::uint32_t s, const world::Entity& e) {
    CHECK(e.x == empty_map.entity(s).x);
    CHECK(e.y == empty_map.entity(s).y);
  });
  CHECK(empty_map.collisions() == 0);
  CHECK(empty_map.static_grid().empty());
}
