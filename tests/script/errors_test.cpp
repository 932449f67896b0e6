// Errors read "file:line: message", for syntax errors at load, runtime errors at load
// and in handlers, with the file named as the host named it.
#include <doctest/doctest.h>

#include "script_test_util.hpp"

using namespace zone::script;
using zone::script::test::error_text;
using zone::script::test::load_ok;
using zone::script::test::small_limits;

TEST_CASE("a syntax error names the file and the line and later files do not load") {
  ScriptVm vm(small_limits());
  const std::vector<ScriptFile> files{
      {"rules/a.lua", "function a() return 1 end\n"},
      {"rules/b.lua", "function b()\n  local y = 2\n  local x = = 3\nend\n"},
      {"rules/c.lua", "function c() return 3 end\n"},
  };
  const auto error = vm.load_files(files);
  REQUIRE(error.has_value());
  CHECK(error->kind == ScriptErrorKind::kSyntax);
  CHECK(error->file == "rules/b.lua");
  CHECK(error->line == 3);
  CHECK(error->message.find("unexpected symbol") != std::string::npos);
  CHECK(error->what() == "rules/b.lua:3: " + error->message);
  CHECK(vm.call("a").integer(0) == 1);
  CHECK(vm.call("c").status == CallStatus::kMissingHandler);
}

TEST_CASE("an error at end of file names the line of the end of file") {
  ScriptVm vm(small_limits());
  const std::vector<ScriptFile> files{{"open.lua", "function f()\n  return 1\n"}};
  const auto error = vm.load_files(files);
  REQUIRE(error.has_value());
  CHECK(error->kind == ScriptErrorKind::kSyntax);
  CHECK(error->file == "open.lua");
  CHECK(error->line == 3);  // the file's last newline starts line 3, where <eof> is
  CHECK(error->message.find("'end' expected") != std::string::npos);
}

TEST_CASE("a runtime error in a file's top level names its file and line") {
  ScriptVm vm(small_limits());
  const std::vector<ScriptFile> files{
      {"first.lua", "x = 1\n"},
      {"second.lua", "local config = nil\n\nlocal speed = config.speed\n"},
  };
  const auto error = vm.load_files(files);
  REQUIRE(error.has_value());
  CHECK(error->kind == ScriptErrorKind::kRuntime);
  CHECK(error->file == "second.lua");
  CHECK(error->line == 3);
  CHECK(error->message.find("attempt to index a nil value") != std::string::npos);
}

TEST_CASE("a runtime error in a handler names the failing line (also in a nested function)") {
  ScriptVm vm(small_limits());
  load_ok(vm, "combat.lua", R"(local function damage(target)
  return target.armor * 2
end

function on_action(player, kind)
  if kind == 1 then
    return damage(nil)
  end
  error("unknown action " .. kind)
end

function throw_table() error({code = 7}) end
function throw_upward() local function check(v) error("bad value", 2) end
  check(1)
end
)");
  const CallResult nested = vm.call("on_action", 1, 1);
  REQUIRE(nested.status == CallStatus::kError);
  CHECK(nested.error->kind == ScriptErrorKind::kRuntime);
  CHECK(nested.error->file == "combat.lua");
  CHECK(nested.error->line == 2);
  CHECK(nested.error->message.find("attempt to index a nil value (local 'target')") !=
        std::string::npos);

  const CallResult raised = vm.call("on_action", 1, 9);
  REQUIRE(raised.status == CallStatus::kError);
  CHECK(raised.error->what() == "combat.lua:9: unknown action 9");

  // error() with a table: the place still comes from the failing frame.
  const CallResult table = vm.call("throw_table");
  REQUIRE(table.status == CallStatus::kError);
  CHECK(table.error->file == "combat.lua");
  CHECK(table.error->line == 12);
  CHECK(table.error->message == "(error object is a table value)");

  // error(msg, 2) blames the caller's line, as Lua says.
  const CallResult upward = vm.call("throw_upward");
  REQUIRE(upward.status == CallStatus::kError);
  CHECK(upward.error->line == 14);
  CHECK(upward.error->message == "bad value");

  CHECK(vm.stats().errors == 4);
  CHECK(vm.call("on_action", 1, 1).status == CallStatus::kError);  // and it still runs
}

TEST_CASE("a long path that Lua shortens in its messages comes back whole") {
  const std::string path = "content/" + std::string(80, 'd') + "/rules/long_file_name.lua";
  ScriptVm vm(small_limits());
  load_ok(vm, path, "function f()\n  return nil + 1\nend\n");
  const CallResult r = vm.call("f");
  REQUIRE(r.status == CallStatus::kError);
  CHECK(r.error->file == path);
  CHECK(r.error->line == 2);
  CHECK(r.error->message.find("attempt to perform arithmetic") != std::string::npos);
}

TEST_CASE("parse_message_location reads Lua's prefix only for known files") {
  const std::vector<std::string> files{"a.lua", "dir/b.lua"};
  const auto plain = parse_message_location("dir/b.lua:12: oops: 3", files);
  REQUIRE(plain.has_value());
  CHECK(plain->file == "dir/b.lua");
  CHECK(plain->line == 12);
  CHECK(plain->rest == "oops: 3");
  const auto shortened = parse_message_location(".../b.lua:4: x", files);
  REQUIRE(shortened.has_value());
  CHECK(shortened->file == "dir/b.lua");
  CHECK(shortened->line == 4);
  CHECK_FALSE(parse_message_location("other.lua:3: x", files).has_value());
  CHECK_FALSE(parse_message_location("a.lua:x: y", files).has_value());
  CHECK_FALSE(parse_message_location("a.lua:3 no space", files).has_value());
  CHECK_FALSE(parse_message_location("not enough memory", files).has_value());
}

TEST_CASE("a binary chunk is refused at load") {
  ScriptVm vm(small_limits());
  // "\x1bLua" starts every binary chunk.
  const std::vector<ScriptFile> files{{"bin.lua", std::string("\x1bLua\x54\x00", 6)}};
  const auto error = vm.load_files(files);
  REQUIRE(error.has_value());
  CHECK(error->message.find("binary chunk") != std::string::npos);
  INFO(error->what());
}
