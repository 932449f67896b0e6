// script-bench: what a handler call and a compute-heavy handler cost in Lua 5.4 (raw C
// API and through ScriptVm) and in LuaJIT 2.1 (JIT on and off), each with the
// instruction-count hook installed the way the host installs it (docs/scripting.md).
//
// Lua 5.4 and LuaJIT export the same C symbols (lua_pcall, ...), so they cannot share a
// process: this file builds twice. script-bench is Lua 5.4 plus ScriptVm; when pkg-config
// finds luajit, script-bench-luajit (ZONE_BENCH_LUAJIT) is LuaJIT alone, and script-bench
// runs it after its own part so that one command prints both.
#include <lua.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#ifdef ZONE_BENCH_LUAJIT
#include <luajit.h>
#else
#include "script/script_vm.hpp"
#endif

namespace {

#ifdef ZONE_BENCH_LUAJIT
constexpr const char* kInterpreter = "LuaJIT 2.1";
#else
constexpr const char* kInterpreter = "Lua 5.4";
#endif

// (a) a small handler: three integer arguments, one table field read, one result;
// (b) a compute-heavy one: 1e6 iterations of integer arithmetic.
constexpr const char* kScript = R"(
cfg = { scale = 3 }
function on_action(a, b, c) return cfg.scale * a + b - c end
function compute(n)
  local s = 0
  for i = 1, n do s = (s + i * 7) % 1000003 end
  return s
end
)";
constexpr int kCalls = 1'000'000;  // per round of (a)
constexpr int kLoop = 1'000'000;   // iterations of (b)
constexpr int kRounds = 5;         // best and median of these are reported
constexpr int kHookCount = 1000;   // the host's granularity

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Timing {
  double best = 0;
  double median = 0;
};

template <typename F>
Timing time_rounds(F&& round) {
  std::vector<double> times;
  for (int r = 0; r < kRounds; ++r) {
    const auto start = Clock::now();
    round();
    times.push_back(seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  return Timing{times.front(), times[times.size() / 2]};
}

// The raw-API hook: what the host's does (count, compare with the budget), its state in
// the registry since LuaJIT has no per-state extra space.
struct HookState {
  long long fires = 0;
  long long instructions = 0;
  long long budget = 1'000'000'000;
};

void count_hook(lua_State* L, lua_Debug*) {
  lua_getfield(L, LUA_REGISTRYINDEX, "bench.hook");
  auto* state = static_cast<HookState*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  ++state->fires;
  state->instructions += kHookCount;
  if (state->instructions >= state->budget) luaL_error(L, "instruction budget exceeded");
}

int message_handler(lua_State* L) {
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar) != 0; ++level) {
    lua_getinfo(L, "Sl", &ar);
    if (ar.currentline > 0) break;
  }
  return 1;
}

// Counts bytes like the host's allocator; used to ask whether lua_newstate accepts it.
void* counting_alloc(void* ud, void* ptr, std::size_t osize, std::size_t nsize) {
  auto& held = *static_cast<std::size_t*>(ud);
  const std::size_t old = ptr != nullptr ? osize : 0;
  if (nsize == 0) {
    std::free(ptr);
    held -= old;
    return nullptr;
  }
  void* block = std::realloc(ptr, nsize);
  if (block != nullptr) held = held - old + nsize;
  return block;
}

void print_row(const char* mode, Timing call, Timing compute, long long compute_fires,
               long long result) {
  std::printf("%-11s %-30s %8.1f %8.1f   %8.2f %8.2f   %11lld   %lld\n", kInterpreter, mode,
              call.best * 1e9 / kCalls, call.median * 1e9 / kCalls, compute.best * 1e3,
              compute.median * 1e3, compute_fires, result);
}

// The raw C API, as the host uses it: a message handler at the bottom of the stack, the
// hook installed once (its count runs on across calls), the handler looked up by name
// for each call.
void bench_raw(const char* mode, lua_State* L, bool hook) {
  HookState state;
  lua_pushlightuserdata(L, &state);
  lua_setfield(L, LUA_REGISTRYINDEX, "bench.hook");
  if (luaL_loadbuffer(L, kScript, std::char_traits<char>::length(kScript), "=bench") != 0 ||
      lua_pcall(L, 0, 0, 0) != 0) {
    std::fprintf(stderr, "script-bench: %s\n", lua_tostring(L, -1));
    std::exit(1);
  }
  lua_settop(L, 0);
  lua_pushcfunction(L, message_handler);  // index 1
  long long checksum = 0;
  if (hook) lua_sethook(L, count_hook, LUA_MASKCOUNT, kHookCount);
  auto call = [&](const char* name, int nargs, lua_Integer a) {
    state.instructions = 0;
    lua_getglobal(L, name);
    for (int i = 0; i < nargs; ++i) lua_pushinteger(L, a + i);
    if (lua_pcall(L, nargs, 1, 1) != 0) {
      std::fprintf(stderr, "script-bench: %s\n", lua_tostring(L, -1));
      std::exit(1);
    }
    const auto value = static_cast<long long>(lua_tointeger(L, -1));
    lua_pop(L, 1);
    return value;
  };
  const Timing calls = time_rounds([&] {
    for (int i = 0; i < kCalls; ++i) checksum += call("on_action", 3, i);
  });
  long long fires = 0;
  long long result = 0;
  const Timing compute = time_rounds([&] {
    state.fires = 0;
    result = call("compute", 1, kLoop);
    fires = state.fires;
  });
  if (checksum == 42) std::printf(" ");  // keeps the calls' results alive
  print_row(mode, calls, compute, hook ? fires : 0, result);
}

[[maybe_unused]] void print_header() {
  std::printf("%-11s %-30s %17s   %17s   %11s   %s\n", "", "", "(a) ns per call", "(b) ms",
              "hook runs", "");
  std::printf("%-11s %-30s %8s %8s   %8s %8s   %11s   %s\n", "interpreter", "mode", "best",
              "median", "best", "median", "during (b)", "(b) result");
}

#ifdef ZONE_BENCH_LUAJIT

// A byte limit for budget_alloc, as the host's allocator enforces one.
struct Budget {
  std::size_t held = 0;
  std::size_t peak = 0;
  std::size_t limit = 0;
  long long refusals = 0;
};

void* budget_alloc(void* ud, void* ptr, std::size_t osize, std::size_t nsize) {
  auto& budget = *static_cast<Budget*>(ud);
  const std::size_t old = ptr != nullptr ? osize : 0;
  if (nsize > old && budget.held - old + nsize > budget.limit) {
    ++budget.refusals;
    return nullptr;
  }
  void* block = counting_alloc(&budget.held, ptr, osize, nsize);
  budget.peak = std::max(budget.peak, budget.held);
  return block;
}

// What the build is (GC64 or not), whether lua_newstate takes a custom allocator, and
// whether that allocator can hold a memory bomb to a budget.
void check_allocator() {
  lua_State* probe = luaL_newstate();
  luaL_openlibs(probe);
  const bool gc64 = luaL_dostring(probe, "return require('ffi').abi('gc64')") == 0 &&
                    lua_toboolean(probe, -1) != 0;
  lua_close(probe);
  Budget budget{.limit = 8u << 20};
  lua_State* L = lua_newstate(budget_alloc, &budget);
  std::printf("LuaJIT build: %s; lua_newstate(custom allocator): %s\n", gc64 ? "GC64" : "not GC64",
              L == nullptr ? "NULL (refused)" : "accepted");
  if (L == nullptr) return;
  luaL_openlibs(L);
  const char* bomb = "local t = {} for i = 1, 1e8 do t[i] = i end";
  int status = luaL_loadstring(L, bomb);
  if (status == 0) status = lua_pcall(L, 0, 0, 0);
  std::printf(
      "LuaJIT memory bomb under an 8 MiB allocator budget: %s (%s), peak %zu bytes, "
      "%lld refusals\n",
      status == LUA_ERRMEM ? "LUA_ERRMEM"
      : status == 0        ? "ran to the end"
                           : "error",
      status != 0 ? lua_tostring(L, -1) : "-", budget.peak, budget.refusals);
  lua_close(L);
}

void run() {
  check_allocator();
  for (const bool jit : {true, false}) {
    lua_State* L = luaL_newstate();
    luaL_openlibs(L);
    luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | (jit ? LUAJIT_MODE_ON : LUAJIT_MODE_OFF));
    bench_raw(jit ? "raw API, JIT on, count hook" : "raw API, JIT off, count hook", L, true);
    lua_close(L);
  }
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  bench_raw("raw API, JIT on, no hook", L, false);
  lua_close(L);
}

#else

void bench_script_vm() {
  using zone::script::ScriptVm;
  ScriptVm vm(zone::script::ScriptLimits{.memory_bytes = 64u << 20,
                                         .instructions_per_call = 1'000'000'000,
                                         .instructions_per_tick = 0});
  const std::vector<zone::script::ScriptFile> files{{"bench.lua", kScript}};
  if (const auto error = vm.load_files(files)) {
    std::fprintf(stderr, "script-bench: %s\n", error->what().c_str());
    std::exit(1);
  }
  long long checksum = 0;
  const Timing calls = time_rounds([&] {
    for (int i = 0; i < kCalls; ++i) {
      checksum += vm.call("on_action", i, i + 1, i + 2).integer(0).value_or(0);
    }
  });
  long long result = 0;
  long long granules = 0;
  const Timing compute = time_rounds([&] {
    const std::uint64_t before = vm.stats().instructions;
    result = vm.call("compute", kLoop).integer(0).value_or(-1);
    granules = static_cast<long long>((vm.stats().instructions - before) / 1000);
  });
  if (checksum == 42) std::printf(" ");
  print_row("ScriptVm::call (the host)", calls, compute, granules, result);
}

void run() {
  std::size_t held = 0;
  lua_State* custom = lua_newstate(counting_alloc, &held);
  std::printf("Lua 5.4 lua_newstate(custom allocator): %s (%zu bytes held)\n",
              custom == nullptr ? "NULL" : "accepted", held);
  if (custom != nullptr) lua_close(custom);

  for (const bool hook : {true, false}) {
    lua_State* L = luaL_newstate();
    luaL_openlibs(L);
    bench_raw(hook ? "raw API, count hook" : "raw API, no hook", L, hook);
    lua_close(L);
  }
  bench_script_vm();
}

#endif

[[maybe_unused]] std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

}  // namespace

int main() {
#ifndef ZONE_BENCH_LUAJIT
  std::printf(
      "CPU: %s; %d calls per round, compute(%d), best and median of %d rounds, "
      "hook every %d instructions\n",
      cpu_model().c_str(), kCalls, kLoop, kRounds, kHookCount);
  print_header();
#endif
  run();
#ifdef ZONE_SCRIPT_BENCH_LUAJIT_BIN
  std::fflush(stdout);
  return std::system(ZONE_SCRIPT_BENCH_LUAJIT_BIN) == 0 ? 0 : 1;
#else
  return 0;
#endif
}
