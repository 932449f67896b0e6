// ScriptHost's hot reload: a good reload swaps the VM, a bad one keeps the running one
// and says where it failed; the binder's functions are there for every new VM; counters
// carry across swaps.
#include <doctest/doctest.h>

#include "script/script_host.hpp"
#include "script_test_util.hpp"

using namespace zone::script;
using zone::script::test::error_text;
using zone::script::test::small_limits;

namespace {

std::vector<ScriptFile> version_files(int version) {
  return {{"rules/version.lua", "function version() return " + std::to_string(version) + " end\n"}};
}

int answer(lua_State* L) {
  lua_pushinteger(L, 42);
  return 1;
}

}  // namespace

TEST_CASE("a host starts empty and a good reload swaps the VM in") {
  ScriptHost host(small_limits(), {});
  CHECK(host.vm().call("version").status == CallStatus::kMissingHandler);
  REQUIRE_FALSE(host.reload(version_files(1)).has_value());
  CHECK(host.vm().call("version").integer(0) == 1);
  REQUIRE_FALSE(host.reload(version_files(2)).has_value());
  CHECK(host.vm().call("version").integer(0) == 2);
  CHECK(host.reloads() == 2);
  CHECK(host.reload_failures() == 0);
}

TEST_CASE("a failed reload keeps the running VM with its state and returns file:line") {
  ScriptHost host(small_limits(), {});
  std::vector<ScriptFile> files = version_files(1);
  files.push_back({"rules/state.lua",
                   "counter = 0\nfunction bump() counter = counter + 1 "
                   "return counter end\n"});
  REQUIRE_FALSE(host.reload(files).has_value());
  REQUIRE(host.vm().call("bump").integer(0) == 1);

  std::vector<ScriptFile> broken = version_files(2);
  broken.push_back({"rules/broken.lua", "function ok() end\n\nfunction bad(\n"});
  const auto error = host.reload(broken);
  REQUIRE(error.has_value());
  CHECK(error->kind == ScriptErrorKind::kSyntax);
  CHECK(error->file == "rules/broken.lua");
  CHECK(error->line == 4);
  CHECK(host.reload_failures() == 1);
  CHECK(host.reloads() == 1);
  // The old VM, with its state.
  CHECK(host.vm().call("version").integer(0) == 1);
  CHECK(host.vm().call("bump").integer(0) == 2);
  CHECK(host.vm().call("ok").status == CallStatus::kMissingHandler);
}

TEST_CASE("on_load runs once in the new VM and its failure fails the reload") {
  ScriptHost host(small_limits(), {});
  REQUIRE_FALSE(
      host.reload(std::vector<ScriptFile>{{"init.lua",
                                           "loads = 0\nfunction on_load() loads = loads + 1 end\n"
                                           "function get() return loads end\n"}})
          .has_value());
  CHECK(host.vm().call("get").integer(0) == 1);

  const auto error = host.reload(std::vector<ScriptFile>{
      {"init.lua", "function on_load()\n  local cfg = nil\n  return cfg.x\nend\n"}});
  REQUIRE(error.has_value());
  CHECK(error->kind == ScriptErrorKind::kRuntime);
  CHECK(error->file == "init.lua");
  CHECK(error->line == 3);
  CHECK(host.vm().call("get").integer(0) == 1);  // still the first VM

  const auto runaway = host.reload(
      std::vector<ScriptFile>{{"init.lua", "function on_load() while true do end end\n"}});
  REQUIRE(runaway.has_value());
  CHECK(runaway->kind == ScriptErrorKind::kInstructionBudget);
  CHECK(host.vm().call("get").integer(0) == 1);
}

TEST_CASE("the binder installs the host's functions in every new VM before its files run") {
  int binds = 0;
  ScriptHost host(small_limits(), {}, [&binds](ScriptVm& vm) {
    ++binds;
    return vm.register_function("game", "answer", answer, nullptr);
  });
  REQUIRE_FALSE(
      host.reload(std::vector<ScriptFile>{
                      {"api.lua", "local a = game.answer()\nfunction get() return a end\n"}})
          .has_value());
  CHECK(host.vm().call("get").integer(0) == 42);
  CHECK(binds == 2);  // the empty VM, then the reloaded one

  ScriptHost refusing(small_limits(), {}, [](ScriptVm&) -> std::optional<ScriptError> {
    return ScriptError{.file = {}, .line = 0, .message = "no game API", .kind = {}};
  });
  const auto error = refusing.reload(version_files(1));
  REQUIRE(error.has_value());
  CHECK(error->message == "no game API");
  CHECK(refusing.vm().call("version").status == CallStatus::kMissingHandler);
}

TEST_CASE("the host's counters carry across reloads") {
  ScriptHost host(small_limits(), {});
  REQUIRE_FALSE(host.reload(version_files(1)).has_value());
  REQUIRE(host.vm().call("version").ok());
  REQUIRE(host.vm().call("version").ok());
  REQUIRE(host.vm().call("absent").status == CallStatus::kMissingHandler);
  REQUIRE_FALSE(
      host.reload(std::vector<ScriptFile>{{"e.lua", "function version() error('x') end\n"}})
          .has_value());
  REQUIRE(host.vm().call("version").status == CallStatus::kError);
  const ScriptStats stats = host.stats();
  CHECK(stats.calls == 3);
  CHECK(stats.errors == 1);
  CHECK(stats.missing_handlers == 3);  // absent, and on_load in each reloaded VM
  CHECK(stats.memory_in_use == host.vm().stats().memory_in_use);
  CHECK(stats.memory_peak >= stats.memory_in_use);
}
