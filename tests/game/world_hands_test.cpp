// The world's additions for the game rules (World::spawn_npc, steer_npc, hold_npc,
// release_npc, set_frozen, teleport): what each does to movement, and what each refuses.
#include <doctest/doctest.h>

#include <cmath>

#include "game_fixture.hpp"

using namespace zone;
using game::test::game_world_params;

namespace {

std::uint16_t type_of(const world::World& w, const char* name) {
  return static_cast<std::uint16_t>(*w.game().schema.find_type(name));
}

}  // namespace

TEST_CASE("world: spawn_npc places a typed NPC at a free point, with its type's defaults") {
  world::World w(game_world_params({{1, world::StaticKind::kRock, 50.0, 50.0, 5.0}}));
  const std::uint32_t slot = w.spawn_npc(type_of(w, "bandit"), 20.0, 30.0, 0.0);
  REQUIRE(slot != world::World::kNoSlot);
  const world::Entity& e = w.entity(slot);
  CHECK(e.kind == world::EntityKind::kNpc);
  CHECK(e.x == 20.0);
  CHECK(e.y == 30.0);
  CHECK(w.game().schema.types()[e.type].name == "bandit");
  CHECK(w.properties(slot)[0] == 120);  // health
  CHECK(e.name.rfind("bandit-", 0) == 0);
  CHECK(w.npc_count() == 1);
  // Inside a rock, outside the zone, a player type, a type that does not exist.
  CHECK(w.spawn_npc(type_of(w, "wolf"), 50.0, 52.0, 0.0) == world::World::kNoSlot);
  CHECK(w.spawn_npc(type_of(w, "wolf"), -1.0, 50.0, 0.0) == world::World::kNoSlot);
  CHECK(w.spawn_npc(type_of(w, "player"), 10.0, 10.0, 0.0) == world::World::kNoSlot);
  CHECK(w.spawn_npc(200, 10.0, 10.0, 0.0) == world::World::kNoSlot);
  CHECK(w.npc_count() == 1);
}

TEST_CASE("world: a steered NPC walks straight to its goal at its speed, arrives and stands") {
  world::World w(game_world_params());
  const std::uint32_t slot = w.spawn_npc(type_of(w, "wolf"), 10.0, 10.0, 0.0);
  REQUIRE(w.steer_npc(slot, 40.0, 50.0, 5.0));  // 50 m away
  CHECK(w.npc_control(slot) == world::NpcControl::kSteer);
  const double dt = 0.05;
  for (int t = 0; t < 199; ++t) {
    w.step(dt);
    w.update_aoi();
    const world::Entity& e = w.entity(slot);
    REQUIRE(std::hypot(e.x - 10.0, e.y - 10.0) == doctest::Approx(5.0 * dt * (t + 1)));
  }
  w.step(dt);
  CHECK(w.entity(slot).x == doctest::Approx(40.0));
  CHECK(w.entity(slot).y == doctest::Approx(50.0));
  w.step(dt);
  CHECK_FALSE(w.entity(slot).moving());
  // The speed is capped at the world's fastest (the AOI's displacement bound).
  REQUIRE(w.steer_npc(slot, 40.0, 150.0, 1000.0));
  const double y0 = w.entity(slot).y;
  w.step(dt);
  CHECK(w.entity(slot).y - y0 == doctest::Approx(w.max_speed() * dt));
  // A goal outside the zone is clamped into it.
  REQUIRE(w.steer_npc(slot, 40.0, 1e6, 7.0));
  for (int t = 0; t < 500; ++t) w.step(dt);
  CHECK(w.entity(slot).y == doctest::Approx(200.0));
}

TEST_CASE("world: hold stops an NPC, release gives it back to its behaviour") {
  world::WorldParams wp = game_world_params();
  wp.npcs.behaviour = world::NpcBehaviour::kWander;
  wp.npcs.idle_fraction = 0.0;
  world::World w(wp);
  const std::uint32_t slot = w.spawn_npc(type_of(w, "wolf"), 100.0, 100.0, 0.0);
  w.step(0.05);
  CHECK(w.entity(slot).moving());  // wanders
  REQUIRE(w.hold_npc(slot));
  const double x = w.entity(slot).x, y = w.entity(slot).y;
  for (int t = 0; t < 20; ++t) w.step(0.05);
  CHECK(w.entity(slot).x == x);
  CHECK(w.entity(slot).y == y);
  REQUIRE(w.release_npc(slot));
  CHECK(w.npc_control(slot) == world::NpcControl::kBehaviour);
  w.step(0.05);
  CHECK(w.entity(slot).moving());
}

TEST_CASE("world: a frozen player ignores its intents, a frozen NPC neither thinks nor moves") {
  world::World w(game_world_params());
  const std::uint32_t player = w.spawn_player("p");
  REQUIRE(w.teleport(player, 50.0, 50.0));
  w.set_intent(player, 1.0, 0.0);
  REQUIRE(w.set_frozen(player, true));
  CHECK_FALSE(w.entity(player).moving());
  w.set_intent(player, 1.0, 0.0);
  w.step(0.05);
  CHECK(w.entity(player).x == 50.0);
  REQUIRE(w.set_frozen(player, false));
  w.set_intent(player, 1.0, 0.0);
  w.step(0.05);
  CHECK(w.entity(player).x == doctest::Approx(50.0 + 7.0 * 0.05));

  const std::uint32_t npc = w.spawn_npc(type_of(w, "wolf"), 10.0, 10.0, 0.0);
  REQUIRE(w.steer_npc(npc, 100.0, 10.0, 5.0));
  REQUIRE(w.set_frozen(npc, true));
  w.step(0.05);
  CHECK(w.entity(npc).x == 10.0);
  REQUIRE(w.set_frozen(npc, false));
  w.step(0.05);
  CHECK(w.entity(npc).x > 10.0);
}

TEST_CASE("world: teleport moves at once to a free point inside the zone, and refuses others") {
  world::World w(game_world_params({{1, world::StaticKind::kRock, 50.0, 50.0, 5.0}}));
  const std::uint32_t player = w.spawn_player("p");
  CHECK(w.teleport(player, 150.0, 20.0));
  w.update_aoi();
  CHECK(w.entity(player).x == 150.0);
  std::vector<aoi::EntityHandle> near;
  w.aoi().query_radius({150.0, 20.0}, 1.0, near);
  CHECK(near.size() == 1);
  CHECK_FALSE(w.teleport(player, 51.0, 50.0));   // inside the rock
  CHECK_FALSE(w.teleport(player, 201.0, 50.0));  // outside the zone
  CHECK_FALSE(w.teleport(player, NAN, 50.0));
  CHECK(w.entity(player).x == 150.0);
  w.despawn(player);
  CHECK_FALSE(w.teleport(player, 10.0, 10.0));
  CHECK_FALSE(w.set_frozen(player, true));
  CHECK_FALSE(w.steer_npc(player, 1.0, 1.0, 1.0));
}

TEST_CASE("world: steering is refused for players, despawned NPCs and bad numbers") {
  world::World w(game_world_params());
  const std::uint32_t player = w.spawn_player("p");
  const std::uint32_t npc = w.spawn_npc(type_of(w, "wolf"), 10.0, 10.0, 0.0);
  CHECK_FALSE(w.steer_npc(player, 1.0, 1.0, 1.0));
  CHECK_FALSE(w.hold_npc(player));
  CHECK_FALSE(w.steer_npc(npc, NAN, 1.0, 1.0));
  CHECK_FALSE(w.steer_npc(npc, 1.0, 1.0, -1.0));
  // Despawning one NPC keeps the others' brains found by slot.
  const std::uint32_t other = w.spawn_npc(type_of(w, "wolf"), 30.0, 10.0, 0.0);
  w.despawn(npc);
  CHECK_FALSE(w.release_npc(npc));
  REQUIRE(w.steer_npc(other, 30.0, 20.0, 5.0));
  w.step(0.05);
  CHECK(w.entity(other).y > 10.0);
}
