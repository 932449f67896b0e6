// The two budgets: a counting allocator that refuses to pass the memory budget, and a
// count hook that stops a call past its instruction budget or the tick's.
#include <algorithm>
#include <cstdlib>

#include "script/vm_core.hpp"

namespace zone::script::detail {

void* budget_alloc(void* ud, void* ptr, std::size_t osize, std::size_t nsize) noexcept {
  auto& core = *static_cast<VmCore*>(ud);
  // Lua passes the type of a new object in osize when ptr is null: nothing is held yet.
  const std::size_t held = ptr != nullptr ? osize : 0;
  ScriptStats& stats = core.stats;
  if (nsize == 0) {
    std::free(ptr);
    stats.memory_in_use -= held;
    return nullptr;
  }
  // Shrinking always succeeds (Lua relies on it); growing past the budget fails, and Lua
  // then collects garbage, tries once more, and raises "not enough memory".
  const std::size_t limit = core.limits.memory_bytes;
  if (nsize > held && core.enforce_memory && limit != 0 &&
      (nsize > limit || stats.memory_in_use - held > limit - nsize)) {
    ++stats.memory_refusals;
    ++core.refusals_this_call;
    return nullptr;
  }
  void* block = std::realloc(ptr, nsize);
  if (block == nullptr) {
    ++stats.memory_refusals;
    ++core.refusals_this_call;
    return nullptr;
  }
  stats.memory_in_use = stats.memory_in_use - held + nsize;
  stats.memory_peak = std::max(stats.memory_peak, stats.memory_in_use);
  return block;
}

void count_hook(lua_State* L, lua_Debug* /*ar*/) {
  VmCore& core = core_of(L);
  const auto granule = static_cast<std::uint64_t>(core.hook_count);
  core.call_instructions += granule;
  core.stats.instructions += granule;
  if (core.tick_counted) core.tick_instructions += granule;
  // Nothing with a destructor lives here: lua_error unwinds with longjmp.
  const ScriptLimits& limits = core.limits;
  if (limits.instructions_per_call != 0 && core.call_instructions >= limits.instructions_per_call) {
    core.abort = Abort::kCallBudget;
    lua_pushfstring(L, "instruction budget exceeded (%I per call)",
                    static_cast<lua_Integer>(limits.instructions_per_call));
    lua_error(L);
  }
  if (core.tick_counted && limits.instructions_per_tick != 0 &&
      core.tick_instructions >= limits.instructions_per_tick) {
    core.abort = Abort::kTickBudget;
    lua_pushfstring(L, "instruction budget exceeded (%I per tick)",
                    static_cast<lua_Integer>(limits.instructions_per_tick));
    lua_error(L);
  }
}

void begin_call(VmCore& core, bool tick_counted) {
  core.call_instructions = 0;
  core.refusals_this_call = 0;
  core.abort = Abort::kNone;
  core.tick_counted = tick_counted;
  core.error_located = false;
  // The hook's count is not restarted: the instructions of one call's last partial
  // granule are charged to a later call, so that short calls add up in the tick's
  // budget and in stats.instructions (both exact to one granule), and a call is stopped
  // at most one granule early.
}

}  // namespace zone::script::detail
