// GameRules itself: handlers and their rates, timers and their order, budgets (a script
// that loops or allocates without bound costs only its handler), hot reload, and
// determinism.
#include <doctest/doctest.h>

#include <string>

#include "game_fixture.hpp"

using namespace zone;
using game::test::GameFixture;
using protocol::ActionStatus;

namespace {

std::vector<script::ScriptFile> one(const std::string& path, const std::string& source) {
  return {{path, source}};
}

}  // namespace

TEST_CASE("rules: on_join, on_leave and on_tick at the rules' rate") {
  GameFixture fx(one("handlers.lua", R"(
ticks, joined, left = 0, 0, 0
function on_join(p) joined = joined + 1; print("join", game.name(p)) end
function on_leave(p, handed_over) assert(handed_over == true); left = left + 1 end
function on_tick(dt)
  ticks = ticks + 1
  assert(math.abs(dt - 0.2) < 1e-9, dt)          -- 5 Hz
  assert(game.tick() % 4 == 0, game.tick())
end
function on_action() return joined == 1 and left == 1 and ticks == 5 or "not_allowed" end
)"),
                 game::test::game_world_params(), 5.0);
  const std::uint32_t p = fx.player_at(10.0, 10.0, "alice");
  const std::uint32_t q = fx.player_at(20.0, 10.0, "bob");
  fx.rules.player_leaving(q, /*handed_over=*/true);
  fx.world.despawn(q);
  fx.step(20);
  CHECK_MESSAGE(fx.act(p, "emote", 0, {1}) == ActionStatus::NotAllowed, fx.all_errors());
  REQUIRE(fx.printed.size() == 2);
  // At 20 Hz (the zone's rate) on_tick runs every tick: 5 more in 5 ticks.
  fx.rules.set_tick_hz(20.0);
  fx.rules.reload(one("count.lua", R"(
ticks = 0
function on_tick(dt) ticks = ticks + 1; assert(math.abs(dt - 0.05) < 1e-9) end
function on_action() return ticks == 5 or ("ticks " .. ticks) end
)"));
  fx.step(5);
  CHECK_MESSAGE(fx.act(p, "emote", 0, {1}) == ActionStatus::Ok, fx.all_errors());
  CHECK(fx.printed[0] == "join\talice");
  fx.rules.player_leaving(q);  // not a live player any more: ignored
}

TEST_CASE("rules: on_action's answers map to statuses, anything else is NotAllowed and counted") {
  GameFixture fx(one("answers.lua", R"(
ANSWERS = {nil, true, "out_of_range", "cooldown", "dead", "no_line_of_sight", "not_allowed",
           "no_target", "bad_arguments", "sideways", 42, false}
function on_action(p, action, target, i) return ANSWERS[i] end
)"));
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  const ActionStatus expected[] = {
      ActionStatus::Ok,         ActionStatus::Ok,         ActionStatus::OutOfRange,
      ActionStatus::Cooldown,   ActionStatus::Dead,       ActionStatus::NoLineOfSight,
      ActionStatus::NotAllowed, ActionStatus::NoTarget,   ActionStatus::BadArguments,
      ActionStatus::NotAllowed, ActionStatus::NotAllowed, ActionStatus::NotAllowed};
  for (int i = 0; i < 12; ++i) {
    CAPTURE(i);
    CHECK(fx.act(p, "emote", 0, {i + 1}) == expected[i]);
  }
  CHECK(fx.rules.stats().bad_answers == 3);
}

TEST_CASE("rules: without rules or without on_action, every action is NotAllowed") {
  GameFixture fx(std::vector<script::ScriptFile>{});
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  CHECK(fx.act(p, "attack", 0) == ActionStatus::NotAllowed);
  fx.step(3);
  CHECK(fx.errors.empty());
  // A slot that is no live player of the zone.
  CHECK(fx.rules.act({.player_slot = 9999, .action = 0, .target = 0, .args = {}}) ==
        ActionStatus::NotAllowed);
}

TEST_CASE("rules: timers can be cancelled, are counted, and do not outlive a reload") {
  GameFixture fx(one("timers.lua", R"(
function on_action(p, action, target, case)
  game.after(0.1, function() end)
  local d = game.after(0.1, function() error("cancelled: never runs") end)
  assert(game.cancel(d) and not game.cancel(d) and not game.cancel(12345))
  game.after(60, function() end)
end
)"));
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  REQUIRE_MESSAGE(fx.act(p, "emote", 0, {1}) == ActionStatus::Ok, fx.all_errors());
  CHECK(fx.rules.stats().timers_pending == 2);
  fx.step(3);
  CHECK(fx.rules.stats().timers_fired == 1);
  CHECK(fx.rules.stats().timers_pending == 1);
  REQUIRE_FALSE(fx.rules.reload(one("next.lua", "function on_action() end")));
  CHECK(fx.rules.stats().timers_pending == 0);  // no state carries across a reload
  CHECK(fx.errors.empty());
}

TEST_CASE("rules: timers fire at tick boundaries in order of due time, then of creation") {
  GameFixture fx(one("timers.lua", R"(
fired = {}
local function note(name) return function() fired[#fired + 1] = name .. "@" .. game.tick() end end
function on_action(p, action, target, case)
  if case == 1 then
    game.after(0.2, note("b"))
    game.after(0.1, note("a"))
    game.after(0.2, note("c"))
    game.after(0, function() note("now")(); game.after(0, note("next")) end)
  else
    print(table.concat(fired, " "))
  end
end
)"));
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  REQUIRE(fx.act(p, "emote", 0, {1}) == ActionStatus::Ok);
  fx.step(6);  // ticks 0..5, now 0.05 .. 0.30
  REQUIRE(fx.act(p, "emote", 0, {2}) == ActionStatus::Ok);
  REQUIRE(fx.printed.size() == 1);
  CHECK(fx.printed[0] == "now@0 next@1 a@1 b@3 c@3");
}

TEST_CASE("rules: a handler that loops for ever costs only itself, the next tick runs") {
  GameFixture fx(one("loop.lua", R"(
count = 0
function on_action(p, action, target, case)
  if case == 1 then while true do end end
  if case == 2 then local t = {} while true do t[#t + 1] = string.rep("x", 10000) end end
  count = count + 1
end
function on_tick() count = count + 1 end
)"));
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  CHECK(fx.act(p, "emote", 0, {1}) == ActionStatus::RulesFailed);
  REQUIRE(fx.errors.size() == 1);
  CHECK(fx.errors[0].rfind("loop.lua:4: instruction budget exceeded", 0) == 0);
  CHECK(fx.act(p, "emote", 0, {2}) == ActionStatus::RulesFailed);
  REQUIRE(fx.errors.size() == 2);
  // Lua raises its own memory errors without the message handler: the place is the
  // handler's first line (docs/scripting.md, Errors).
  CHECK_MESSAGE(fx.errors[1].find("loop.lua:3:") == 0, fx.errors[1]);
  CHECK(fx.errors[1].find("not enough memory") != std::string::npos);
  CHECK(fx.act(p, "emote", 0, {3}) == ActionStatus::Ok);
  fx.step(2);
  const game::RulesStats stats = fx.rules.stats();
  CHECK(stats.script.budget_exceeded == 1);
  CHECK(stats.script.memory_refusals > 0);
  CHECK(stats.script.errors == 2);
  CHECK(fx.errors.size() == 2);
}

TEST_CASE("rules: a tick's spent budget skips the rest of that tick's work, not the next's") {
  GameFixture fx(one("spend.lua", R"(
runs = 0
function spin() local i = 0 while i < 40000 do i = i + 1 end end
function on_action(p)
  for i = 1, 30 do game.after(0, function() runs = runs + 1; spin() end) end
end
)"));
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  REQUIRE(fx.act(p, "emote", 0, {1}) == ActionStatus::Ok);
  // Each timer spends over 100k instructions of the tick's 2M: about a dozen fit a tick,
  // the others wait for the next ticks instead of being dropped.
  fx.step(1);
  const std::uint64_t after_one = fx.rules.stats().timers_fired;
  CHECK(after_one >= 5);
  CHECK(after_one < 30);
  fx.step(10);
  CHECK(fx.rules.stats().timers_fired == 30);
  CHECK(fx.rules.stats().timers_pending == 0);
}

TEST_CASE("rules: a failed reload keeps the old rules and their state, with file:line") {
  GameFixture fx(one("v1.lua", R"(
version = 1
function on_action() return version == 1 or "not_allowed" end
)"));
  const std::uint32_t p = fx.player_at(10.0, 10.0);
  CHECK(fx.act(p, "emote", 0, {1}) == ActionStatus::Ok);
  auto error = fx.rules.reload(one("v2.lua", "version = 2\nfunction on_action( return end\n"));
  REQUIRE(error.has_value());
  CHECK(error->what().rfind("v2.lua:2:", 0) == 0);
  error = fx.rules.reload(one("v2.lua", "version = 2\nerror('refused at load')\n"));
  REQUIRE(error.has_value());
  CHECK(error->what() == "v2.lua:2: refused at load");
  error =
      fx.rules.reload(one("v2.lua", "version = 2\nfunction on_load() game.get(0, 'health') end\n"));
  REQUIRE(error.has_value());
  CHECK(error->what().rfind("v2.lua:2: game.get: argument 1: no entity 0", 0) == 0);
  CHECK(fx.act(p, "emote", 0, {1}) == ActionStatus::Ok);  // version 1 still
  CHECK(fx.rules.stats().reload_failures == 3);
  REQUIRE_FALSE(fx.rules.reload(one("v2.lua", "function on_action() return 'cooldown' end")));
  CHECK(fx.act(p, "emote", 0, {1}) == ActionStatus::Cooldown);
  CHECK(fx.rules.stats().reloads == 1);
  // A bad file at start-up is an exception with its place.
  world::World w(game::test::game_world_params());
  game::RulesParams params;
  params.files = one("start.lua", "x = = 1");
  CHECK_THROWS_WITH_AS(game::GameRules(w, params), doctest::Contains("start.lua:1:"),
                       std::runtime_error);
}

TEST_CASE("rules: a reload meets the NPCs again, the sample game reloads onto itself") {
  GameFixture fx(game::test::sample_scripts(), game::test::game_world_params(), 5.0);
  const std::uint32_t wolf = fx.npc_at(100.0, 100.0);
  const std::uint32_t p = fx.player_at(100.0, 108.0);
  fx.step(8);
  REQUIRE(fx.get(wolf, "target") == fx.id(p));
  REQUIRE_FALSE(fx.rules.reload(game::test::sample_scripts()));
  CHECK(fx.rules.stats().thinking_npcs == 0);
  fx.step(1);  // on_npc_init again: the chase restarts from idle
  CHECK(fx.rules.stats().thinking_npcs == 1);
  fx.step(8);
  CHECK(fx.get(wolf, "target") == fx.id(p));
  CHECK(fx.errors.empty());
}

namespace {

// A small battle: players and NPCs of the sample game, players attacking whoever is
// nearest, for 30 s. Returns every event, as text.
std::string battle(std::int64_t seed) {
  GameFixture fx(game::test::sample_scripts(), game::test::game_world_params(), 5.0, seed);
  std::vector<std::uint32_t> players;
  for (int i = 0; i < 8; ++i) {
    players.push_back(
        fx.player_at(60.0 + 10.0 * (i % 4), 60.0 + 10.0 * (i / 4), "p" + std::to_string(i)));
    fx.npc_at(62.0 + 10.0 * (i % 4), 63.0 + 10.0 * (i / 4), i % 2 == 0 ? "wolf" : "bandit");
  }
  std::vector<aoi::EntityHandle> near;
  for (int t = 0; t < 600; ++t) {
    for (std::size_t i = 0; i < players.size(); ++i) {
      const world::Entity& e = fx.world.entity(players[i]);
      near.clear();
      fx.world.aoi().query_radius({e.x, e.y}, 25.0, near);
      for (const aoi::EntityHandle h : near) {
        if (h.index == players[i]) continue;
        fx.act(players[i], t % 3 == 0 ? "shoot" : "attack", fx.world.entity(h.index).id);
        break;
      }
      if (t % 50 == 0) fx.act(players[i], "respawn");
    }
    fx.step();
  }
  std::string out;
  for (const world::WorldEvent& e : fx.events) {
    out += std::to_string(e.sequence) + ":" + std::to_string(e.kind) + ":" +
           std::to_string(e.entity) + ">" + std::to_string(e.target);
    for (const std::int32_t a : e.arg_span()) out += "," + std::to_string(a);
    out += " ";
  }
  CHECK(fx.errors.empty());
  return out;
}

}  // namespace

TEST_CASE("rules: two runs with the same seed give the same events") {
  const std::string a = battle(7);
  const std::string b = battle(7);
  CHECK(a.size() > 1000);  // a real fight: hits, deaths, respawns
  CHECK(a.find(":2:") != std::string::npos);
  CHECK(a == b);
}

TEST_CASE("rules: the NPCs are met once, at the first tick or on arrival from a neighbour") {
  GameFixture fx(one("meet.lua", R"(
met = {}
function on_npc_init(npc) met[#met + 1] = npc end
function on_action() print(table.concat(met, ",")) end
)"));
  const std::uint32_t a = fx.npc_at(10.0, 10.0);
  const std::uint32_t b = fx.npc_at(20.0, 10.0);
  const std::uint32_t p = fx.player_at(50.0, 50.0);
  fx.step(3);
  const std::uint32_t c = fx.npc_at(30.0, 10.0);
  fx.rules.npc_arrived(c);
  fx.rules.npc_arrived(p);  // not an NPC: ignored
  fx.step(2);
  REQUIRE(fx.act(p, "emote", 0, {1}) == ActionStatus::Ok);
  REQUIRE(fx.printed.size() == 1);
  CHECK(fx.printed[0] ==
        std::to_string(fx.id(a)) + "," + std::to_string(fx.id(b)) + "," + std::to_string(fx.id(c)));
}
