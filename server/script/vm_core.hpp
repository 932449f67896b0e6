// Inside a ScriptVm: the state its Lua callbacks (allocator, count hook, message handler,
// sandbox functions) share with the C++ side. Lives on the heap at a fixed address, which
// the lua_State holds (allocator userdata and each thread's extra space), so a ScriptVm
// can move. Internal to server/script.
#pragma once

#include <lua.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "script/script_config.hpp"
#include "script/script_error.hpp"

namespace zone::script::detail {

// Why the running call is being stopped. While set, the sandbox's pcall, xpcall,
// coroutine.resume and coroutine.close pass errors on instead of returning them, so a
// script cannot catch its own budget error and carry on.
enum class Abort : std::uint8_t { kNone, kCallBudget, kTickBudget };

struct VmCore {
  ScriptLimits limits;
  ScriptOptions options;
  lua_State* L = nullptr;
  ScriptStats stats;

  // Memory: the allocator refuses only once the sandbox is set up (creation itself fails
  // only when the process is out of memory).
  bool enforce_memory = false;
  std::uint64_t refusals_this_call = 0;

  // Instructions: the hook runs every hook_count instructions and charges that many.
  int hook_count = 1000;
  std::uint64_t call_instructions = 0;
  std::uint64_t tick_instructions = 0;
  bool tick_counted = false;  // handler calls count against the tick; loading does not
  // A handler call is running: a call from inside it (through a bound C function) would
  // restart the per-call budget, so it is refused.
  bool in_call = false;
  Abort abort = Abort::kNone;

  // Handler names already interned as Lua strings, each held in the registry (the value
  // is its reference): a call by a known name looks the handler up without allocating,
  // so it needs no protected trampoline. Only names, never functions, are cached: a
  // script that redefines a handler is seen at the next call.
  struct NameHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view name) const {
      return std::hash<std::string_view>{}(name);
    }
  };
  std::unordered_map<std::string, int, NameHash, std::equal_to<>> handler_names;
  static constexpr std::size_t kMaxHandlerNames = 256;

  // The loaded files' paths, to read locations back out of Lua's messages.
  std::vector<std::string> files;

  // Where the message handler found the first Lua frame of the latest error. A fixed
  // buffer: the handler runs inside Lua and must not allocate through C++.
  std::array<char, 256> error_source{};
  int error_line = 0;
  bool error_located = false;
};

inline VmCore& core_of(lua_State* L) {
  return **static_cast<VmCore**>(lua_getextraspace(L));
}

// Budget enforcement (budget.cpp).
void* budget_alloc(void* ud, void* ptr, std::size_t osize, std::size_t nsize) noexcept;
void count_hook(lua_State* L, lua_Debug* ar);
// Resets the per-call counters, before a call or a load.
void begin_call(VmCore& core, bool tick_counted);

// Errors (vm_errors.cpp). The message handler given to every lua_pcall: keeps the
// message and notes the first Lua frame's file and line in the core.
int message_handler(lua_State* L);
// The ScriptError for a failed lua_pcall or lua_load: the message at the top of the
// stack (left there), the status and what the core noted.
ScriptError error_from_stack(VmCore& core, int status, bool loading);

// The sandbox (sandbox.cpp): a lua_CFunction, run under lua_pcall, that opens the
// allowed libraries, removes and wraps what the sandbox forbids, and seeds math.random.
int open_sandbox(lua_State* L);

}  // namespace zone::script::detail
