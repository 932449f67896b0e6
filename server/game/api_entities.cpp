// The game API, entities: whether one exists, its kind, type and name, its properties
// by name, and spawning and despawning NPCs.
#include <cmath>
#include <string>

#include "game/api.hpp"
#include "game/api_util.hpp"
#include "script/script_binding.hpp"

namespace zone::game {
namespace {

using api::world_of;

// game.exists(e) -> boolean: an entity of this zone (owned, or a ghost of a neighbour's).
int l_exists(lua_State* L) {
  int is_integer = 0;
  const lua_Integer id = lua_tointegerx(L, 1, &is_integer);
  const bool found = is_integer != 0 && lua_type(L, 1) == LUA_TNUMBER && id > 0 &&
                     id <= 0xFFFFFFFF &&
                     world_of(L).find(static_cast<world::EntityId>(id)) != nullptr;
  lua_pushboolean(L, found ? 1 : 0);
  return 1;
}

// game.kind(e) -> "player" | "npc"
int l_kind(lua_State* L) {
  const std::uint32_t slot = api::check_entity(L, 1, "game.kind");
  lua_pushstring(L, world_of(L).entity(slot).kind == world::EntityKind::kPlayer ? "player" : "npc");
  return 1;
}

// game.type(e) -> the entity type's name (configs/game/*.yaml types)
int l_type(lua_State* L) {
  const std::uint32_t slot = api::check_entity(L, 1, "game.type");
  const world::World& w = world_of(L);
  const auto types = w.game().schema.types();
  const std::uint16_t type = w.entity(slot).type;
  if (type < types.size()) {
    lua_pushlstring(L, types[type].name.data(), types[type].name.size());
  } else {
    lua_pushnil(L);
  }
  return 1;
}

// game.name(e) -> the player's character name, or the NPC's
int l_name(lua_State* L) {
  const std::uint32_t slot = api::check_entity(L, 1, "game.name");
  const std::string& name = world_of(L).entity(slot).name;
  lua_pushlstring(L, name.data(), name.size());
  return 1;
}

// game.owned(e) -> boolean: this zone owns it (the rules may change it); false for a
// neighbour's ghost.
int l_owned(lua_State* L) {
  const std::uint32_t slot = api::check_entity(L, 1, "game.owned");
  lua_pushboolean(L, world_of(L).entity(slot).ghost ? 0 : 1);
  return 1;
}

// The range a property's values take, as a client reads them.
void property_range(const protocol::FieldSpec& f, lua_Integer& lo, lua_Integer& hi) {
  if (f.is_signed) {
    lo = -(lua_Integer{1} << (f.bits - 1));
    hi = (lua_Integer{1} << (f.bits - 1)) - 1;
  } else {
    lo = 0;
    hi = (lua_Integer{1} << f.bits) - 1;
  }
}

// game.get(e, property) -> integer
int l_get(lua_State* L) {
  const std::uint32_t slot = api::check_entity(L, 1, "game.get");
  const std::size_t property = api::check_property(L, 2, "game.get");
  const world::World& w = world_of(L);
  const std::int32_t stored = w.properties(slot)[property];
  const protocol::FieldSpec& f = w.game().schema.field(protocol::kEngineFieldCount + property);
  // Unsigned 32-bit values are held as int32: read them back unsigned.
  const lua_Integer value =
      f.is_signed ? lua_Integer{stored} : lua_Integer{static_cast<std::uint32_t>(stored)};
  lua_pushinteger(L, value);
  return 1;
}

// game.set(e, property, value): an integer (or a boolean: 1 / 0) within the property's
// range; an owned entity.
int l_set(lua_State* L) {
  const std::uint32_t slot = api::check_owned(L, 1, "game.set");
  const std::size_t property = api::check_property(L, 2, "game.set");
  lua_Integer value = 0;
  if (lua_type(L, 3) == LUA_TBOOLEAN) {
    value = lua_toboolean(L, 3) != 0 ? 1 : 0;
  } else {
    value = api::check_int(L, 3, "game.set", "value");
  }
  world::World& w = world_of(L);
  const protocol::FieldSpec& f = w.game().schema.field(protocol::kEngineFieldCount + property);
  lua_Integer lo = 0, hi = 0;
  property_range(f, lo, hi);
  if (value < lo || value > hi) {
    api::refuse(L, "game.set: %I is out of range for '%s' (%I .. %I)", value, f.name.c_str(), lo,
                hi);
  }
  w.set_property(slot, property, value);
  return 0;
}

// game.spawn(type, x, y [, heading]) -> id, or nil when the point is outside the zone or
// inside a static object.
int l_spawn(lua_State* L) {
  const char* fn = "game.spawn";
  if (lua_type(L, 1) != LUA_TSTRING) {
    api::refuse(L, "%s: argument 1: expected an entity type name, got %s", fn, luaL_typename(L, 1));
  }
  world::World& w = world_of(L);
  const char* name = lua_tostring(L, 1);
  const auto type = w.game().schema.find_type(name);
  if (!type || w.game().schema.types()[*type].kind != protocol::EntityKind::kNpc) {
    api::refuse(L, "%s: argument 1: '%s' is not an NPC type of this game", fn, name);
  }
  const double x = api::check_finite(L, 2, fn, "x");
  const double y = api::check_finite(L, 3, fn, "y");
  const double heading = lua_isnoneornil(L, 4) ? 0.0 : api::check_finite(L, 4, fn, "heading");
  if (!w.can_spawn()) api::refuse(L, "%s: this zone has used every entity id", fn);
  // Placing allocates (the name, the AOI's and the world's arrays).
  const std::uint32_t slot = script::guarded_call(L, [&](lua_State*) {
    return static_cast<int>(w.spawn_npc(static_cast<std::uint16_t>(*type), x, y, heading));
  });
  if (static_cast<std::uint32_t>(slot) == world::World::kNoSlot) {
    api::count_refusal(L);
    lua_pushnil(L);
    return 1;
  }
  lua_pushinteger(L, w.entity(slot).id);
  return 1;
}

// game.despawn(npc): removes an NPC this zone owns (players leave with their sessions).
int l_despawn(lua_State* L) {
  const std::uint32_t slot = api::check_npc(L, 1, "game.despawn");
  VmState& state = api::state_of(L);
  state.thinkers.stop(slot);
  world::World& w = world_of(L);
  return script::guarded_call(L, [&](lua_State*) {
    w.despawn(slot);
    return 0;
  });
}

}  // namespace

std::optional<script::ScriptError> bind_entity_api(script::ScriptVm& vm, VmState* state) {
  static constexpr struct {
    const char* name;
    lua_CFunction fn;
  } kFunctions[] = {{"exists", l_exists}, {"kind", l_kind},   {"type", l_type},
                    {"name", l_name},     {"owned", l_owned}, {"get", l_get},
                    {"set", l_set},       {"spawn", l_spawn}, {"despawn", l_despawn}};
  for (const auto& f : kFunctions) {
    if (auto error = vm.register_function("game", f.name, f.fn, state)) return error;
  }
  return std::nullopt;
}

}  // namespace zone::game
