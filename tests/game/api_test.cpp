// The game API, function by function: what each returns, and each refusal as an error of
// the calling handler with its file:line (or a nil / false where documented), counted.
#include <doctest/doctest.h>

#include <cmath>

#include "game_fixture.hpp"

using namespace zone;
using game::test::GameFixture;
using protocol::ActionStatus;

namespace {

// Test scripts run their checks in on_action: `emote` carries a number, the case.
std::vector<script::ScriptFile> one(const std::string& path, const std::string& source) {
  return {{path, source}};
}

}  // namespace

TEST_CASE("api: entities - exists, kind, type, name, owned, get, set") {
  GameFixture fx(one("api.lua", R"(
function on_action(p, action, target, case)
  local npc = target
  assert(game.exists(p) and game.exists(npc))
  assert(not game.exists(0) and not game.exists(123456) and not game.exists("x"))
  assert(not game.exists(-1) and not game.exists(1.5))
  assert(game.kind(p) == "player" and game.kind(npc) == "npc")
  assert(game.type(p) == "player" and game.type(npc) == "bandit")
  assert(game.name(p) == "alice")
  assert(game.owned(p) and game.owned(npc))
  assert(game.get(npc, "health") == 120 and game.get(npc, "level") == 4)
  assert(math.type(game.get(p, "xp")) == "integer")
  game.set(npc, "health", 7)
  assert(game.get(npc, "health") == 7)
  game.set(p, "xp", 4000000000)          -- u32: above 2^31, read back unsigned
  assert(game.get(p, "xp") == 4000000000)
  game.set(p, "level", 255)
  game.set(p, "state", true)             -- a boolean is 1
  assert(game.get(p, "state") == 1)
  game.set(p, "health", 3.0)             -- a float with an integral value
  assert(game.get(p, "health") == 3)
end
)"));
  const std::uint32_t p = fx.player_at(20.0, 20.0, "alice");
  const std::uint32_t npc = fx.npc_at(25.0, 20.0, "bandit");
  REQUIRE_MESSAGE(fx.act(p, "emote", fx.id(npc), {0}) == ActionStatus::Ok, fx.all_errors());
  CHECK(fx.get(npc, "health") == 7);
  CHECK(static_cast<std::uint32_t>(fx.get(p, "xp")) == 4000000000u);
  CHECK(fx.get(p, "level") == 255);
  CHECK(fx.rules.stats().api_refusals == 0);
}

TEST_CASE(
    "api: movement - position, heading, move_to, stop, release, freeze, teleport, random_point") {
  GameFixture fx(one("move.lua", R"(
function on_action(p, action, target, case)
  local npc = target
  if case == 0 then
    local x, y = game.position(p)
    assert(x == 20 and y == 30, x .. "," .. y)
    assert(game.heading(p) == 0)
    game.move_to(npc, 60, 30, 5)
    assert(not game.frozen(p))
    game.freeze(p, true)
    assert(game.frozen(p))
    assert(game.teleport(p, 100, 100))
    assert(not game.teleport(p, 500, 100))      -- outside the zone: false
    local rx, ry = game.random_point()
    assert(rx >= 0 and rx <= 200 and ry >= 0 and ry <= 200)
  elseif case == 1 then
    game.stop(npc)
  elseif case == 2 then
    game.release(npc)
    game.freeze(p, false)
  end
end
)"));
  const std::uint32_t p = fx.player_at(20.0, 30.0);
  const std::uint32_t npc = fx.npc_at(40.0, 30.0);
  REQUIRE_MESSAGE(fx.act(p, "emote", fx.id(npc), {0}) == ActionStatus::Ok, fx.all_errors());
  CHECK(fx.world.entity(p).x == 100.0);
  CHECK(fx.world.entity(p).frozen);
  CHECK(fx.rules.stats().api_refusals == 1);  // the teleport outside
  fx.step(20);                                // 1 s at 5 m/s
  CHECK(fx.world.entity(npc).x == doctest::Approx(45.0));
  REQUIRE(fx.act(p, "emote", fx.id(npc), {1}) == ActionStatus::Ok);
  fx.step(5);
  CHECK(fx.world.entity(npc).x == doctest::Approx(45.0));
  CHECK(fx.world.npc_control(npc) == world::NpcControl::kHold);
  REQUIRE(fx.act(p, "emote", fx.id(npc), {2}) == ActionStatus::Ok);
  CHECK(fx.world.npc_control(npc) == world::NpcControl::kBehaviour);
  CHECK_FALSE(fx.world.entity(p).frozen);
}

TEST_CASE("api: spawn and despawn NPCs") {
  GameFixture fx(one("spawn.lua", R"(
ROCK_X = 50
function on_action(p, action, target, case)
  if case == 0 then
    local id = game.spawn("wolf", 30, 30)
    assert(math.type(id) == "integer" and game.type(id) == "wolf")
    local x, y = game.position(id)
    assert(x == 30 and y == 30)
    assert(game.spawn("wolf", 50, 50) == nil)   -- inside the rock
    assert(game.spawn("bandit", 300, 50) == nil)  -- outside the zone
    SPAWNED = id
  else
    game.despawn(SPAWNED)
    assert(not game.exists(SPAWNED))
  end
end
)"),
                 game::test::game_world_params({{1, world::StaticKind::kRock, 50.0, 50.0, 4.0}}));
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  REQUIRE_MESSAGE(fx.act(p, "emote", 0, {0}) == ActionStatus::Ok, fx.all_errors());
  CHECK(fx.world.npc_count() == 1);
  CHECK(fx.rules.stats().api_refusals == 2);
  REQUIRE_MESSAGE(fx.act(p, "emote", 0, {1}) == ActionStatus::Ok, fx.all_errors());
  CHECK(fx.world.npc_count() == 0);
}

TEST_CASE("api: emit puts an event about the entity into the tick's log") {
  GameFixture fx(one("emit.lua", R"(
function on_action(p, action, target, case)
  assert(game.emit(target, "hit", p, 17, 1))
  assert(game.emit(p, "respawn"))
  assert(game.emit(p, "emote", 0, 3))
end
)"));
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  const std::uint32_t npc = fx.npc_at(12.0, 10.0);
  REQUIRE_MESSAGE(fx.act(p, "emote", fx.id(npc), {0}) == ActionStatus::Ok, fx.all_errors());
  const auto hits = fx.of_kind("hit");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].route == world::EventRoute::kEntity);
  CHECK(hits[0].entity == fx.id(npc));
  CHECK(hits[0].target == fx.id(p));
  REQUIRE(hits[0].arg_count == 2);
  CHECK(hits[0].args[0] == 17);
  CHECK(hits[0].args[1] == 1);
  REQUIRE(fx.of_kind("respawn").size() == 1);
  CHECK(fx.of_kind("respawn")[0].arg_count == 0);
  CHECK(fx.of_kind("emote")[0].args[0] == 3);
}

TEST_CASE("api: emit past the tick's event limit returns false and drops the event") {
  GameFixture fx(one("flood.lua", R"(
function on_action(p)
  local sent = 0
  for i = 1, 10 do if game.emit(p, "respawn") then sent = sent + 1 end end
  return sent == 4 or ("sent " .. sent)
end
)"));
  fx.world.events().set_max_per_tick(4);
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  CHECK_MESSAGE(fx.act(p, "emote", 0, {0}) == ActionStatus::Ok, fx.all_errors());
  CHECK(fx.world.events().dropped() == 6);
}

TEST_CASE(
    "api: queries - within (nearest first, bounded, by kind), within_point, distance, "
    "line_of_sight") {
  GameFixture fx(std::vector<script::ScriptFile>{},
                 game::test::game_world_params({{1, world::StaticKind::kRock, 10.0, 40.0, 3.0}}));
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  const std::uint32_t near_npc = fx.npc_at(12.0, 10.0);
  const std::uint32_t other = fx.player_at(10.0, 15.0, "o");
  const std::uint32_t far_npc = fx.npc_at(10.0, 22.0);
  const std::uint32_t far_player = fx.player_at(10.0, 25.0, "f");
  const std::uint32_t behind = fx.player_at(10.0, 60.0, "b");
  static_cast<void>(far_npc);
  // The globals the script reads.
  const auto reloaded =
      fx.rules.reload({{"ids.lua", "NEAR_NPC = " + std::to_string(fx.id(near_npc)) +
                                       "; OTHER = " + std::to_string(fx.id(other)) +
                                       "; FAR_PLAYER = " + std::to_string(fx.id(far_player)) +
                                       "; BEHIND_ROCK = " + std::to_string(fx.id(behind))},
                       {"query.lua", R"(
function on_action(p, action, target, case)
  local all = game.within(p, 20)
  assert(#all == 4, #all)
  assert(all[1] == NEAR_NPC and all[4] == FAR_PLAYER)   -- nearest first; p itself excluded
  local players = game.within(p, 20, "player")
  assert(#players == 2 and players[1] == OTHER and players[2] == FAR_PLAYER)
  local npcs = game.within(p, 20, "npc", 1)
  assert(#npcs == 1 and npcs[1] == NEAR_NPC)
  assert(#game.within(p, 1) == 0)
  local here = game.within_point(10, 10, 0.5)
  assert(#here == 1 and here[1] == p)
  assert(math.abs(game.distance(p, FAR_PLAYER) - 15) < 1e-9)
  assert(game.line_of_sight(p, OTHER))
  assert(not game.line_of_sight(p, BEHIND_ROCK))
end
)"}});
  REQUIRE_FALSE(reloaded.has_value());
  CHECK_MESSAGE(fx.act(p, "emote", 0, {0}) == ActionStatus::Ok, fx.all_errors());
}

TEST_CASE("api: time - now and tick follow the zone's ticks") {
  GameFixture fx(one("time.lua", R"(
function on_action(p, action, target, case)
  return (game.tick() == case and math.abs(game.now() - case * 0.05 - 0.05) < 1e-9)
      or ("tick " .. game.tick() .. " now " .. game.now())
end
)"));
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  fx.step(7);  // ticks 0 .. 6; now 0.35 s
  CHECK_MESSAGE(fx.act(p, "emote", 0, {6}) == ActionStatus::Ok, fx.all_errors());
}

TEST_CASE("api: every bad argument is an error of the calling handler, with its file:line") {
  GameFixture fx(one("bad.lua", R"(
CASES = {
  function(p, npc) game.get(999999, "health") end,                 -- 3
  function(p, npc) game.get(p, "healt") end,                       -- 4
  function(p, npc) game.get(p, "x") end,                           -- 5: an engine row
  function(p, npc) game.set(p, "health", 70000) end,               -- 6
  function(p, npc) game.set(p, "health", -1) end,                  -- 7
  function(p, npc) game.set(p, "health", 1.5) end,                 -- 8
  function(p, npc) game.set(p, "health", "10") end,                -- 9
  function(p, npc) game.move_to(p, 1, 1, 1) end,                   -- 10: not an NPC
  function(p, npc) game.move_to(npc, 0/0, 1, 1) end,               -- 11
  function(p, npc) game.move_to(npc, 1, 1, math.huge) end,         -- 12
  function(p, npc) game.emit(p, "hti") end,                        -- 13
  function(p, npc) game.emit(p, "hit", npc, 1, 2, 3) end,          -- 14
  function(p, npc) game.emit(p, "chat") end,                       -- 15
  function(p, npc) game.within(p, -1) end,                         -- 16
  function(p, npc) game.within(p, 10, "rock") end,                 -- 17
  function(p, npc) game.within(p, 10, nil, 1000) end,              -- 18
  function(p, npc) game.spawn("player", 10, 10) end,               -- 19
  function(p, npc) game.spawn("dragon", 10, 10) end,               -- 20
  function(p, npc) game.after(-1, function() end) end,             -- 21
  function(p, npc) game.after(1, "later") end,                     -- 22
  function(p, npc) game.think(npc, -3) end,                        -- 23
  function(p, npc) game.distance(p, {}) end,                       -- 24
  function(p, npc) game.despawn(p) end,                            -- 25
  function(p, npc) game.freeze(p, 1) end,                          -- 26
  function(p, npc) game.teleport(p, 1, math.huge) end,             -- 27
  function(p, npc) game.position("p") end,                         -- 28
}
function on_action(p, action, target, case) CASES[case](p, target) end
)"));
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  const std::uint32_t npc = fx.npc_at(12.0, 10.0);
  const std::string expected[] = {
      "bad.lua:3: game.get: argument 1: no entity 999999 in this zone",
      "bad.lua:4: game.get: argument 2: 'healt' is not a property of this game",
      "bad.lua:5: game.get: argument 2: 'x' is not a property of this game",
      "bad.lua:6: game.set: 70000 is out of range for 'health' (0 .. 65535)",
      "bad.lua:7: game.set: -1 is out of range for 'health' (0 .. 65535)",
      "bad.lua:8: game.set: argument 3 (value): expected an integer, got a fraction",
      "bad.lua:9: game.set: argument 3 (value): expected an integer, got string",
      "bad.lua:10: game.move_to: argument 1: entity",
      "bad.lua:11: game.move_to: argument 2 (x): not a finite number",
      "bad.lua:12: game.move_to: argument 4 (speed): not a finite number",
      "bad.lua:13: game.emit: argument 2: 'hti' is not an event of this game",
      "bad.lua:14: game.emit: event 'hit' takes 2 arguments, given 3",
      "bad.lua:15: game.emit: event 'chat' carries a text",
      "bad.lua:16: game.within: argument 2 (radius): -1",
      "bad.lua:17: game.within: argument 3: expected \"player\", \"npc\", \"any\" or nil",
      "bad.lua:18: game.within: argument 4 (max): 1000 is not within 1 .. 256",
      "bad.lua:19: game.spawn: argument 1: 'player' is not an NPC type of this game",
      "bad.lua:20: game.spawn: argument 1: 'dragon' is not an NPC type of this game",
      "bad.lua:21: game.after: argument 1 (seconds): -1",
      "bad.lua:22: game.after: argument 2: expected a function, got string",
      "bad.lua:23: game.think: argument 2 (radius): -3",
      "bad.lua:24: game.distance: argument 2: expected an entity id, got table",
      "bad.lua:25: game.despawn: argument 1: entity",
      "bad.lua:26: game.freeze: argument 2: expected a boolean, got number",
      "bad.lua:27: game.teleport: argument 3 (y): not a finite number",
      "bad.lua:28: game.position: argument 1: expected an entity id, got string",
  };
  int n = 0;
  for (const std::string& want : expected) {
    ++n;
    CAPTURE(n);
    fx.errors.clear();
    CHECK(fx.act(p, "emote", fx.id(npc), {n}) == ActionStatus::RulesFailed);
    REQUIRE(fx.errors.size() == 1);
    CHECK_MESSAGE(fx.errors[0].rfind(want, 0) == 0, fx.errors[0]);
  }
  CHECK(fx.rules.stats().api_refusals == static_cast<std::uint64_t>(n));
  // Nothing was changed by the refused calls.
  CHECK(fx.get(p, "health") == 100);
  CHECK(fx.world.entity(p).live());
}
