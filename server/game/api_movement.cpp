// The game API, movement: where an entity is, steering NPCs (the world moves them every
// tick), holding and freezing, teleporting, and random free points.
#include <cmath>
#include <exception>

#include "game/api.hpp"
#include "game/api_util.hpp"

namespace zone::game {
namespace {

using api::world_of;

// game.position(e) -> x, y (metres)
int l_position(lua_State* L) {
  const std::uint32_t slot = api::check_entity(L, 1, "game.position");
  const world::Entity& e = world_of(L).entity(slot);
  lua_pushnumber(L, e.x);
  lua_pushnumber(L, e.y);
  return 2;
}

// game.heading(e) -> radians from +x, the direction it faces
int l_heading(lua_State* L) {
  const std::uint32_t slot = api::check_entity(L, 1, "game.heading");
  lua_pushnumber(L, world_of(L).entity(slot).heading);
  return 1;
}

// game.move_to(npc, x, y, speed): the world walks the NPC there (see World::steer_npc).
int l_move_to(lua_State* L) {
  const char* fn = "game.move_to";
  const std::uint32_t slot = api::check_npc(L, 1, fn);
  const double x = api::check_finite(L, 2, fn, "x");
  const double y = api::check_finite(L, 3, fn, "y");
  const double speed = api::check_finite(L, 4, fn, "speed");
  if (speed < 0.0) api::refuse(L, "%s: argument 4 (speed): negative", fn);
  world_of(L).steer_npc(slot, x, y, speed);
  return 0;
}

// game.stop(npc): it stands still, its behaviour off, until game.release or game.move_to.
int l_stop(lua_State* L) {
  world_of(L).hold_npc(api::check_npc(L, 1, "game.stop"));
  return 0;
}

// game.release(npc): its configured behaviour (npcs.behaviour) drives it again.
int l_release(lua_State* L) {
  world_of(L).release_npc(api::check_npc(L, 1, "game.release"));
  return 0;
}

// game.freeze(e, frozen): a frozen player ignores its movement input, a frozen NPC
// stands; both stop at once.
int l_freeze(lua_State* L) {
  const std::uint32_t slot = api::check_owned(L, 1, "game.freeze");
  if (lua_type(L, 2) != LUA_TBOOLEAN) {
    api::refuse(L, "game.freeze: argument 2: expected a boolean, got %s", luaL_typename(L, 2));
  }
  world_of(L).set_frozen(slot, lua_toboolean(L, 2) != 0);
  return 0;
}

// game.frozen(e) -> boolean
int l_frozen(lua_State* L) {
  const std::uint32_t slot = api::check_entity(L, 1, "game.frozen");
  lua_pushboolean(L, world_of(L).entity(slot).frozen ? 1 : 0);
  return 1;
}

// game.teleport(e, x, y) -> boolean: false (nothing moved) when the point is outside the
// zone or inside a static object, or the entity is being handed to a neighbour zone.
int l_teleport(lua_State* L) {
  const char* fn = "game.teleport";
  const std::uint32_t slot = api::check_owned(L, 1, fn);
  const double x = api::check_finite(L, 2, fn, "x");
  const double y = api::check_finite(L, 3, fn, "y");
  const bool moved = world_of(L).teleport(slot, x, y);
  if (!moved) api::count_refusal(L);
  lua_pushboolean(L, moved ? 1 : 0);
  return 1;
}

// game.random_point() -> x, y: a random point of the zone outside the static objects
// (the spawn rule), from the rules' seeded generator.
int l_random_point(lua_State* L) {
  RulesShared& shared = *api::state_of(L).shared;
  const world::World& w = shared.world;
  int failed = 0;
  aoi::Vec2 p{};
  try {
    p = w.free_point(shared.rng);
  } catch (const std::exception&) {
    failed = 1;  // a map with no free point: cannot happen with a loaded map
  }
  if (failed != 0) api::refuse(L, "game.random_point: no free point in this zone");
  lua_pushnumber(L, p.x);
  lua_pushnumber(L, p.y);
  return 2;
}

}  // namespace

std::optional<script::ScriptError> bind_movement_api(script::ScriptVm& vm, VmState* state) {
  static constexpr struct {
    const char* name;
    lua_CFunction fn;
  } kFunctions[] = {
      {"position", l_position}, {"heading", l_heading},   {"move_to", l_move_to},
      {"stop", l_stop},         {"release", l_release},   {"freeze", l_freeze},
      {"frozen", l_frozen},     {"teleport", l_teleport}, {"random_point", l_random_point}};
  for (const auto& f : kFunctions) {
    if (auto error = vm.register_function("game", f.name, f.fn, state)) return error;
  }
  return std::nullopt;
}

}  // namespace zone::game
