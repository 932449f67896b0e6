// The sample game's NPCs (configs/game/npc.lua) over simulated ticks: they think only
// while a player is near, notice players within their aggro radius, chase, strike with a
// cooldown, leash back home and heal there, and come back after death.
#include <doctest/doctest.h>

#include <cmath>

#include "game_fixture.hpp"

using namespace zone;
using game::test::GameFixture;
using protocol::ActionStatus;

namespace {

// The zone at 20 Hz, the rules at 5 Hz.
GameFixture make() {
  return GameFixture(game::test::sample_scripts(), game::test::game_world_params(), 5.0);
}

double distance(const GameFixture& fx, std::uint32_t a, std::uint32_t b) {
  const world::Entity& ea = fx.world.entity(a);
  const world::Entity& eb = fx.world.entity(b);
  return std::hypot(ea.x - eb.x, ea.y - eb.y);
}

}  // namespace

TEST_CASE("npc: idle NPCs far from every player cost no Lua call") {
  GameFixture fx = make();
  for (int i = 0; i < 50; ++i) fx.npc_at(10.0 + 3.0 * i, 150.0);
  fx.player_at(100.0, 20.0);
  fx.step(100);
  const game::RulesStats stats = fx.rules.stats();
  CHECK(stats.thinking_npcs == 50);  // each marked by on_npc_init, with its aggro radius
  CHECK(stats.npc_thinks == 0);
  CHECK(fx.errors.empty());
}

TEST_CASE("npc: notices a player within its aggro radius, chases, strikes with a cooldown") {
  GameFixture fx = make();
  const std::uint32_t wolf = fx.npc_at(100.0, 100.0);
  const std::uint32_t p = fx.player_at(100.0, 115.0);  // 15 m: beyond the 12 m radius
  fx.step(40);
  CHECK(fx.get(wolf, "target") == 0);
  CHECK(fx.rules.stats().npc_thinks == 0);
  REQUIRE(fx.world.teleport(p, 100.0, 110.0));  // 10 m
  fx.world.update_aoi();
  fx.step(4);  // one rules period: every NPC thinks once
  CHECK(fx.get(wolf, "target") == fx.id(p));
  CHECK(fx.rules.stats().npc_thinks == 1);
  // It closes in (6 m/s) and strikes: 6 + its level (2), every 1.5 s.
  fx.step(40);
  CHECK(distance(fx, wolf, p) <= 2.5);
  const auto hits = fx.of_kind("hit");
  REQUIRE_FALSE(hits.empty());
  CHECK(hits[0].entity == fx.id(p));
  CHECK(hits[0].target == fx.id(wolf));
  CHECK(hits[0].args[0] == 8);
  const std::size_t first = fx.of_kind("hit").size();
  fx.step(60);  // 3 s: two more strikes
  CHECK(fx.of_kind("hit").size() == first + 2);
  CHECK(fx.get(p, "health") == 100 - 8 * static_cast<std::int64_t>(first + 2));
  CHECK(fx.errors.empty());
}

TEST_CASE("npc: an NPC that is hit turns on its attacker even beyond its aggro radius") {
  GameFixture fx = make();
  const std::uint32_t wolf = fx.npc_at(100.0, 100.0);
  const std::uint32_t p = fx.player_at(100.0, 120.0);  // 20 m
  fx.step(4);
  REQUIRE(fx.act(p, "shoot", fx.id(wolf)) == ActionStatus::Ok);
  CHECK(fx.get(wolf, "target") == fx.id(p));
  CHECK(fx.get(wolf, "health") == 52);
  fx.step(80);
  CHECK(distance(fx, wolf, p) <= 2.5);
}

TEST_CASE("npc: leashes back home beyond its leash, heals there, and is idle again") {
  GameFixture fx = make();
  const std::uint32_t wolf = fx.npc_at(100.0, 60.0);
  const std::uint32_t p = fx.player_at(100.0, 70.0);
  fx.step(4);
  REQUIRE(fx.get(wolf, "target") == fx.id(p));
  fx.world.set_property(wolf, 0, 30);  // health: hurt
  // The player runs north at 7 m/s; the wolf (6 m/s) falls behind and gives up once it
  // is 30 m from where the chase began.
  int gave_up = -1;
  for (int t = 0; t < 400 && gave_up < 0; ++t) {
    fx.world.set_intent(p, 0.0, 1.0);
    fx.step();
    if (fx.get(wolf, "target") == 0) gave_up = t;
  }
  REQUIRE(gave_up > 0);
  const world::Entity& w = fx.world.entity(wolf);
  CHECK(std::hypot(w.x - 100.0, w.y - 60.0) > 29.0);
  CHECK(fx.world.npc_control(wolf) == world::NpcControl::kSteer);
  fx.step(120);  // 6 s: back home (30 m at 6 m/s) and a think later
  CHECK(std::hypot(w.x - 100.0, w.y - 60.0) < 1.0);
  CHECK(fx.get(wolf, "health") == 60);
  CHECK(fx.world.npc_control(wolf) == world::NpcControl::kBehaviour);
  CHECK(fx.get(p, "health") == 100);  // never caught
  CHECK(fx.errors.empty());
}

TEST_CASE("npc: a killed NPC dies, lies a while, and a new one stands at its spawn point") {
  GameFixture fx = make();
  const std::uint32_t wolf = fx.npc_at(100.0, 100.0);
  const world::EntityId wolf_id = fx.id(wolf);
  const std::uint32_t p = fx.player_at(102.0, 100.0);
  fx.step(1);                          // the rules meet the wolf
  fx.world.set_property(wolf, 0, 10);  // health
  REQUIRE(fx.act(p, "attack", wolf_id) == ActionStatus::Ok);
  CHECK(fx.get(wolf, "state") == 1);
  CHECK(fx.world.entity(wolf).frozen);
  REQUIRE(fx.of_kind("death").size() == 1);
  CHECK(fx.of_kind("xp").at(0).args[0] == 20);  // the wolf's level 2
  CHECK(fx.get(p, "xp") == 20);
  fx.step(99);  // 4.95 s
  CHECK(fx.world.find(wolf_id) != nullptr);
  fx.step(2);
  CHECK(fx.world.find(wolf_id) == nullptr);
  CHECK(fx.world.npc_count() == 0);
  fx.step(300);  // 20 s after its death
  REQUIRE(fx.world.npc_count() == 1);
  std::uint32_t again = 0;
  fx.world.for_each_entity([&](std::uint32_t s, const world::Entity& e) {
    if (e.kind == world::EntityKind::kNpc) again = s;
  });
  CHECK(fx.id(again) != wolf_id);
  CHECK(fx.world.game().schema.types()[fx.world.entity(again).type].name == "wolf");
  CHECK(fx.get(again, "health") == 60);
  // It stands where the first one spawned, and the player next to it draws its aggro.
  fx.step(4);
  CHECK(fx.get(again, "target") == fx.id(p));
  CHECK(fx.errors.empty());
}
