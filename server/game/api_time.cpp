// The game API, time: the rules' clock, timers, and which NPCs think.
#include "game/api.hpp"
#include "game/api_util.hpp"
#include "script/script_binding.hpp"

namespace zone::game {
namespace {

constexpr double kMaxDelay = 86400.0;  // a day, in seconds
constexpr double kMaxThinkRadius = 1000.0;

// game.now() -> seconds since the rules started (the sum of the ticks' periods)
int l_now(lua_State* L) {
  lua_pushnumber(L, api::state_of(L).shared->now);
  return 1;
}

// game.tick() -> the zone's tick number
int l_tick(lua_State* L) {
  lua_pushinteger(L, api::state_of(L).shared->tick);
  return 1;
}

// game.after(seconds, fn) -> timer id: fn() runs at the first tick at least `seconds`
// from now (never in the tick that scheduled it), as a handler of its own.
int l_after(lua_State* L) {
  const char* fn = "game.after";
  const double seconds = api::check_finite(L, 1, fn, "seconds");
  if (seconds < 0.0 || seconds > kMaxDelay) {
    api::refuse(L, "%s: argument 1 (seconds): %f is not within 0 .. %f", fn, seconds, kMaxDelay);
  }
  if (lua_type(L, 2) != LUA_TFUNCTION) {
    api::refuse(L, "%s: argument 2: expected a function, got %s", fn, luaL_typename(L, 2));
  }
  VmState& state = api::state_of(L);
  lua_settop(L, 2);
  const int ref = luaL_ref(L, LUA_REGISTRYINDEX);  // pops fn
  const double due = state.shared->now + seconds;
  // The queue may grow (an allocation): guarded; the id is wider than its int result.
  script::guarded_call(L, [&](lua_State*) {
    state.last_timer = state.timers.add(due, ref);
    return 0;
  });
  const lua_Integer id = state.last_timer;
  if (id == 0) {
    luaL_unref(L, LUA_REGISTRYINDEX, ref);
    api::refuse(L, "%s: %d timers are pending already", fn,
                static_cast<int>(TimerQueue::kMaxPending));
  }
  lua_pushinteger(L, id);
  return 1;
}

// game.cancel(id) -> boolean: true when the timer was pending (it will not run).
int l_cancel(lua_State* L) {
  const lua_Integer id = api::check_int(L, 1, "game.cancel", "id");
  VmState& state = api::state_of(L);
  int ref = LUA_NOREF;
  const bool cancelled = state.timers.cancel(id, ref);
  if (cancelled) luaL_unref(L, LUA_REGISTRYINDEX, ref);
  lua_pushboolean(L, cancelled ? 1 : 0);
  return 1;
}

// game.think(npc, mode): true: on_npc_think(npc, dt) runs at the rules' rate; a radius
// (metres, > 0): the same, but only while a player this zone owns is that near; false or
// nil: never.
int l_think(lua_State* L) {
  const char* fn = "game.think";
  const std::uint32_t slot = api::check_npc(L, 1, fn);
  VmState& state = api::state_of(L);
  const world::EntityId id = state.shared->world.entity(slot).id;
  double radius = 0.0;
  if (lua_isnoneornil(L, 2) || (lua_type(L, 2) == LUA_TBOOLEAN && lua_toboolean(L, 2) == 0)) {
    state.thinkers.stop(slot);
    return 0;
  }
  if (lua_type(L, 2) != LUA_TBOOLEAN) {
    radius = api::check_finite(L, 2, fn, "radius");
    if (radius <= 0.0 || radius > kMaxThinkRadius) {
      api::refuse(L, "%s: argument 2 (radius): %f is not within (0, %f]", fn, radius,
                  kMaxThinkRadius);
    }
  }
  return script::guarded_call(L, [&](lua_State*) {
    state.thinkers.set(slot, id, radius);
    return 0;
  });
}

}  // namespace

std::optional<script::ScriptError> bind_time_api(script::ScriptVm& vm, VmState* state) {
  static constexpr struct {
    const char* name;
    lua_CFunction fn;
  } kFunctions[] = {{"now", l_now},
                    {"tick", l_tick},
                    {"after", l_after},
                    {"cancel", l_cancel},
                    {"think", l_think}};
  for (const auto& f : kFunctions) {
    if (auto error = vm.register_function("game", f.name, f.fn, state)) return error;
  }
  return std::nullopt;
}

std::optional<script::ScriptError> bind_game_api(script::ScriptVm& vm, VmState* state) {
  for (auto bind :
       {bind_entity_api, bind_movement_api, bind_event_api, bind_query_api, bind_time_api}) {
    if (auto error = bind(vm, state)) return error;
  }
  return std::nullopt;
}

}  // namespace zone::game
