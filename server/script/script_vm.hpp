// ScriptVm: one sandboxed Lua 5.4 state with its budgets, the scripts loaded into it and
// protected calls of their handlers. Nothing here throws across the API (creation
// excepted, with std::bad_alloc, and only when the process itself is out of memory):
// loads return std::optional<ScriptError>, calls a CallResult.
//
// Not thread-safe: one thread (the tick's) uses a VM at a time. Not re-entrant: a bound
// C function must not call a handler of its own VM (a call inside a call is refused as
// an error; queue the event for after the handler instead).
#pragma once

#include <lua.hpp>

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "script/script_config.hpp"
#include "script/script_error.hpp"
#include "script/script_value.hpp"

namespace zone::script {

namespace detail {
struct VmCore;
}

class ScriptVm {
 public:
  explicit ScriptVm(const ScriptLimits& limits, ScriptOptions options = {});
  ~ScriptVm();
  // Move-only. A moved-from VM may only be destroyed or assigned to.
  ScriptVm(ScriptVm&& other) noexcept;
  ScriptVm& operator=(ScriptVm&& other) noexcept;
  ScriptVm(const ScriptVm&) = delete;
  ScriptVm& operator=(const ScriptVm&) = delete;

  // Compiles each file (text only, chunk name "@path_for_messages") and runs its top
  // level once, in order, all in the one shared global table: a file defines handlers
  // as global functions (`function on_join(player) ... end`) and may use what earlier
  // files defined. Each top level has the per-call instruction budget. Stops at the
  // first error and returns it (the files before it stay loaded: ScriptHost loads into
  // a fresh VM and throws a failed one away).
  std::optional<ScriptError> load_files(std::span<const ScriptFile> files);

  // Calls the global function `handler` with the arguments (see make_script_arg) and
  // returns its first CallResult::kMaxResults results. A nil global is kMissingHandler,
  // not an error; a global that is not callable is an error. Refused without running
  // (kSkippedOverBudget) once the tick's instruction budget is spent.
  template <typename... Args>
  CallResult call(std::string_view handler, const Args&... args) {
    const std::array<ScriptArg, sizeof...(Args)> packed{make_script_arg(args)...};
    return call_with(handler, packed);
  }
  CallResult call_with(std::string_view handler, std::span<const ScriptArg> args);
  // Calls the value held in the Lua registry at `ref` (a reference a bound C function
  // took with luaL_ref, such as a timer's callback) exactly as call_with calls a global
  // handler: the same budgets, counters, results and errors. A nil there is
  // kMissingHandler. `name` names the call in the error of a re-entrant call.
  CallResult call_ref(int ref, std::string_view name, std::span<const ScriptArg> args);

  // Lets go of a registry reference a bound function took with luaL_ref (a timer's
  // callback, once it has run). Does not raise: it rewrites existing registry slots only.
  void release_ref(int ref);

  // Starts a tick: its instruction budget is whole again.
  void begin_tick();
  // The tick's instruction budget is spent: every call until begin_tick() is refused
  // (kSkippedOverBudget). Lets a caller with a queue of calls keep the rest for later.
  bool tick_budget_spent() const;

  // Installs a C function as a global (`table` empty) or as table.name (the table is
  // created when absent), with `upvalue` as its upvalue 1 (read it with
  // ScriptVm::upvalue). For the game API. The function reports bad arguments with
  // luaL_argerror / luaL_error: they become errors of the calling handler. It must never
  // let a C++ exception out (see script_binding.hpp) and, since Lua raises errors with
  // longjmp, must hold no object with a destructor across a Lua call that may raise.
  std::optional<ScriptError> register_function(std::string_view table, std::string_view name,
                                               lua_CFunction fn, void* upvalue);
  // Inside a function installed by register_function: its upvalue.
  static void* upvalue(lua_State* L) { return lua_touserdata(L, lua_upvalueindex(1)); }

  // Counters; the memory figures are current.
  const ScriptStats& stats() const;
  const ScriptLimits& limits() const;

 private:
  // Runs `fn` with `data` as its only argument under lua_pcall and the message handler;
  // on failure returns the error and leaves the stack as it was.
  std::optional<ScriptError> protected_run(lua_CFunction fn, void* data);
  // The registry reference of the handler's name as a Lua string, interned on first use
  // (up to VmCore::kMaxHandlerNames names); LUA_NOREF when it cannot be.
  int handler_name_ref(std::string_view handler);
  // call_with and call_ref: the handler is the global `handler`, or the registry's `ref`
  // when that is not LUA_NOREF.
  CallResult call_target(std::string_view handler, int ref, std::span<const ScriptArg> args);
  // After a failed call: the error, with the handler's own line when Lua gave none; the
  // stack back at `base`.
  ScriptError call_error(int status, std::string_view handler, int ref, int base);

  std::unique_ptr<detail::VmCore> core_;
};

}  // namespace zone::script
