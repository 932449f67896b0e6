// Handler calls: arguments in, results out, missing handlers, the stack left balanced,
// and C functions bound with register_function.
#include <doctest/doctest.h>

#include <array>
#include <cstring>
#include <stdexcept>

#include "script/script_binding.hpp"
#include "script_test_util.hpp"

using namespace zone::script;
using zone::script::test::error_text;
using zone::script::test::load_ok;
using zone::script::test::small_limits;

TEST_CASE("handlers take integer and number and boolean and string arguments and return values") {
  ScriptVm vm(small_limits());
  load_ok(vm, "rules.lua", R"(
function describe(i, x, flag, name)
  return math.type(i), math.type(x), type(flag), name .. "!"
end
function arithmetic(a, b, c) return a * b + c, a / b, a == 6 end
function nothing() end
function many() return 1, 2, 3, 4, 5, 6 end
function mixed() return nil, {}, "s", 2.5 end
)");
  const CallResult d = vm.call("describe", 7, 1.5, true, "orc");
  REQUIRE_MESSAGE(d.ok(), error_text(d));
  REQUIRE(d.count == 4);
  CHECK(d.string(0) == "integer");
  CHECK(d.string(1) == "float");
  CHECK(d.string(2) == "boolean");
  CHECK(d.string(3) == "orc!");

  const CallResult a = vm.call("arithmetic", 6, 4, -1);
  REQUIRE(a.ok());
  CHECK(a.integer(0) == 23);
  CHECK(std::holds_alternative<std::int64_t>(a.value(0)));
  CHECK(a.number(1) == doctest::Approx(1.5));
  CHECK(std::holds_alternative<double>(a.value(1)));
  CHECK_FALSE(a.integer(1).has_value());  // 1.5 has no integer value
  CHECK(a.boolean(2) == true);

  const CallResult n = vm.call("nothing");
  REQUIRE(n.ok());
  CHECK(n.count == 0);
  CHECK(n.is_nil(0));

  const CallResult m = vm.call("many");
  REQUIRE(m.ok());
  CHECK(m.count == CallResult::kMaxResults);
  CHECK(m.integer(3) == 4);

  // Tables read as nil; a float with an integral value reads as an integer too.
  const CallResult x = vm.call("mixed");
  REQUIRE(x.ok());
  CHECK(x.count == 4);
  CHECK(x.is_nil(0));
  CHECK(x.is_nil(1));
  CHECK(x.string(2) == "s");
  CHECK(x.number(3) == doctest::Approx(2.5));
  CHECK_FALSE(x.string(3).has_value());
}

TEST_CASE("a string argument is copied: it needs to live only during the call") {
  ScriptVm vm(small_limits());
  load_ok(vm, "keep.lua", "function keep(s) kept = s end function get() return kept end");
  {
    std::string name = "temporary name";
    REQUIRE(vm.call("keep", name).ok());
    name.assign(name.size(), 'x');
  }
  CHECK(vm.call("get").string(0) == "temporary name");
}

TEST_CASE("a missing handler is its own status (not an error) and nothing runs") {
  ScriptVm vm(small_limits());
  load_ok(vm, "rules.lua", "function on_join() return 1 end");
  const CallResult r = vm.call("on_leave", 5);
  CHECK(r.status == CallStatus::kMissingHandler);
  CHECK_FALSE(r.error.has_value());
  CHECK(vm.stats().missing_handlers == 1);
  CHECK(vm.stats().calls == 0);
  CHECK(vm.stats().errors == 0);
}

TEST_CASE("a global that is not callable is an error of the call") {
  ScriptVm vm(small_limits());
  load_ok(vm, "rules.lua", "on_tick = 5");
  const CallResult r = vm.call("on_tick");
  REQUIRE(r.status == CallStatus::kError);
  CHECK(r.error->message.find("attempt to call") != std::string::npos);
}

TEST_CASE("many calls ending well or badly leave the Lua stack balanced") {
  // An unbalanced call would leave values on the stack each time: the VM's memory would
  // grow by at least 16 bytes a call (3 MB here), or the stack would overflow.
  ScriptVm vm(small_limits());
  load_ok(vm, "rules.lua", R"(
function ok(a, b) return a + b, "x", a end
function fail(a) error("no " .. a) end
)");
  REQUIRE(vm.call("ok", 1, 2).ok());
  const std::size_t before = vm.stats().memory_in_use;
  for (int i = 0; i < 200'000; ++i) {
    const CallResult r = (i % 3 == 0) ? vm.call("fail", i) : vm.call("ok", i, 1);
    REQUIRE(r.status == ((i % 3 == 0) ? CallStatus::kError : CallStatus::kOk));
    if (i % 7 == 0) REQUIRE(vm.call("absent").status == CallStatus::kMissingHandler);
  }
  CHECK(vm.stats().memory_in_use < before + (1u << 20));
  CHECK(vm.call("ok", 40, 2).integer(0) == 42);
}

namespace {

// game.get(entity, field): entity * 100 + #field, counting its calls in the upvalue.
int game_get(lua_State* L) {
  auto& calls = *static_cast<int*>(ScriptVm::upvalue(L));
  const lua_Integer entity = luaL_checkinteger(L, 1);
  std::size_t length = 0;
  luaL_checklstring(L, 2, &length);
  ++calls;
  lua_pushinteger(L, entity * 100 + static_cast<lua_Integer>(length));
  return 1;
}

int throws(lua_State* L) {
  return guarded_call(L, [](lua_State*) -> int { throw std::runtime_error("boom from C++"); });
}

}  // namespace

TEST_CASE(
    "a registered C function is callable from Lua and its argument errors are the handler's") {
  ScriptVm vm(small_limits());
  int calls = 0;
  REQUIRE_FALSE(vm.register_function("game", "get", game_get, &calls).has_value());
  REQUIRE_FALSE(vm.register_function("", "throws", throws, nullptr).has_value());
  load_ok(vm, "api.lua", R"(
function use(id) return game.get(id, "health") end
function misuse()
  return game.get("not an entity", "health")
end
function explode()
  return throws()
end
)");
  const CallResult r = vm.call("use", 7);
  REQUIRE_MESSAGE(r.ok(), error_text(r));
  CHECK(r.integer(0) == 706);
  CHECK(calls == 1);

  const CallResult bad = vm.call("misuse");
  REQUIRE(bad.status == CallStatus::kError);
  CHECK(bad.error->kind == ScriptErrorKind::kRuntime);
  CHECK(bad.error->file == "api.lua");
  CHECK(bad.error->line == 4);
  CHECK(bad.error->message.find("bad argument #1") != std::string::npos);
  CHECK(calls == 1);

  const CallResult boom = vm.call("explode");
  REQUIRE(boom.status == CallStatus::kError);
  CHECK(boom.error->line == 7);
  CHECK(boom.error->message.find("boom from C++") != std::string::npos);

  // The VM goes on.
  CHECK(vm.call("use", 1).integer(0) == 106);
}

TEST_CASE("register_function adds to an existing table and refuses a global that is not one") {
  ScriptVm vm(small_limits());
  int calls = 0;
  REQUIRE_FALSE(vm.register_function("game", "get", game_get, &calls).has_value());
  REQUIRE_FALSE(vm.register_function("game", "get2", game_get, &calls).has_value());
  load_ok(vm, "api.lua", "number = 5 function both() return game.get(1, ''), game.get2(2, '') end");
  const CallResult r = vm.call("both");
  CHECK(r.integer(0) == 100);
  CHECK(r.integer(1) == 200);
  const auto error = vm.register_function("number", "f", game_get, &calls);
  REQUIRE(error.has_value());
  CHECK(error->message.find("not a table") != std::string::npos);
}

TEST_CASE("a moved VM keeps its state and its budgets") {
  ScriptVm first(small_limits());
  load_ok(first, "rules.lua",
          "count = 0 function bump() count = count + 1 return count end "
          "function spin() while true do end end");
  REQUIRE(first.call("bump").integer(0) == 1);
  ScriptVm second(std::move(first));
  CHECK(second.call("bump").integer(0) == 2);
  ScriptVm third(small_limits());
  third = std::move(second);
  CHECK(third.call("bump").integer(0) == 3);
  const CallResult spin = third.call("spin");
  REQUIRE(spin.status == CallStatus::kError);
  CHECK(spin.error->kind == ScriptErrorKind::kInstructionBudget);
}

TEST_CASE("a redefined handler is the one called: names are cached but functions are not") {
  ScriptVm vm(small_limits());
  load_ok(vm, "rules.lua", R"(
function on_tick(n) return n end
function redefine() function on_tick(n) return n * 10 end end
function define_late() function late(n) return -n end end
)");
  CHECK(vm.call("on_tick", 2).integer(0) == 2);  // numbers only: the direct call
  REQUIRE(vm.call("redefine").ok());
  CHECK(vm.call("on_tick", 2).integer(0) == 20);
  CHECK(vm.call("on_tick", "3").integer(0) == 30);  // a string: through the trampoline
  CHECK(vm.call("late", 4).status == CallStatus::kMissingHandler);
  REQUIRE(vm.call("define_late").ok());
  CHECK(vm.call("late", 4).integer(0) == -4);
}

TEST_CASE("past the cache's size of names calls still work") {
  ScriptVm vm(small_limits());
  std::string source;
  for (int i = 0; i < 300; ++i) {
    source += "function h" + std::to_string(i) + "(a) return a + " + std::to_string(i) + " end\n";
  }
  load_ok(vm, "many.lua", source);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 300; ++i) {
      INFO(i);
      REQUIRE(vm.call("h" + std::to_string(i), 1).integer(0) == 1 + i);
    }
  }
  CHECK(vm.call("h299", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10).integer(0) == 300);  // many arguments
  CHECK(vm.call("nope", 1).status == CallStatus::kMissingHandler);
}

namespace {

// Calls back into its own VM, as a careless game API function might.
int reenter(lua_State* L) {
  auto& vm = *static_cast<ScriptVm*>(ScriptVm::upvalue(L));
  bool refused = false;
  {
    const CallResult inner = vm.call("inner", 1);
    refused = inner.status == CallStatus::kError &&
              inner.error->message.find("another handler") != std::string::npos;
  }
  lua_pushboolean(L, refused ? 1 : 0);
  return 1;
}

}  // namespace

TEST_CASE("a call from inside a handler of the same VM is refused") {
  ScriptVm vm(small_limits());
  REQUIRE_FALSE(vm.register_function("", "reenter", reenter, &vm).has_value());
  load_ok(vm, "rules.lua", R"(
inner_ran = false
function inner() inner_ran = true end
function outer() return reenter(), inner_ran end
)");
  const CallResult r = vm.call("outer");
  REQUIRE_MESSAGE(r.ok(), error_text(r));
  CHECK(r.boolean(0) == true);
  CHECK(r.boolean(1) == false);
  REQUIRE(vm.call("inner").ok());  // outside a handler it runs
  CHECK(vm.call("outer").boolean(1) == true);
}

namespace {

// keep(fn): holds fn in the registry, as the game API's timers do, and notes the reference.
int keep_function(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  *static_cast<int*>(ScriptVm::upvalue(L)) = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

}  // namespace

TEST_CASE("call_ref calls a function held in the registry with the handlers' budgets and errors") {
  ScriptVm vm(small_limits());
  int ref = LUA_NOREF;
  REQUIRE_FALSE(vm.register_function("", "keep", keep_function, &ref).has_value());
  load_ok(vm, "timers.lua", R"(
local count = 0
function hold_adder() keep(function(a, b) count = count + 1; return a + b, count end) end
function hold_failing() keep(function() error("boom") end) end
function hold_loop() keep(function() while true do end end) end
)");
  REQUIRE(vm.call("hold_adder").ok());
  const std::array<ScriptArg, 2> args{make_script_arg(2), make_script_arg(40)};
  const CallResult sum = vm.call_ref(ref, "timer", args);
  REQUIRE_MESSAGE(sum.ok(), error_text(sum));
  CHECK(sum.integer(0) == 42);
  CHECK(sum.integer(1) == 1);
  // Strings take the protected trampoline; the same function answers.
  const std::array<ScriptArg, 2> text{make_script_arg(1), make_script_arg("x")};
  const CallResult bad = vm.call_ref(ref, "timer", text);
  CHECK(bad.status == CallStatus::kError);
  CHECK(error_text(bad).find("timers.lua:3:") == 0);

  REQUIRE(vm.call("hold_failing").ok());
  const CallResult failed = vm.call_ref(ref, "timer", {});
  REQUIRE(failed.status == CallStatus::kError);
  CHECK(error_text(failed) == "timers.lua:4: boom");

  REQUIRE(vm.call("hold_loop").ok());
  const CallResult looped = vm.call_ref(ref, "timer", {});
  REQUIRE(looped.status == CallStatus::kError);
  CHECK(looped.error->kind == ScriptErrorKind::kInstructionBudget);
  CHECK(looped.error->line == 5);

  CHECK(vm.call_ref(LUA_NOREF, "timer", {}).status == CallStatus::kMissingHandler);
  CHECK(vm.stats().missing_handlers == 1);
}
