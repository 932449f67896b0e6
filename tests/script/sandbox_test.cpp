// The sandbox: what a script can reach (and what it cannot), print to the host's log,
// and a math.random that repeats with the host's seed.
#include <doctest/doctest.h>

#include "script_test_util.hpp"

using namespace zone::script;
using zone::script::test::error_text;
using zone::script::test::load_ok;
using zone::script::test::small_limits;

TEST_CASE("io os package require debug dofile loadfile load string.dump are absent") {
  ScriptVm vm(small_limits());
  load_ok(vm, "probe.lua", R"(
function kind(name) return type(_G[name]) end
function dump_kind() return type(string.dump), type(("").dump) end
function reach_os()
  return os.time()
end
function reach_require() return require("io") end
function reach_load() return load("return 1")() end
function reach_debug() return debug.getinfo(1) end
function reach_io() return io.open("/etc/passwd") end
function reach_dofile() return dofile("/etc/passwd") end
function reach_loadfile() return loadfile("/etc/passwd") end
function reach_package() return package.loadlib("libc.so.6", "system") end
)");
  for (const char* name :
       {"io", "os", "package", "require", "debug", "dofile", "loadfile", "load", "warn"}) {
    INFO(name);
    CHECK(vm.call("kind", name).string(0) == "nil");
  }
  const CallResult dump = vm.call("dump_kind");
  CHECK(dump.string(0) == "nil");
  CHECK(dump.string(1) == "nil");

  const CallResult os = vm.call("reach_os");
  REQUIRE(os.status == CallStatus::kError);
  CHECK(os.error->line == 5);
  CHECK(os.error->message.find("global 'os'") != std::string::npos);
  for (const char* handler : {"reach_require", "reach_load", "reach_debug", "reach_io",
                              "reach_dofile", "reach_loadfile", "reach_package"}) {
    INFO(handler);
    const CallResult r = vm.call(handler);
    REQUIRE(r.status == CallStatus::kError);
    CHECK(r.error->kind == ScriptErrorKind::kRuntime);
    CHECK(r.error->file == "probe.lua");
  }
}

TEST_CASE("string patterns are not in the sandbox: find is a plain search") {
  // Lua's matcher backtracks without running an instruction or allocating: a pattern such
  // as ("a?"):rep(40) .. ("a"):rep(40) would hold the zone for hours, outside every budget.
  ScriptVm vm(small_limits());
  load_ok(vm, "patterns.lua", R"(
function kinds() return type(string.match), type(string.gmatch), type(string.gsub),
                        type(("").match) end
function find_dot() return string.find("a.b", ".") end
function find_from() return ("xyxy"):find("y", 3) end
function bomb()
  local n = 40
  return string.find(("a"):rep(n), ("a?"):rep(n) .. ("a"):rep(n))
end
)");
  const CallResult k = vm.call("kinds");
  REQUIRE(k.status == CallStatus::kOk);
  for (int i = 0; i < 4; ++i) CHECK(k.string(i) == "nil");
  const CallResult dot = vm.call("find_dot");
  REQUIRE(dot.status == CallStatus::kOk);
  CHECK(dot.integer(0) == 2);  // the '.' itself, not any character
  CHECK(dot.integer(1) == 2);
  const CallResult from = vm.call("find_from");
  CHECK(from.integer(0) == 4);
  // Plain: the "pattern" is text, so this answers at once (not found).
  const CallResult bomb = vm.call("bomb");
  REQUIRE(bomb.status == CallStatus::kOk);
  CHECK(bomb.is_nil(0));
}

TEST_CASE("the allowed libraries are there") {
  ScriptVm vm(small_limits());
  load_ok(vm, "libs.lua", R"(
function use()
  local t = {3, 1, 2}
  table.sort(t)
  local co = coroutine.wrap(function(a) coroutine.yield(a * 2) end)
  return table.concat(t, ","), string.format("%d-%s", 5, "x"), math.floor(2.7),
         utf8.char(72, 105) .. tostring(co(21))
end
)");
  const CallResult r = vm.call("use");
  REQUIRE_MESSAGE(r.ok(), error_text(r));
  CHECK(r.string(0) == "1,2,3");
  CHECK(r.string(1) == "5-x");
  CHECK(r.integer(2) == 2);
  CHECK(r.string(3) == "Hi42");
}

TEST_CASE("collectgarbage offers only \"count\"") {
  ScriptVm vm(small_limits());
  load_ok(vm, "gc.lua", R"(
function count() return collectgarbage("count"), collectgarbage() end
function collect() collectgarbage("collect") end
)");
  const CallResult count = vm.call("count");
  REQUIRE_MESSAGE(count.ok(), error_text(count));
  CHECK(count.number(0) > 1.0);  // kilobytes
  CHECK(*count.number(0) * 1024 <= static_cast<double>(vm.stats().memory_in_use) + 1024);
  const CallResult collect = vm.call("collect");
  REQUIRE(collect.status == CallStatus::kError);
  CHECK(collect.error->message.find("only \"count\"") != std::string::npos);
}

TEST_CASE("print goes to the host's log callback (one call per print)") {
  std::vector<std::string> lines;
  ScriptOptions options;
  options.log = [&lines](std::string_view line) { lines.emplace_back(line); };
  ScriptVm vm(small_limits(), std::move(options));
  load_ok(vm, "log.lua", R"(
print("loaded")
function greet(name) print("hello", name, 3, nil, true) end
)");
  REQUIRE(vm.call("greet", "orc").ok());
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "loaded");
  CHECK(lines[1] == "hello\torc\t3\tnil\ttrue");
}

TEST_CASE("print without a log callback discards and a throwing callback is a handler error") {
  ScriptVm quiet(small_limits());
  load_ok(quiet, "log.lua", "function p() print('x') return 1 end");
  CHECK(quiet.call("p").integer(0) == 1);

  ScriptOptions options;
  options.log = [](std::string_view) { throw std::runtime_error("log full"); };
  ScriptVm loud(small_limits(), std::move(options));
  load_ok(loud, "log.lua", "function p()\n  print('x')\nend");
  const CallResult r = loud.call("p");
  REQUIRE(r.status == CallStatus::kError);
  CHECK(r.error->line == 2);
  CHECK(r.error->message.find("log callback") != std::string::npos);
}

namespace {

std::vector<std::int64_t> draws(std::int64_t seed) {
  ScriptOptions options;
  options.random_seed = seed;
  ScriptVm vm(small_limits(), std::move(options));
  load_ok(vm, "dice.lua", "function roll() return math.random(1, 1000000) end");
  std::vector<std::int64_t> out;
  for (int i = 0; i < 8; ++i) out.push_back(vm.call("roll").integer(0).value_or(-1));
  return out;
}

}  // namespace

TEST_CASE(
    "math.random repeats with the same seed and differs with another and cannot be reseeded") {
  const auto a = draws(42);
  CHECK(a == draws(42));
  CHECK(a != draws(43));
  for (const std::int64_t v : a) CHECK((v >= 1 && v <= 1'000'000));

  ScriptVm vm(small_limits());
  load_ok(vm, "seed.lua", "function f() return type(math.randomseed) end");
  CHECK(vm.call("f").string(0) == "nil");
}
