// Helpers for the C functions the game API installs with ScriptVm::register_function.
//
// Lua (built as C) raises errors with longjmp, which skips C++ destructors, and a C++
// exception must never unwind through Lua's frames. So a bound function: (1) reports bad
// arguments with luaL_argerror / luaL_checkinteger and friends, which become errors of
// the calling handler with its file:line; (2) holds no object with a destructor across a
// Lua API call that may raise; (3) runs any C++ that may throw inside guarded_call.
#pragma once

#include <lua.hpp>

#include <cstdio>
#include <exception>

namespace zone::script {

// Returns body(L); a C++ exception from it becomes a Lua error ("what()") of the calling
// handler, raised after the exception is destroyed. body itself must keep rule (2).
template <typename Body>
int guarded_call(lua_State* L, Body&& body) noexcept {
  char message[256];
  try {
    return body(L);
  } catch (const std::exception& e) {
    std::snprintf(message, sizeof message, "%s", e.what());
  } catch (...) {
    std::snprintf(message, sizeof message, "unknown C++ exception");
  }
  return luaL_error(L, "%s", message);
}

}  // namespace zone::script
