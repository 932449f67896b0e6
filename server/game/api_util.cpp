#include "game/api_util.hpp"

#include <cmath>
#include <cstdarg>
#include <string_view>

namespace zone::game::api {

int refuse(lua_State* L, const char* format, ...) {
  ++state_of(L).shared->api_refusals;
  luaL_where(L, 1);  // the calling handler's "file:line:"
  va_list args;
  va_start(args, format);
  lua_pushvfstring(L, format, args);
  va_end(args);
  lua_concat(L, 2);
  lua_error(L);
  __builtin_unreachable();  // lua_error longjmps
}

namespace {

lua_Integer entity_id_arg(lua_State* L, int arg, const char* fn) {
  int is_integer = 0;
  const lua_Integer id = lua_tointegerx(L, arg, &is_integer);
  if (is_integer == 0 || lua_type(L, arg) != LUA_TNUMBER) {
    refuse(L, "%s: argument %d: expected an entity id, got %s", fn, arg, luaL_typename(L, arg));
  }
  return id;
}

}  // namespace

std::uint32_t check_entity(lua_State* L, int arg, const char* fn) {
  const lua_Integer id = entity_id_arg(L, arg, fn);
  const world::Entity* e =
      id > 0 && id <= 0xFFFFFFFF ? world_of(L).find(static_cast<world::EntityId>(id)) : nullptr;
  if (e == nullptr) refuse(L, "%s: argument %d: no entity %I in this zone", fn, arg, id);
  return e->aoi.index;
}

std::uint32_t check_owned(lua_State* L, int arg, const char* fn) {
  const std::uint32_t slot = check_entity(L, arg, fn);
  const world::Entity& e = world_of(L).entity(slot);
  if (e.ghost) {
    refuse(L, "%s: argument %d: entity %I belongs to another zone (read only here)", fn, arg,
           static_cast<lua_Integer>(e.id));
  }
  return slot;
}

std::uint32_t check_npc(lua_State* L, int arg, const char* fn) {
  const std::uint32_t slot = check_owned(L, arg, fn);
  const world::Entity& e = world_of(L).entity(slot);
  if (e.kind != world::EntityKind::kNpc) {
    refuse(L, "%s: argument %d: entity %I is a player, not an NPC", fn, arg,
           static_cast<lua_Integer>(e.id));
  }
  return slot;
}

double check_finite(lua_State* L, int arg, const char* fn, const char* what) {
  int is_number = 0;
  const lua_Number v = lua_tonumberx(L, arg, &is_number);
  if (is_number == 0 || lua_type(L, arg) != LUA_TNUMBER) {
    refuse(L, "%s: argument %d (%s): expected a number, got %s", fn, arg, what,
           luaL_typename(L, arg));
  }
  if (!std::isfinite(v)) refuse(L, "%s: argument %d (%s): not a finite number", fn, arg, what);
  return v;
}

lua_Integer check_int(lua_State* L, int arg, const char* fn, const char* what) {
  int is_integer = 0;
  const lua_Integer v = lua_tointegerx(L, arg, &is_integer);
  if (is_integer == 0 || lua_type(L, arg) != LUA_TNUMBER) {
    refuse(L, "%s: argument %d (%s): expected an integer, got %s", fn, arg, what,
           lua_type(L, arg) == LUA_TNUMBER ? "a fraction or a non-finite number"
                                           : luaL_typename(L, arg));
  }
  return v;
}

std::size_t check_property(lua_State* L, int arg, const char* fn) {
  if (lua_type(L, arg) != LUA_TSTRING) {
    refuse(L, "%s: argument %d: expected a property name, got %s", fn, arg, luaL_typename(L, arg));
  }
  std::size_t length = 0;
  const char* name = lua_tolstring(L, arg, &length);
  const protocol::Schema& schema = world_of(L).game().schema;
  const auto row = schema.find_field(std::string_view(name, length));
  if (!row || *row < protocol::kEngineFieldCount) {
    refuse(L, "%s: argument %d: '%s' is not a property of this game (configs/game/*.yaml)", fn, arg,
           name);
  }
  return *row - protocol::kEngineFieldCount;
}

int check_kind_filter(lua_State* L, int arg, const char* fn) {
  if (lua_isnoneornil(L, arg)) return 0;
  if (lua_type(L, arg) == LUA_TSTRING) {
    const std::string_view kind = lua_tostring(L, arg);
    if (kind == "any") return 0;
    if (kind == "player") return 1;
    if (kind == "npc") return 2;
  }
  return refuse(L, "%s: argument %d: expected \"player\", \"npc\", \"any\" or nil", fn, arg);
}

}  // namespace zone::game::api
