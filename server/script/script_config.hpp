// What a ScriptVm is created with (its budgets, its seed, where print goes), the script
// files it loads, and the counters it keeps: plain structs, no Lua.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace zone::script {

// The budgets of one VM. 0 means "no limit" (for tests and the benchmark; a zone always
// sets all three).
struct ScriptLimits {
  // Bytes the VM's allocator may hold at once (the interpreter's own state included).
  std::size_t memory_bytes = 64u << 20;
  // Lua instructions one handler call may run (the top level of each file at load too).
  std::uint64_t instructions_per_call = 1'000'000;
  // Lua instructions all calls between two begin_tick() may run together.
  std::uint64_t instructions_per_tick = 10'000'000;
};

struct ScriptOptions {
  // math.random's seed, set at creation: the same seed and the same calls give the same
  // numbers (scripts cannot reseed: math.randomseed is not in the sandbox).
  std::int64_t random_seed = 1;
  // Where the scripts' print() goes, one call per print (its arguments tostring'ed and
  // joined by tabs). Empty: print() discards. Must not throw (a throw is caught and turned
  // into an error of the calling handler).
  std::function<void(std::string_view)> log;
  // Instructions between two runs of the budget hook (lowered to a budget when smaller).
  // Budgets are enforced, and instructions counted, to this granularity.
  std::uint32_t hook_granularity = 1000;
};

// One script: its text and the name used in error messages ("path:line: message").
struct ScriptFile {
  std::string path_for_messages;
  std::string source;
};

// Counters of one VM, for /metrics. Instructions are counted by the hook, a granule at a
// time: the total is exact to one granule.
struct ScriptStats {
  std::uint64_t calls = 0;                // handler calls that ran (missing or skipped: not)
  std::uint64_t errors = 0;               // calls that ended in an error, of any kind
  std::uint64_t budget_exceeded = 0;      // calls stopped by an instruction budget
  std::uint64_t memory_refusals = 0;      // allocations refused by the memory budget
  std::uint64_t skipped_over_budget = 0;  // calls refused: the tick's budget was spent
  std::uint64_t missing_handlers = 0;     // calls of a handler the scripts do not define
  std::uint64_t instructions = 0;         // Lua instructions run, in all
  std::size_t memory_in_use = 0;          // bytes the VM holds now
  std::size_t memory_peak = 0;            // the most it has held
};

}  // namespace zone::script
