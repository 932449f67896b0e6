// From a Lua error to a ScriptError: the message handler that notes where the error
// happened, and the classification (syntax, runtime, instruction budget, memory) after.
#include <algorithm>
#include <cstring>

#include "script/vm_core.hpp"

namespace zone::script::detail {

int message_handler(lua_State* L) {
  // The error object as a string (as lua.c's handler does it).
  if (lua_type(L, 1) != LUA_TSTRING && lua_type(L, 1) != LUA_TNUMBER) {
    if (luaL_callmeta(L, 1, "__tostring") == 0 || lua_type(L, -1) != LUA_TSTRING) {
      lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
  } else {
    lua_tostring(L, 1);  // a number becomes its text in place
    lua_settop(L, 1);
  }
  // The first Lua frame from the top: the failing line, below any C function (error(),
  // a bound game function) that raised.
  VmCore& core = core_of(L);
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar) != 0; ++level) {
    if (lua_getinfo(L, "Sl", &ar) == 0) break;
    if (ar.currentline <= 0) continue;
    const char* source = ar.source[0] == '@' ? ar.source + 1 : ar.source;
    const std::size_t length = std::min(std::strlen(source), core.error_source.size() - 1);
    std::memcpy(core.error_source.data(), source, length);
    core.error_source[length] = '\0';
    core.error_line = ar.currentline;
    core.error_located = true;
    break;
  }
  return 1;
}

ScriptError error_from_stack(VmCore& core, int status, bool loading) {
  lua_State* L = core.L;
  std::string_view message = "(error object is not a string)";
  if (lua_type(L, -1) == LUA_TSTRING) {
    std::size_t length = 0;
    const char* text = lua_tolstring(L, -1, &length);
    message = std::string_view(text, length);
  }
  // One line: a message with a traceback or a multi-line error() keeps its first line.
  message = message.substr(0, message.find('\n'));

  ScriptError error;
  if (loading && status == LUA_ERRSYNTAX) {
    error.kind = ScriptErrorKind::kSyntax;
  } else if (core.abort != Abort::kNone) {
    error.kind = ScriptErrorKind::kInstructionBudget;
  } else if (status == LUA_ERRMEM ||
             (core.refusals_this_call > 0 && message.find("not enough memory") != message.npos)) {
    error.kind = ScriptErrorKind::kMemory;
  }

  // Lua's own "path:line: " wins (error(msg, 2) points at the caller on purpose); else
  // the frame the message handler found. A memory error raised by the VM itself skips
  // the message handler (Lua's rule) and has no place unless Lua's message has one.
  if (const auto location = parse_message_location(message, core.files)) {
    error.file = std::string(location->file);
    error.line = location->line;
    error.message = std::string(location->rest);
  } else {
    if (core.error_located) {
      error.file = core.error_source.data();
      error.line = core.error_line;
    }
    error.message = std::string(message);
  }
  // If the budget error text was replaced (a memory error while raising it), say which.
  if (error.kind == ScriptErrorKind::kInstructionBudget &&
      error.message.find("instruction budget") == std::string::npos) {
    error.message = "instruction budget exceeded";
  }
  if (error.kind == ScriptErrorKind::kMemory && core.limits.memory_bytes != 0) {
    error.message += " (memory budget " + std::to_string(core.limits.memory_bytes) + " bytes)";
  }
  return error;
}

}  // namespace zone::script::detail
