// The sample client's parts that need no window: its command line, the camera, the chat
// box's editing, and walking toward a clicked point.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "camera.hpp"
#include "chat_box.hpp"
#include "input.hpp"
#include "options.hpp"

namespace {

std::optional<viewer::Options> parse(const std::vector<std::string>& args, std::string& error) {
  bool help = false;
  return viewer::parse_options(args, error, help);
}

}  // namespace

TEST_CASE(
    "client kit: viewer: the command line: defaults, the server, size, screenshot and refusals") {
  std::string error;
  const auto defaults = parse({}, error);
  REQUIRE(defaults);
  CHECK(defaults->host == "127.0.0.1");
  CHECK(defaults->port == 7777);
  CHECK(defaults->screenshot.empty());

  const auto o = parse({"--server", "10.1.2.3:7001", "--name", "alice", "--size", "1024x600",
                        "--screenshot", "out.bmp", "--after", "2.5"},
                       error);
  REQUIRE_MESSAGE(o, error);
  CHECK(o->host == "10.1.2.3");
  CHECK(o->port == 7001);
  CHECK(o->name == "alice");
  CHECK(o->width == 1024);
  CHECK(o->height == 600);
  CHECK(o->screenshot == "out.bmp");
  CHECK(o->after == doctest::Approx(2.5));

  CHECK_FALSE(parse({"--server", "10.1.2.3"}, error));
  CHECK_FALSE(parse({"--server", "host:0"}, error));
  CHECK_FALSE(parse({"--size", "100x100"}, error));
  CHECK_FALSE(parse({"--name", ""}, error));
  CHECK_FALSE(parse({"--after", "-1"}, error));
  CHECK_FALSE(parse({"--frobnicate", "1"}, error));
  CHECK_FALSE(parse({"--name"}, error));
  bool help = false;
  CHECK_FALSE(viewer::parse_options({"--help"}, error, help));
  CHECK(help);
  CHECK(error.find("--screenshot") != std::string::npos);
}

TEST_CASE("client kit: viewer: the command line reads a login ticket as zone-ticket prints it") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("viewer-ticket-" + std::to_string(::getpid()) + ".hex"))
                               .string();
  std::string error;
  {
    std::ofstream(path) << "00ff10Ab\n";
    const auto o = parse({"--ticket-file", path}, error);
    REQUIRE_MESSAGE(o, error);
    CHECK(o->ticket == std::vector<std::uint8_t>{0x00, 0xff, 0x10, 0xab});
  }
  std::ofstream(path) << "00f\n";
  CHECK_FALSE(parse({"--ticket-file", path}, error));
  std::ofstream(path) << "zz\n";
  CHECK_FALSE(parse({"--ticket-file", path}, error));
  std::filesystem::remove(path);
  CHECK_FALSE(parse({"--ticket-file", path}, error));
}

TEST_CASE("client kit: viewer: the camera puts its centre at the view's centre, north up") {
  viewer::Camera c;
  c.view = {0, 20, 800, 600};
  c.centre_x = 100.0;
  c.centre_y = 50.0;
  c.scale = 4.0;
  CHECK(c.to_px(100.0) == doctest::Approx(400.0));
  CHECK(c.to_py(50.0) == doctest::Approx(320.0));
  CHECK(c.to_px(101.0) == doctest::Approx(404.0));  // east is right
  CHECK(c.to_py(51.0) == doctest::Approx(316.0));   // north is up
  CHECK(c.to_world_x(c.to_px(123.25)) == doctest::Approx(123.25));
  CHECK(c.to_world_y(c.to_py(-7.5)) == doctest::Approx(-7.5));
  CHECK(c.shows(100.0, 50.0));
  CHECK_FALSE(c.shows(100.0, 50.0 + 80.0));  // 320 px up: above the view
}

TEST_CASE("client kit: viewer: the chat box keeps the last lines and edits the typed one") {
  viewer::ChatBox chat(3);
  CHECK_FALSE(chat.typing());
  CHECK_FALSE(chat.enter());  // starts a line
  CHECK(chat.typing());
  chat.type("hi ");
  chat.type("\xc3\xa9t\xc3\xa9");  // UTF-8
  chat.backspace();                // one character, two bytes
  CHECK(chat.enter() == std::optional<std::string>("hi \xc3\xa9t"));
  CHECK_FALSE(chat.typing());
  chat.type("ignored");  // not typing: nothing
  chat.enter();
  CHECK_FALSE(chat.enter());  // an empty line is not said
  chat.enter();
  chat.type("dropped");
  chat.cancel();
  CHECK_FALSE(chat.typing());
  for (int i = 0; i < 5; ++i) chat.add("line " + std::to_string(i));
  REQUIRE(chat.lines().size() == 3);
  CHECK(chat.lines().front() == "line 2");
  CHECK(chat.lines().back() == "line 4");
}

TEST_CASE(
    "client kit: viewer: a clicked point is walked to at full speed, slower over the last metre, "
    "then left") {
  viewer::Controls controls;
  CHECK(controls.intent(false, {0.0, 0.0}).x == 0.0F);  // no target, no keys: still
  controls.walk_to({10.0, 0.0});
  viewer::Controls::Intent i = controls.intent(false, {0.0, 0.0});
  CHECK(i.x == doctest::Approx(1.0));
  CHECK(i.y == doctest::Approx(0.0));
  i = controls.intent(false, {7.0, 4.0});  // toward it from wherever the player is
  CHECK(i.x == doctest::Approx(3.0 / 5.0));
  CHECK(i.y == doctest::Approx(-4.0 / 5.0));
  i = controls.intent(false, {9.5, 0.0});
  CHECK(i.x == doctest::Approx(0.5));
  CHECK(controls.intent(true, {9.5, 0.0}).x == 0.0F);  // typing a chat line: still
  REQUIRE(controls.walk_target());
  i = controls.intent(false, {9.9, 0.0});  // there
  CHECK(i.x == 0.0F);
  CHECK_FALSE(controls.walk_target());
}
