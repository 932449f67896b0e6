// The sample game's combat (configs/game/combat.lua) through GameRules::act: melee and
// ranged attacks with their range, cooldown and line of sight, damage, death, experience
// and respawn.
#include <doctest/doctest.h>

#include "game_fixture.hpp"

using namespace zone;
using game::test::GameFixture;
using protocol::ActionStatus;

namespace {

void set(GameFixture& fx, std::uint32_t slot, const std::string& property, std::int64_t value) {
  const auto row = fx.world.game().schema.find_field(property);
  REQUIRE(row.has_value());
  fx.world.set_property(slot, *row - protocol::kEngineFieldCount, value);
}

}  // namespace

TEST_CASE("combat: a melee attack in range hits with the hit event's arguments, then cools down") {
  GameFixture fx;
  const std::uint32_t p = fx.player_at(50.0, 50.0, "p");
  const std::uint32_t q = fx.player_at(52.0, 50.0, "q");
  REQUIRE_MESSAGE(fx.act(p, "attack", fx.id(q)) == ActionStatus::Ok, fx.all_errors());
  const auto hits = fx.of_kind("hit");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].entity == fx.id(q));
  CHECK(hits[0].target == fx.id(p));
  REQUIRE(hits[0].arg_count == 2);
  CHECK(hits[0].args[0] == 12);  // MELEE.damage at level 1
  CHECK(hits[0].args[1] == 0);   // melee
  CHECK(fx.get(q, "health") == 88);
  CHECK(fx.get(p, "target") == fx.id(q));

  CHECK(fx.act(p, "attack", fx.id(q)) == ActionStatus::Cooldown);
  fx.step(19);  // 0.95 s
  CHECK(fx.act(p, "attack", fx.id(q)) == ActionStatus::Cooldown);
  fx.step(1);
  CHECK(fx.act(p, "attack", fx.id(q)) == ActionStatus::Ok);
  CHECK(fx.get(q, "health") == 76);
  CHECK(fx.of_kind("hit").size() == 2);
  CHECK(fx.errors.empty());
}

TEST_CASE("combat: out of range, no target, self, and the target rule") {
  GameFixture fx;
  const std::uint32_t p = fx.player_at(50.0, 50.0, "p");
  const std::uint32_t q = fx.player_at(54.0, 50.0, "q");
  CHECK(fx.act(p, "attack", fx.id(q)) == ActionStatus::OutOfRange);
  CHECK(fx.act(p, "attack", 0) == ActionStatus::NoTarget);
  CHECK(fx.act(p, "attack", 999999) == ActionStatus::NoTarget);
  CHECK(fx.act(p, "attack", fx.id(p)) == ActionStatus::NotAllowed);
  CHECK(fx.act(p, "shoot", fx.id(q)) == ActionStatus::Ok);  // 4 m: within 25
  CHECK(fx.of_kind("hit").at(0).args[0] == 8);
  CHECK(fx.of_kind("hit").at(0).args[1] == 1);  // ranged
  CHECK(fx.act(p, "shoot", fx.id(q)) == ActionStatus::Cooldown);
  // A refused attack starts no cooldown: melee is still ready once in reach.
  REQUIRE(fx.world.teleport(q, 52.0, 50.0));
  CHECK(fx.act(p, "attack", fx.id(q)) == ActionStatus::Ok);
  // An action the schema does not have.
  CHECK(fx.rules.act({.player_slot = p, .action = 200, .target = 0, .args = {}}) ==
        ActionStatus::UnknownAction);
  CHECK(fx.errors.empty());
}

// A player of a neighbour zone acting on this zone's NPC across the border (docs/world.md,
// "Actions across borders"): the rules get this zone's ghost of it as the actor. It hits
// with the same checks and cooldown; nothing of the ghost changes (its zone's), and only a
// remote request may name a ghost as the actor.
TEST_CASE(
    "combat: a remote actor (a neighbour's player, a ghost here) hits - and stays its zone's") {
  GameFixture fx;
  const std::uint32_t p = fx.player_at(10.0, 10.0, "p");
  const world::PropertyValues props = fx.world.property_values(p);
  const world::EntityId remote = world::first_entity_id(1) + 5;
  const std::uint32_t g = fx.world.spawn_ghost(remote, world::EntityKind::kPlayer, "remote", props);
  fx.world.set_ghost_state(g, 60.0, 50.0, 0.0, 0.0, 0.0, props);
  const std::uint32_t wolf = fx.npc_at(62.0, 50.0);
  fx.step();
  const auto attack = fx.world.game().schema.find_action("attack");
  REQUIRE(attack.has_value());
  const auto act = [&](std::uint32_t slot, world::EntityId target, bool remote_request) {
    const protocol::ActionStatus status =
        fx.rules.act({.player_slot = slot,
                      .action = static_cast<std::uint16_t>(*attack),
                      .target = target,
                      .args = {},
                      .remote = remote_request});
    fx.drain();
    return status;
  };
  const std::int64_t health = fx.get(wolf, "health");
  // A ghost is no local player, and a player of this zone no remote actor.
  CHECK(act(g, fx.id(wolf), false) == ActionStatus::NotAllowed);
  CHECK(act(p, fx.id(wolf), true) == ActionStatus::NotAllowed);
  REQUIRE_MESSAGE(act(g, fx.id(wolf), true) == ActionStatus::Ok, fx.all_errors());
  const auto hits = fx.of_kind("hit");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].entity == fx.id(wolf));
  CHECK(hits[0].target == remote);  // names its attacker
  CHECK(fx.get(wolf, "health") == health - 12);
  CHECK(act(g, fx.id(wolf), true) == ActionStatus::Cooldown);
  CHECK(fx.get(g, "target") == 0);  // the attacker's properties are its own zone's
  // Its emote would be an event about itself: its zone's to emit.
  const auto emote = fx.world.game().schema.find_action("emote");
  REQUIRE(emote.has_value());
  const std::int32_t wave = 1;
  CHECK(fx.rules.act({.player_slot = g,
                      .action = static_cast<std::uint16_t>(*emote),
                      .target = fx.id(wolf),
                      .args = std::span(&wave, 1),
                      .remote = true}) == ActionStatus::NotAllowed);
  // The wolf does not turn on an attacker in another zone (it could never reach it).
  fx.step(20);
  CHECK(fx.get(wolf, "target") == 0);
  // Its cooldown over (and forgotten), it strikes again.
  CHECK(act(g, fx.id(wolf), true) == ActionStatus::Ok);
  CHECK(fx.errors.empty());
}

TEST_CASE("combat: a shot needs line of sight through the static layer") {
  GameFixture fx(game::test::sample_scripts(),
                 game::test::game_world_params({{1, world::StaticKind::kRock, 60.0, 50.0, 2.0}}));
  const std::uint32_t p = fx.player_at(50.0, 50.0, "p");
  const std::uint32_t q = fx.player_at(70.0, 50.0, "q");  // the rock between them
  const std::uint32_t r = fx.player_at(70.0, 56.0, "r");  // clear of it
  CHECK(fx.act(p, "shoot", fx.id(q)) == ActionStatus::NoLineOfSight);
  CHECK(fx.get(q, "health") == 100);
  CHECK(fx.act(p, "shoot", fx.id(r)) == ActionStatus::Ok);
  CHECK(fx.get(r, "health") == 92);
  const std::uint32_t far = fx.player_at(50.0, 80.0, "far");  // 30 m
  fx.step(40);
  CHECK(fx.act(p, "shoot", fx.id(far)) == ActionStatus::OutOfRange);
}

TEST_CASE("combat: death freezes the victim, clears its target, tells the killer's experience") {
  GameFixture fx;
  const std::uint32_t p = fx.player_at(50.0, 50.0, "p");
  const std::uint32_t q = fx.player_at(52.0, 50.0, "q");
  set(fx, q, "health", 5);
  set(fx, q, "target", fx.id(p));
  set(fx, p, "xp", 95);
  REQUIRE_MESSAGE(fx.act(p, "attack", fx.id(q)) == ActionStatus::Ok, fx.all_errors());
  CHECK(fx.get(q, "health") == 0);
  CHECK(fx.get(q, "state") == 1);
  CHECK(fx.get(q, "target") == 0);
  CHECK(fx.world.entity(q).frozen);
  const auto deaths = fx.of_kind("death");
  REQUIRE(deaths.size() == 1);
  CHECK(deaths[0].entity == fx.id(q));
  CHECK(deaths[0].target == fx.id(p));
  const auto xp = fx.of_kind("xp");
  REQUIRE(xp.size() == 1);
  CHECK(xp[0].entity == fx.id(p));
  CHECK(xp[0].args[0] == 10);  // 10 per level of the victim
  CHECK(fx.get(p, "xp") == 105);
  CHECK(fx.get(p, "level") == 2);  // 100 experience points a level
  CHECK(fx.get(p, "max_health") == 110);
  // The order of the tick's events: the hit, the death, the experience.
  REQUIRE(fx.events.size() == 3);
  CHECK(fx.events[0].sequence < fx.events[1].sequence);
  CHECK(fx.events[1].kind == *fx.world.game().schema.find_event("death"));

  // The dead cannot act, and cannot be attacked; its movement input is ignored.
  CHECK(fx.act(q, "attack", fx.id(p)) == ActionStatus::Dead);
  CHECK(fx.act(q, "emote", 0, {1}) == ActionStatus::Dead);
  fx.step(20);
  CHECK(fx.act(p, "attack", fx.id(q)) == ActionStatus::Dead);
  fx.world.set_intent(q, 1.0, 0.0);
  fx.step(1);
  CHECK(fx.world.entity(q).x == 52.0);
}

TEST_CASE("combat: a dead player respawns when it asks, or by itself after RESPAWN_AFTER") {
  GameFixture fx;
  const std::uint32_t p = fx.player_at(50.0, 50.0, "p");
  const std::uint32_t q = fx.player_at(52.0, 50.0, "q");
  CHECK(fx.act(q, "respawn") == ActionStatus::NotAllowed);  // alive
  set(fx, q, "health", 1);
  REQUIRE(fx.act(p, "attack", fx.id(q)) == ActionStatus::Ok);
  REQUIRE(fx.get(q, "state") == 1);
  fx.step(3);
  REQUIRE_MESSAGE(fx.act(q, "respawn") == ActionStatus::Ok, fx.all_errors());
  CHECK(fx.get(q, "state") == 0);
  CHECK(fx.get(q, "health") == 100);
  CHECK_FALSE(fx.world.entity(q).frozen);
  REQUIRE(fx.of_kind("respawn").size() == 1);
  CHECK(fx.of_kind("respawn")[0].entity == fx.id(q));
  // Its automatic respawn was cancelled: nothing more happens in 10 s.
  fx.step(220);
  CHECK(fx.of_kind("respawn").size() == 1);

  // Dies again and waits.
  REQUIRE(fx.world.teleport(q, 52.0, 50.0));
  fx.world.update_aoi();
  set(fx, q, "health", 1);
  fx.step(40);
  REQUIRE(fx.act(p, "attack", fx.id(q)) == ActionStatus::Ok);
  REQUIRE(fx.get(q, "state") == 1);
  fx.step(199);  // 9.95 s
  CHECK(fx.get(q, "state") == 1);
  fx.step(2);
  CHECK(fx.get(q, "state") == 0);
  CHECK(fx.get(q, "health") == 100);
  CHECK(fx.of_kind("respawn").size() == 2);
  CHECK(fx.errors.empty());
}

TEST_CASE("combat: emotes take an emote number, optionally facing someone") {
  GameFixture fx;
  const std::uint32_t p = fx.player_at(50.0, 50.0, "p");
  const std::uint32_t q = fx.player_at(60.0, 50.0, "q");
  CHECK(fx.act(p, "emote", 0, {3}) == ActionStatus::Ok);
  CHECK(fx.act(p, "emote", fx.id(q), {4}) == ActionStatus::Ok);
  CHECK(fx.act(p, "emote", 0, {}) == ActionStatus::BadArguments);
  CHECK(fx.act(p, "emote", 0, {99}) == ActionStatus::BadArguments);
  CHECK(fx.act(p, "emote", 424242, {1}) == ActionStatus::NoTarget);
  const auto emotes = fx.of_kind("emote");
  REQUIRE(emotes.size() == 2);
  CHECK(emotes[0].args[0] == 3);
  CHECK(emotes[0].target == 0);
  CHECK(emotes[1].target == fx.id(q));
}

// docs/scripting.md's worked example, "Adding an ability from scratch".
TEST_CASE("combat: a heal restores an ally's health for mana, then cools down") {
  GameFixture fx;
  const std::uint32_t healer = fx.player_at(50.0, 50.0, "h");
  const std::uint32_t ally = fx.player_at(55.0, 50.0, "a");
  fx.world.set_property(ally, 0, 40);  // health
  CHECK(fx.act(healer, "heal", fx.id(ally)) == ActionStatus::Ok);
  CHECK(fx.get(ally, "health") == 65);
  CHECK(fx.get(healer, "mana") == 30);
  const auto healed = fx.of_kind("healed");
  REQUIRE(healed.size() == 1);
  CHECK(healed[0].entity == fx.id(ally));
  CHECK(healed[0].target == fx.id(healer));
  CHECK(healed[0].args[0] == 25);
  CHECK(fx.act(healer, "heal", fx.id(ally)) == ActionStatus::Cooldown);
  fx.step(80);  // 4 s
  CHECK(fx.act(healer, "heal", fx.id(ally)) == ActionStatus::Ok);
  CHECK(fx.get(ally, "health") == 90);
  // Without the mana, no heal; never above max_health.
  const auto mana = static_cast<std::size_t>(*fx.world.game().schema.find_field("mana") -
                                             protocol::kEngineFieldCount);
  fx.step(80);
  fx.world.set_property(healer, mana, 19);
  CHECK(fx.act(healer, "heal", fx.id(ally)) == ActionStatus::NotAllowed);
  fx.world.set_property(healer, mana, 20);
  CHECK(fx.act(healer, "heal", fx.id(ally)) == ActionStatus::Ok);
  CHECK(fx.get(ally, "health") == 100);
  CHECK(fx.of_kind("healed").back().args[0] == 10);
  CHECK(fx.get(healer, "mana") == 0);
  // Mana comes back: 10 every 5 s, at a phase of each player's own.
  fx.step(100);
  CHECK(fx.get(healer, "mana") == 10);
  fx.step(100);
  CHECK(fx.get(healer, "mana") == 20);
  CHECK(fx.act(healer, "heal", 0) == ActionStatus::NoTarget);
  CHECK(fx.errors.empty());
}

// docs/scripting.md's example of a typo in the heal: the error names the line.
TEST_CASE("combat: a typo in a rule is the action's error, with its file and line") {
  GameFixture fx;
  const std::uint32_t healer = fx.player_at(50.0, 50.0, "h");
  std::vector<script::ScriptFile> files = game::test::sample_scripts();
  const std::string right = "local mana = game.get(player, \"mana\")";
  const auto at = files[0].source.find(right);
  REQUIRE(at != std::string::npos);
  files[0].source.replace(at, right.size(), "local mana = game.get(player, \"mnaa\")");
  REQUIRE_FALSE(fx.rules.reload(files).has_value());  // it compiles: the typo shows at run time
  CHECK(fx.act(healer, "heal", fx.id(healer)) == ActionStatus::RulesFailed);
  REQUIRE(fx.errors.size() == 1);
  CHECK(fx.errors[0] ==
        "configs/game/combat.lua:161: game.get: argument 2: 'mnaa' is not a property of this "
        "game (configs/game/*.yaml)");
}
