// describe(): the effective config as YAML, every key, loading back to the same config.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "config/config_loader.hpp"
#include "config_test_util.hpp"

using namespace zone::config;
using zone::config::test::check_same;
using zone::config::test::load;

namespace {

ZoneConfig round_trip(const ZoneConfig& c) {
  const std::string text = describe(c);
  const LoadResult r = load_config_string(text, "<describe>");
  INFO(text);
  INFO(r.error_report());
  REQUIRE(r.ok());
  return r.config;
}

}  // namespace

TEST_CASE("describe() of the defaults") {
  const std::string text = describe(ZoneConfig{});
  CHECK(text.find("zone:\n  name: \"zone\"\n") == 0);
  CHECK(text.find("aoi:\n  enabled: true\n  cell_size: 32.0\n  view_radius: 30.0\n"
                  "  hysteresis: 2.0\n") != std::string::npos);
  CHECK(text.find("  behaviour: wander\n") != std::string::npos);
  CHECK(text.find("  bind_address: \"0.0.0.0\"\n") != std::string::npos);
  CHECK(text.find("  idle_fraction: 0.2\n") != std::string::npos);
  CHECK(text.find("log:\n  level: info\n  status_interval_s: 10\n") != std::string::npos);
  check_same(round_trip(ZoneConfig{}), ZoneConfig{});
}

TEST_CASE("describe() names every key - each under its section") {
  const std::string text = describe(ZoneConfig{});
  std::size_t lines = 0;
  for (const char ch : text) lines += ch == '\n';
  std::size_t sections = 0;
  std::string last_section;
  for (const KeyInfo& k : config_keys()) {
    const std::string key(k.key);
    const auto dot = key.find('.');
    const std::string section = key.substr(0, dot);
    const std::string leaf = key.substr(dot + 1);
    if (section != last_section) {
      ++sections;
      last_section = section;
    }
    // The section header, then the key before the next section header.
    const auto at = text.find(section + ":\n");
    REQUIRE_MESSAGE(at != std::string::npos, key);
    const auto body = at + section.size() + 2;
    auto end = body;
    while (end < text.size() && text.compare(end, 2, "  ") == 0) end = text.find('\n', end) + 1;
    const std::string block = text.substr(body, end - body);
    CHECK_MESSAGE(block.find("  " + leaf + ": ") != std::string::npos, key);
  }
  CHECK(lines == config_keys().size() + sections);
}

TEST_CASE("describe() round-trips unusual values exactly") {
  ZoneConfig c;
  c.name = "quote \" backslash \\ colon: hash # ünïcode";
  c.world = {-1234.5678, -0.1, 1e-7, 999.999999};
  c.tick.rate_hz = 1000;
  c.aoi = {false, 0.30000000000000004, 1.0 / 3.0, 0.0};
  c.players = {4079, 99.99, 255};
  c.npcs.count = 0;
  c.npcs.seed = std::numeric_limits<std::uint64_t>::max();
  c.npcs.behaviour = NpcBehaviour::kIdle;
  c.npcs.speed = 0.0;
  c.npcs.turn_rate = 6.283185307179586;
  c.npcs.patrol_length = 1e-300;
  c.npcs.idle_fraction = 1.0;
  c.game.data_file = "configs/game/other game.yaml";
  c.network = {"192.168.10.20", 0, 255, 576, 100000000, 1000, 64, 600000};
  c.limits = {64, 10000, 0};
  c.log = {LogLevel::kError, 86400};
  REQUIRE(validate(c).empty());
  check_same(round_trip(c), c);
  ZoneConfig d;
  d.log.level = LogLevel::kTrace;
  d.npcs.behaviour = NpcBehaviour::kPatrol;
  d.name = "-leading dash";
  check_same(round_trip(d), d);
}

TEST_CASE("describe() of a loaded file reloads to the same config") {
  const LoadResult r = load("aoi: {cell_size: 12.5, enabled: false}\nnpcs: {seed: 42}\n");
  REQUIRE(r.ok());
  check_same(round_trip(r.config), r.config);
  CHECK(describe(round_trip(r.config)) == describe(r.config));
}
