// ScriptVm: creation of the sandboxed state, loading the files, protected handler calls
// with balanced stacks, and the binding of C functions.
#include "script/script_vm.hpp"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "script/vm_core.hpp"

namespace zone::script {
namespace {

// Lua calls this only for an error outside every lua_pcall, which the host never lets
// happen: every Lua call that may raise runs under lua_pcall.
int panic(lua_State* L) {
  const char* message = lua_tostring(L, -1);
  std::fprintf(stderr, "zone_script: Lua error outside a protected call: %s\n",
               message != nullptr ? message : "(not a string)");
  std::abort();
}

// Arguments of a handler call, read by call_trampoline inside the protected call.
struct CallFrame {
  std::string_view handler;
  int ref = LUA_NOREF;  // the registry's function instead of the global `handler`
  std::span<const ScriptArg> args;
  bool missing = false;
};

// Pushes the function a call names: the registry's `ref`, or the global `handler` (a raw
// get: a metatable on the global table does not change what a handler is). Returns its
// type. The global's lookup pushes a string, so it may raise: only under lua_pcall.
int push_target(lua_State* L, std::string_view handler, int ref) {
  if (ref != LUA_NOREF) return lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  lua_pushglobaltable(L);
  lua_pushlstring(L, handler.data(), handler.size());
  const int type = lua_rawget(L, -2);
  lua_remove(L, -2);
  return type;
}

// More arguments than any handler takes; keeps the count well inside an int.
constexpr std::size_t kMaxArgs = 64;

// Under lua_pcall: looks the handler up (a raw get: a metatable on the global table
// does not change what a handler is), pushes the arguments, calls it and returns all
// its results. Looking up and pushing strings allocate, hence inside the protection.
int call_trampoline(lua_State* L) {
  auto& frame = *static_cast<CallFrame*>(lua_touserdata(L, 1));
  if (push_target(L, frame.handler, frame.ref) == LUA_TNIL) {
    frame.missing = true;
    return 0;
  }
  lua_replace(L, 1);
  lua_settop(L, 1);
  if (frame.args.size() > kMaxArgs) return luaL_error(L, "too many arguments to a handler");
  const int nargs = static_cast<int>(frame.args.size());
  luaL_checkstack(L, nargs, "too many arguments to a handler");
  for (const ScriptArg& arg : frame.args) {
    if (const auto* b = std::get_if<bool>(&arg)) {
      lua_pushboolean(L, *b ? 1 : 0);
    } else if (const auto* i = std::get_if<std::int64_t>(&arg)) {
      lua_pushinteger(L, static_cast<lua_Integer>(*i));
    } else if (const auto* d = std::get_if<double>(&arg)) {
      lua_pushnumber(L, static_cast<lua_Number>(*d));
    } else if (const auto* s = std::get_if<std::string_view>(&arg)) {
      lua_pushlstring(L, s->data(), s->size());
    }
  }
  lua_call(L, nargs, LUA_MULTRET);
  return lua_gettop(L);
}

// Under lua_pcall: notes where the handler (a Lua function) is defined, in the core's
// error place. For errors that carry no place of their own.
struct LocateFrame {
  std::string_view handler;
  int ref = LUA_NOREF;
};

int locate_trampoline(lua_State* L) {
  const auto& frame = *static_cast<const LocateFrame*>(lua_touserdata(L, 1));
  if (push_target(L, frame.handler, frame.ref) != LUA_TFUNCTION) return 0;
  lua_Debug ar;
  lua_getinfo(L, ">S", &ar);
  if (ar.linedefined <= 0) return 0;
  detail::VmCore& core = detail::core_of(L);
  const char* source = ar.source[0] == '@' ? ar.source + 1 : ar.source;
  std::snprintf(core.error_source.data(), core.error_source.size(), "%s", source);
  core.error_line = ar.linedefined;
  core.error_located = true;
  return 0;
}

// Under lua_pcall: interns a handler name and keeps it in the registry.
struct InternFrame {
  std::string_view name;
  int ref = LUA_NOREF;
};

int intern_trampoline(lua_State* L) {
  auto& frame = *static_cast<InternFrame*>(lua_touserdata(L, 1));
  lua_pushlstring(L, frame.name.data(), frame.name.size());
  frame.ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

// Handlers take a few numbers and flags; calls with strings or many arguments go
// through the trampoline.
constexpr std::size_t kMaxDirectArgs = 8;

bool all_direct(std::span<const ScriptArg> args) {
  if (args.size() > kMaxDirectArgs) return false;
  return std::none_of(args.begin(), args.end(), [](const ScriptArg& arg) {
    return std::holds_alternative<std::string_view>(arg);
  });
}

// Pushes what cannot allocate: booleans and numbers.
void push_direct(lua_State* L, const ScriptArg& arg) {
  if (const auto* b = std::get_if<bool>(&arg)) {
    lua_pushboolean(L, *b ? 1 : 0);
  } else if (const auto* i = std::get_if<std::int64_t>(&arg)) {
    lua_pushinteger(L, static_cast<lua_Integer>(*i));
  } else if (const auto* d = std::get_if<double>(&arg)) {
    lua_pushnumber(L, static_cast<lua_Number>(*d));
  }
}

struct RegisterFrame {
  std::string_view table;
  std::string_view name;
  lua_CFunction fn = nullptr;
  void* upvalue = nullptr;
  bool table_taken = false;  // a global of the table's name that is not a table
};

int register_trampoline(lua_State* L) {
  auto& frame = *static_cast<RegisterFrame*>(lua_touserdata(L, 1));
  lua_pushglobaltable(L);
  if (!frame.table.empty()) {
    lua_pushlstring(L, frame.table.data(), frame.table.size());
    const int type = lua_rawget(L, -2);
    if (type == LUA_TNIL) {
      lua_pop(L, 1);
      lua_newtable(L);
      lua_pushlstring(L, frame.table.data(), frame.table.size());
      lua_pushvalue(L, -2);
      lua_rawset(L, -4);
    } else if (type != LUA_TTABLE) {
      frame.table_taken = true;
      return 0;
    }
  }
  lua_pushlstring(L, frame.name.data(), frame.name.size());
  lua_pushlightuserdata(L, frame.upvalue);
  lua_pushcclosure(L, frame.fn, 1);
  lua_rawset(L, -3);
  return 0;
}

// The hook runs every `granularity` instructions, and at least once per budget.
int hook_count_for(const ScriptLimits& limits, std::uint32_t granularity) {
  std::uint64_t count = std::max<std::uint32_t>(granularity, 1);
  if (limits.instructions_per_call != 0) count = std::min(count, limits.instructions_per_call);
  if (limits.instructions_per_tick != 0) count = std::min(count, limits.instructions_per_tick);
  return static_cast<int>(std::min<std::uint64_t>(count, INT_MAX));
}

ScriptValue read_value(lua_State* L, int index) {
  switch (lua_type(L, index)) {
    case LUA_TBOOLEAN:
      return ScriptValue{std::in_place_type<bool>, lua_toboolean(L, index) != 0};
    case LUA_TNUMBER:
      if (lua_isinteger(L, index)) {
        return ScriptValue{std::in_place_type<std::int64_t>, lua_tointeger(L, index)};
      }
      return ScriptValue{std::in_place_type<double>, lua_tonumber(L, index)};
    case LUA_TSTRING: {
      std::size_t length = 0;
      const char* text = lua_tolstring(L, index, &length);
      return ScriptValue{std::in_place_type<std::string>, text, length};
    }
    default:
      return ScriptValue{};
  }
}

}  // namespace

ScriptVm::ScriptVm(const ScriptLimits& limits, ScriptOptions options)
    : core_(std::make_unique<detail::VmCore>()) {
  detail::VmCore& core = *core_;
  core.limits = limits;
  core.options = std::move(options);
  core.hook_count = hook_count_for(limits, core.options.hook_granularity);
  lua_State* L = lua_newstate(detail::budget_alloc, &core);
  if (L == nullptr) throw std::bad_alloc();
  core.L = L;
  *static_cast<detail::VmCore**>(lua_getextraspace(L)) = &core;
  lua_atpanic(L, panic);
  // The sandbox is set up before the budget applies: it fails only without memory at all.
  if (protected_run(detail::open_sandbox, nullptr).has_value()) {
    lua_close(L);
    core.L = nullptr;
    throw std::bad_alloc();
  }
  core.enforce_memory = true;
  lua_sethook(L, detail::count_hook, LUA_MASKCOUNT, core.hook_count);
}

ScriptVm::~ScriptVm() {
  if (core_ != nullptr && core_->L != nullptr) lua_close(core_->L);
}

ScriptVm::ScriptVm(ScriptVm&& other) noexcept = default;

ScriptVm& ScriptVm::operator=(ScriptVm&& other) noexcept {
  if (this != &other) {
    if (core_ != nullptr && core_->L != nullptr) lua_close(core_->L);
    core_ = std::move(other.core_);
  }
  return *this;
}

std::optional<ScriptError> ScriptVm::protected_run(lua_CFunction fn, void* data) {
  lua_State* L = core_->L;
  const int base = lua_gettop(L);
  lua_pushcfunction(L, detail::message_handler);
  lua_pushcfunction(L, fn);
  lua_pushlightuserdata(L, data);
  const int status = lua_pcall(L, 1, 0, base + 1);
  std::optional<ScriptError> error;
  if (status != LUA_OK) error = detail::error_from_stack(*core_, status, false);
  lua_settop(L, base);
  return error;
}

std::optional<ScriptError> ScriptVm::load_files(std::span<const ScriptFile> files) {
  detail::VmCore& core = *core_;
  lua_State* L = core.L;
  for (const ScriptFile& file : files) {
    core.files.push_back(file.path_for_messages);
    const std::string chunkname = "@" + file.path_for_messages;
    const int base = lua_gettop(L);
    lua_pushcfunction(L, detail::message_handler);
    detail::begin_call(core, /*tick_counted=*/false);
    // Mode "t": a binary chunk is refused (it could crash the VM).
    int status =
        luaL_loadbufferx(L, file.source.data(), file.source.size(), chunkname.c_str(), "t");
    if (status == LUA_OK) status = lua_pcall(L, 0, 0, base + 1);
    if (status != LUA_OK) {
      ScriptError error = detail::error_from_stack(core, status, /*loading=*/true);
      if (error.file.empty()) error.file = file.path_for_messages;
      lua_settop(L, base);
      if (error.kind == ScriptErrorKind::kMemory) lua_gc(L, LUA_GCCOLLECT);
      return error;
    }
    lua_settop(L, base);
  }
  return std::nullopt;
}

int ScriptVm::handler_name_ref(std::string_view handler) {
  detail::VmCore& core = *core_;
  if (const auto found = core.handler_names.find(handler); found != core.handler_names.end()) {
    return found->second;
  }
  if (core.handler_names.size() >= detail::VmCore::kMaxHandlerNames) return LUA_NOREF;
  InternFrame frame{handler};
  if (protected_run(intern_trampoline, &frame).has_value() || frame.ref == LUA_NOREF) {
    return LUA_NOREF;
  }
  core.handler_names.emplace(std::string(handler), frame.ref);
  return frame.ref;
}

CallResult ScriptVm::call_with(std::string_view handler, std::span<const ScriptArg> args) {
  return call_target(handler, LUA_NOREF, args);
}

CallResult ScriptVm::call_ref(int ref, std::string_view name, std::span<const ScriptArg> args) {
  if (ref == LUA_NOREF || ref == LUA_REFNIL) {
    ++core_->stats.missing_handlers;
    CallResult result;
    result.status = CallStatus::kMissingHandler;
    return result;
  }
  return call_target(name, ref, args);
}

CallResult ScriptVm::call_target(std::string_view handler, int ref,
                                 std::span<const ScriptArg> args) {
  detail::VmCore& core = *core_;
  lua_State* L = core.L;
  CallResult result;
  const std::uint64_t tick_budget = core.limits.instructions_per_tick;
  if (tick_budget != 0 && core.tick_instructions >= tick_budget) {
    ++core.stats.skipped_over_budget;
    result.status = CallStatus::kSkippedOverBudget;
    return result;
  }
  if (core.in_call) {
    ++core.stats.errors;
    result.status = CallStatus::kError;
    result.error = ScriptError{.file = {},
                               .line = 0,
                               .message = "handler '" + std::string(handler) +
                                          "' called while another handler of the same VM runs",
                               .kind = ScriptErrorKind::kRuntime};
    return result;
  }
  const int base = lua_gettop(L);
  // Two ways to the same call. Direct: the handler's name is interned already and the
  // arguments are numbers or flags, so nothing before lua_pcall allocates or raises
  // (lua_checkstack reports failure instead of raising). Otherwise the trampoline does
  // the lookup and the pushing inside the protected call.
  // A registry reference needs no name: rawgeti on the registry cannot raise either.
  const bool by_ref = ref != LUA_NOREF;
  const int name_ref = all_direct(args) && !by_ref ? handler_name_ref(handler) : LUA_NOREF;
  const bool direct = (name_ref != LUA_NOREF || (by_ref && all_direct(args))) &&
                      lua_checkstack(L, static_cast<int>(args.size()) + 3) != 0;
  detail::begin_call(core, /*tick_counted=*/true);
  core.in_call = true;
  lua_pushcfunction(L, detail::message_handler);  // base + 1
  int status = LUA_OK;
  bool missing = false;
  int first = base + 2;  // the first result
  if (direct) {
    if (by_ref) {
      lua_pushnil(L);  // base + 2, where the global table goes otherwise
      missing = lua_rawgeti(L, LUA_REGISTRYINDEX, ref) == LUA_TNIL;
    } else {
      lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);  // base + 2
      lua_rawgeti(L, LUA_REGISTRYINDEX, name_ref);
      missing = lua_rawget(L, base + 2) == LUA_TNIL;
    }
    if (!missing) {
      for (const ScriptArg& arg : args) push_direct(L, arg);
      status = lua_pcall(L, static_cast<int>(args.size()), LUA_MULTRET, base + 1);
      first = base + 3;
    }
  } else {
    CallFrame frame{handler, ref, args};
    lua_pushcfunction(L, call_trampoline);
    lua_pushlightuserdata(L, &frame);
    status = lua_pcall(L, 1, LUA_MULTRET, base + 1);
    missing = status == LUA_OK && frame.missing;
  }
  core.in_call = false;
  if (missing) {
    ++core.stats.missing_handlers;
    result.status = CallStatus::kMissingHandler;
  } else if (status != LUA_OK) {
    ++core.stats.calls;
    result.status = CallStatus::kError;
    result.error = call_error(status, handler, ref, base);
  } else {
    ++core.stats.calls;
    const int returned = lua_gettop(L) - first + 1;
    result.count =
        std::min<std::size_t>(static_cast<std::size_t>(returned), CallResult::kMaxResults);
    for (std::size_t i = 0; i < result.count; ++i) {
      result.values[i] = read_value(L, first + static_cast<int>(i));
    }
  }
  lua_settop(L, base);
  assert(lua_gettop(L) == base);
  return result;
}

ScriptError ScriptVm::call_error(int status, std::string_view handler, int ref, int base) {
  detail::VmCore& core = *core_;
  lua_State* L = core.L;
  ScriptError error = detail::error_from_stack(core, status, /*loading=*/false);
  lua_settop(L, base);
  ++core.stats.errors;
  if (error.kind == ScriptErrorKind::kInstructionBudget) ++core.stats.budget_exceeded;
  // Give the memory back at once: the next call starts with the budget free again.
  if (error.kind == ScriptErrorKind::kMemory) lua_gc(L, LUA_GCCOLLECT);
  if (error.file.empty()) {
    // Lua raised it without running the message handler (a memory error of the VM
    // itself): the best place left is the handler's first line.
    core.error_located = false;
    LocateFrame frame{handler, ref};
    if (!protected_run(locate_trampoline, &frame).has_value() && core.error_located) {
      error.file = core.error_source.data();
      error.line = core.error_line;
    }
  }
  return error;
}

void ScriptVm::begin_tick() {
  core_->tick_instructions = 0;
}

bool ScriptVm::tick_budget_spent() const {
  const std::uint64_t budget = core_->limits.instructions_per_tick;
  return budget != 0 && core_->tick_instructions >= budget;
}

void ScriptVm::release_ref(int ref) {
  if (ref >= 0) luaL_unref(core_->L, LUA_REGISTRYINDEX, ref);
}

std::optional<ScriptError> ScriptVm::register_function(std::string_view table,
                                                       std::string_view name, lua_CFunction fn,
                                                       void* upvalue) {
  detail::begin_call(*core_, /*tick_counted=*/false);
  RegisterFrame frame{table, name, fn, upvalue};
  if (auto error = protected_run(register_trampoline, &frame)) return error;
  if (frame.table_taken) {
    return ScriptError{.file = {},
                       .line = 0,
                       .message = "register_function: the global '" + std::string(table) +
                                  "' exists and is not a table",
                       .kind = ScriptErrorKind::kRuntime};
  }
  return std::nullopt;
}

const ScriptStats& ScriptVm::stats() const {
  return core_->stats;
}
const ScriptLimits& ScriptVm::limits() const {
  return core_->limits;
}

}  // namespace zone::script
