// Helpers of the bound functions (internal to server/game): reading and checking
// arguments, and refusing a call with a Lua error that names the calling handler's
// file:line. Lua raises with longjmp: nothing here holds an object with a destructor
// across a raise, and every raise counts as an API refusal first.
#pragma once

#include <lua.hpp>

#include <cstdint>

#include "game/rules_state.hpp"
#include "script/script_vm.hpp"

namespace zone::game::api {

inline VmState& state_of(lua_State* L) {
  return *static_cast<VmState*>(script::ScriptVm::upvalue(L));
}
inline world::World& world_of(lua_State* L) {
  return state_of(L).shared->world;
}

// Counts the refusal and raises "file:line: <message>" (lua_pushfstring's format: %s %d
// %I %f). Never returns.
[[noreturn]] int refuse(lua_State* L, const char* format, ...);
// Counts a refusal that returns nil or false instead of raising.
inline void count_refusal(lua_State* L) {
  ++state_of(L).shared->api_refusals;
}

// Argument `arg` as an entity of this zone (owned or a ghost): its slot.
std::uint32_t check_entity(lua_State* L, int arg, const char* fn);
// ... one this zone owns (the rules may change it).
std::uint32_t check_owned(lua_State* L, int arg, const char* fn);
// ... an NPC this zone owns.
std::uint32_t check_npc(lua_State* L, int arg, const char* fn);
// A finite number.
double check_finite(lua_State* L, int arg, const char* fn, const char* what);
// An integer (a float with an integral value too).
lua_Integer check_int(lua_State* L, int arg, const char* fn, const char* what);
// A game property by name: its index among the game's properties (0 = the schema's
// first game row).
std::size_t check_property(lua_State* L, int arg, const char* fn);
// An optional kind filter ("player", "npc", "any" or nil): 0 any, 1 players, 2 NPCs.
int check_kind_filter(lua_State* L, int arg, const char* fn);

}  // namespace zone::game::api
