// The sandbox: which standard libraries a script sees, and the few functions replaced so
// that a script can neither reach the machine, nor escape its budgets, nor make a run
// unreproducible. docs/scripting.md lists what is there and what is not.
//
// Every function here runs inside Lua, which raises errors with longjmp: no local with a
// destructor may be alive across a Lua API call that can raise.
#include <cstring>
#include <exception>

#include "script/vm_core.hpp"

namespace zone::script::detail {
namespace {

// print(...): its arguments tostring'ed, joined by tabs, to the host's log callback.
int sandbox_print(lua_State* L) {
  const int n = lua_gettop(L);
  luaL_Buffer buffer;
  luaL_buffinit(L, &buffer);
  for (int i = 1; i <= n; ++i) {
    if (i > 1) luaL_addchar(&buffer, '\t');
    luaL_tolstring(L, i, nullptr);
    luaL_addvalue(&buffer);
  }
  luaL_pushresult(&buffer);
  std::size_t length = 0;
  const char* text = lua_tolstring(L, -1, &length);
  bool threw = false;
  if (const auto& log = core_of(L).options.log) {
    // A C++ exception must not cross into Lua: catch it here, raise a Lua error after
    // the try block is left.
    try {
      log(std::string_view(text, length));
    } catch (...) {
      threw = true;
    }
  }
  if (threw) return luaL_error(L, "print: the host's log callback failed");
  return 0;
}

// collectgarbage("count") only: a script may see its memory, not drive the collector
// (a full collection on every call would cost the whole zone's tick).
int sandbox_collectgarbage(lua_State* L) {
  const char* option = luaL_optstring(L, 1, "count");
  if (std::strcmp(option, "count") != 0) {
    return luaL_error(L, "collectgarbage: only \"count\" is available in the sandbox");
  }
  const int kilobytes = lua_gc(L, LUA_GCCOUNT);
  const int bytes = lua_gc(L, LUA_GCCOUNTB);
  lua_pushnumber(L, static_cast<lua_Number>(kilobytes) + static_cast<lua_Number>(bytes) / 1024);
  return 1;
}

// setmetatable without __gc: finalizers run with hooks off (lgc.c, GCTM), so a finalizer
// could loop for ever outside every budget. Lua marks an object for finalization only
// when its metatable has __gc at setmetatable time, so refusing it there is enough.
int sandbox_setmetatable(lua_State* L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL) {
      return luaL_error(L, "setmetatable: __gc metamethods are not allowed in the sandbox");
    }
    lua_pop(L, 1);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

// After pcall, xpcall, coroutine.resume or coroutine.close: while the call is being
// stopped for its budget, a caught error is raised again, so the budget error reaches
// the host (otherwise `while true do pcall(f) end` would catch it for ever).
int finish_rethrowing(lua_State* L, int /*status*/, lua_KContext /*context*/) {
  if (core_of(L).abort != Abort::kNone && lua_gettop(L) >= 1 && lua_toboolean(L, 1) == 0) {
    lua_settop(L, 2);
    return lua_error(L);
  }
  return lua_gettop(L);
}

// The wrapped function is upvalue 1. lua_callk with a continuation: a coroutine may still
// yield across a pcall, as with the standard one.
int rethrowing_call(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_callk(L, lua_gettop(L) - 1, LUA_MULTRET, 0, finish_rethrowing);
  return finish_rethrowing(L, LUA_OK, 0);
}

// string.find(s, text [, init]): always a plain search. Lua's pattern matcher backtracks
// without running a Lua instruction or allocating, so neither budget could stop a
// pattern like ("a?"):rep(40) .. ("a"):rep(40), which runs for hours; patterns are not
// in the sandbox (string.match, gmatch and gsub are gone too).
int sandbox_find(lua_State* L) {
  lua_settop(L, 3);
  lua_pushboolean(L, 1);  // plain
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 4, LUA_MULTRET);
  return lua_gettop(L);
}

// table[name] = wrapper with the old table[name] as its upvalue. The table is at -1.
void wrap_field(lua_State* L, const char* name, lua_CFunction wrapper) {
  lua_getfield(L, -1, name);
  lua_pushcclosure(L, wrapper, 1);
  lua_setfield(L, -2, name);
}

void remove_field(lua_State* L, const char* name) {
  lua_pushnil(L);
  lua_setfield(L, -2, name);
}

}  // namespace

int open_sandbox(lua_State* L) {
  // The allowed libraries. No io, os, package (require), debug.
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
  luaL_requiref(L, LUA_COLIBNAME, luaopen_coroutine, 1);
  lua_settop(L, 0);

  lua_pushglobaltable(L);
  // No way to the file system, and no other chunk than the host's (load could also run
  // binary chunks, which can crash the VM).
  remove_field(L, "dofile");
  remove_field(L, "loadfile");
  remove_field(L, "load");
  // warn writes to stderr; print goes to the host instead.
  remove_field(L, "warn");
  lua_pushcfunction(L, sandbox_print);
  lua_setfield(L, -2, "print");
  lua_pushcfunction(L, sandbox_collectgarbage);
  lua_setfield(L, -2, "collectgarbage");
  wrap_field(L, "setmetatable", sandbox_setmetatable);
  wrap_field(L, "pcall", rethrowing_call);
  wrap_field(L, "xpcall", rethrowing_call);

  lua_getfield(L, -1, LUA_COLIBNAME);
  wrap_field(L, "resume", rethrowing_call);
  wrap_field(L, "close", rethrowing_call);
  lua_pop(L, 1);

  // string.dump turns functions into binary chunks; gone from the string table (and so
  // from the strings' metatable, whose __index it is).
  lua_getfield(L, -1, LUA_STRLIBNAME);
  remove_field(L, "dump");
  wrap_field(L, "find", sandbox_find);
  remove_field(L, "match");
  remove_field(L, "gmatch");
  remove_field(L, "gsub");
  lua_pop(L, 1);

  // math.random: Lua seeds it from the clock and an address; seed it from the host, then
  // take randomseed away so that the sequence stays the host's.
  lua_getfield(L, -1, LUA_MATHLIBNAME);
  lua_getfield(L, -1, "randomseed");
  lua_pushinteger(L, static_cast<lua_Integer>(core_of(L).options.random_seed));
  lua_call(L, 1, 0);
  remove_field(L, "randomseed");
  lua_pop(L, 1);

  lua_pop(L, 1);  // the global table
  return 0;
}

}  // namespace zone::script::detail
