// The budgets: instructions per call and per tick (count hook), memory (allocator), and
// the ways around them a script might try (pcall, coroutines, finalizers).
#include <doctest/doctest.h>

#include "script_test_util.hpp"

using namespace zone::script;
using zone::script::test::error_text;
using zone::script::test::load_ok;

namespace {

constexpr const char* kSpin = R"(function spin()
  while true do end
end
function cheap(a) return a + 1 end
function loop(n) local s = 0 for i = 1, n do s = s + i end return s end
)";

}  // namespace

TEST_CASE("an endless loop stops at the per-call budget and the next call works") {
  ScriptVm vm(ScriptLimits{
      .memory_bytes = 8u << 20, .instructions_per_call = 100'000, .instructions_per_tick = 0});
  load_ok(vm, "spin.lua", kSpin);
  const CallResult r = vm.call("spin");
  REQUIRE(r.status == CallStatus::kError);
  CHECK(r.error->kind == ScriptErrorKind::kInstructionBudget);
  CHECK(r.error->file == "spin.lua");
  CHECK(r.error->line == 2);
  CHECK(r.error->message == "instruction budget exceeded (100000 per call)");
  CHECK(vm.stats().budget_exceeded == 1);
  // Charged to the granule: the call ran its budget, not more than one granule beyond.
  CHECK(vm.stats().instructions >= 100'000);
  CHECK(vm.stats().instructions <= 101'000);

  const CallResult next = vm.call("cheap", 1);
  REQUIRE_MESSAGE(next.ok(), error_text(next));
  CHECK(next.integer(0) == 2);
  // A loop well inside the budget is not stopped.
  CHECK(vm.call("loop", 1000).integer(0) == 500500);
}

TEST_CASE("the tick's budget stops a call and refuses the next ones until begin_tick") {
  ScriptVm vm(ScriptLimits{.memory_bytes = 8u << 20,
                           .instructions_per_call = 100'000,
                           .instructions_per_tick = 250'000});
  load_ok(vm, "spin.lua", kSpin);
  vm.begin_tick();
  CHECK(vm.call("spin").error->message == "instruction budget exceeded (100000 per call)");
  CHECK(vm.call("spin").error->message == "instruction budget exceeded (100000 per call)");
  const CallResult third = vm.call("spin");
  REQUIRE(third.status == CallStatus::kError);
  CHECK(third.error->kind == ScriptErrorKind::kInstructionBudget);
  CHECK(third.error->message == "instruction budget exceeded (250000 per tick)");

  const CallResult refused = vm.call("cheap", 1);
  CHECK(refused.status == CallStatus::kSkippedOverBudget);
  CHECK_FALSE(refused.error.has_value());
  CHECK(vm.call("cheap", 2).status == CallStatus::kSkippedOverBudget);
  CHECK(vm.stats().skipped_over_budget == 2);
  CHECK(vm.stats().calls == 3);
  CHECK(vm.stats().budget_exceeded == 3);

  vm.begin_tick();
  const CallResult again = vm.call("cheap", 1);
  REQUIRE(again.ok());
  CHECK(again.integer(0) == 2);
}

TEST_CASE("a script cannot catch its budget error with pcall or xpcall or a coroutine") {
  ScriptVm vm(ScriptLimits{
      .memory_bytes = 8u << 20, .instructions_per_call = 50'000, .instructions_per_tick = 0});
  load_ok(vm, "sneaky.lua", R"(
function with_pcall()
  while true do pcall(function() while true do end end) end
end
function with_xpcall()
  while true do xpcall(function() while true do end end, function(m) return m end) end
end
function with_resume()
  while true do coroutine.resume(coroutine.create(function() while true do end end)) end
end
function with_wrap()
  while true do pcall(coroutine.wrap(function() while true do end end)) end
end
function ordinary_pcall() return pcall(error, "caught") end
)");
  for (const char* handler : {"with_pcall", "with_xpcall", "with_resume", "with_wrap"}) {
    INFO(handler);
    const CallResult r = vm.call(handler);
    REQUIRE(r.status == CallStatus::kError);
    CHECK(r.error->kind == ScriptErrorKind::kInstructionBudget);
    CHECK(r.error->file == "sneaky.lua");
  }
  // Errors other than the budget's are still the script's to catch.
  const CallResult ordinary = vm.call("ordinary_pcall");
  REQUIRE_MESSAGE(ordinary.ok(), error_text(ordinary));
  CHECK(ordinary.boolean(0) == false);
  CHECK(ordinary.string(1) == "caught");
}

TEST_CASE("a coroutine may still yield across pcall") {
  ScriptVm vm(test::small_limits());
  load_ok(vm, "co.lua", R"(
function run()
  local co = coroutine.wrap(function()
    local ok, v = pcall(function() return coroutine.yield(1) + 1 end)
    return v
  end)
  local first = co()
  return first, co(41)
end
)");
  const CallResult r = vm.call("run");
  REQUIRE_MESSAGE(r.ok(), error_text(r));
  CHECK(r.integer(0) == 1);
  CHECK(r.integer(1) == 42);
}

TEST_CASE("a memory bomb fails on the memory budget and its memory is given back") {
  // Instructions to spare: memory must be what stops it.
  ScriptVm vm(ScriptLimits{
      .memory_bytes = 8u << 20, .instructions_per_call = 0, .instructions_per_tick = 0});
  load_ok(vm, "bomb.lua", R"(function bomb()
  local t = {}
  for i = 1, 1e8 do t[i] = i end
  return #t
end
function fine() return #string.rep("ab", 1000) end
)");
  const std::size_t before = vm.stats().memory_in_use;
  const CallResult r = vm.call("bomb");
  REQUIRE(r.status == CallStatus::kError);
  CHECK(r.error->kind == ScriptErrorKind::kMemory);
  CHECK(r.error->message.find("not enough memory") != std::string::npos);
  CHECK(r.error->message.find("8388608 bytes") != std::string::npos);
  // Lua raises the VM's own memory errors without the message handler: the place is
  // the handler's first line.
  CHECK(r.error->file == "bomb.lua");
  CHECK(r.error->line == 1);
  CHECK(vm.stats().memory_refusals >= 1);
  CHECK(vm.stats().memory_peak <= (8u << 20));
  CHECK(vm.stats().memory_peak > (2u << 20));
  CHECK(vm.stats().memory_in_use < before + (256u << 10));

  const CallResult after = vm.call("fine");
  REQUIRE_MESSAGE(after.ok(), error_text(after));
  CHECK(after.integer(0) == 2000);
}

TEST_CASE("string.rep of a billion bytes fails cleanly on memory") {
  ScriptVm vm(test::small_limits());
  load_ok(vm, "rep.lua", "function rep()\n  local s = string.rep('x', 1e9)\n  return #s\nend\n");
  const CallResult r = vm.call("rep");
  REQUIRE(r.status == CallStatus::kError);
  CHECK(r.error->kind == ScriptErrorKind::kMemory);
  // Lua 5.4.4's lua_error raises its own "not enough memory" as a memory error, without
  // the message handler: the place is the handler's first line here too.
  CHECK(r.error->file == "rep.lua");
  CHECK(r.error->line == 1);
  CHECK(vm.stats().memory_refusals >= 1);
  CHECK(vm.stats().memory_peak < (8u << 20));
  CHECK(vm.call("rep").status == CallStatus::kError);  // the same again, no leak
}

TEST_CASE("a script may catch a memory error and go on within its budget") {
  ScriptVm vm(test::small_limits());
  load_ok(vm, "mem.lua", R"(
function try() local ok, err = pcall(string.rep, 'x', 1e9) return ok, err, #string.rep('y', 10) end
)");
  const CallResult r = vm.call("try");
  REQUIRE_MESSAGE(r.ok(), error_text(r));
  CHECK(r.boolean(0) == false);
  CHECK(r.string(1) == "not enough memory");
  CHECK(r.integer(2) == 10);
}

TEST_CASE("finalizers are refused: they would run with the budget hook off") {
  ScriptVm vm(test::small_limits());
  load_ok(vm, "gc.lua", R"(
function with_gc() return setmetatable({}, {__gc = function() while true do end end}) end
function without_gc() local t = setmetatable({}, {__index = function() return 5 end}) return t.x end
)");
  const CallResult r = vm.call("with_gc");
  REQUIRE(r.status == CallStatus::kError);
  CHECK(r.error->message.find("__gc") != std::string::npos);
  CHECK(r.error->line == 2);
  CHECK(vm.call("without_gc").integer(0) == 5);
}

TEST_CASE("loading counts against the per-call budget but not the tick's") {
  ScriptVm vm(ScriptLimits{
      .memory_bytes = 8u << 20, .instructions_per_call = 20'000, .instructions_per_tick = 20'000});
  const std::vector<ScriptFile> runaway{{"top.lua", "local x = 0\nwhile true do x = x + 1 end\n"}};
  const auto error = vm.load_files(runaway);
  REQUIRE(error.has_value());
  CHECK(error->kind == ScriptErrorKind::kInstructionBudget);
  CHECK(error->file == "top.lua");
  CHECK(error->line == 2);
  load_ok(vm, "ok.lua", "function f() return 1 end");
  CHECK(vm.call("f").ok());  // the tick's budget was untouched by the loads
}
