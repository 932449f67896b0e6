// Loading YAML text: values, and every kind of error with its key, line and message.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>

#include "config/config_loader.hpp"
#include "config_test_util.hpp"

using namespace zone::config;
using zone::config::test::accepts;
using zone::config::test::check_same;
using zone::config::test::error_for;
using zone::config::test::load;
using zone::config::test::only_error;

TEST_CASE("an empty document - or one with only comments - gives the defaults") {
  for (const char* yaml : {"", "# nothing here\n", "\n\n", "---\n"}) {
    const LoadResult r = load(yaml);
    INFO(r.error_report());
    CHECK(r.ok());
    check_same(r.config, ZoneConfig{});
  }
}

TEST_CASE("keys in the file replace the defaults - the rest keep them") {
  const LoadResult r = load(R"(zone:
  name: east-march
world: {min_x: -500, min_y: -250.5, max_x: 500, max_y: 1e3}
tick:
  rate_hz: 30
aoi:
  enabled: false
  cell_size: 50
players:
  max_players: 4079
npcs:
  seed: 18446744073709551615
  behaviour: patrol
  idle_fraction: 1
network:
  bind_address: 127.0.0.1
  port: 0
log:
  level: debug
)");
  INFO(r.error_report());
  REQUIRE(r.ok());
  CHECK(r.config.name == "east-march");
  CHECK(r.config.world.min_x == -500.0);
  CHECK(r.config.world.min_y == -250.5);
  CHECK(r.config.world.max_x == 500.0);
  CHECK(r.config.world.max_y == 1000.0);
  CHECK(r.config.tick.rate_hz == 30);
  CHECK_FALSE(r.config.aoi.enabled);
  CHECK(r.config.aoi.cell_size == 50.0);
  CHECK(r.config.aoi.view_radius == AoiConfig{}.view_radius);  // untouched
  CHECK(r.config.players.max_players == 4079);
  CHECK(r.config.npcs.seed == 18446744073709551615ull);
  CHECK(r.config.npcs.behaviour == NpcBehaviour::kPatrol);
  CHECK(r.config.npcs.idle_fraction == 1.0);
  CHECK(r.config.network.bind_address == "127.0.0.1");
  CHECK(r.config.network.port == 0);
  CHECK(r.config.log.level == LogLevel::kDebug);
  CHECK(r.config.npcs.count == NpcConfig{}.count);
  CHECK(r.config.limits.max_bad_packets == LimitsConfig{}.max_bad_packets);
}

TEST_CASE("the documented example message - exactly") {
  std::string yaml;
  for (int i = 1; i <= 12; ++i) yaml += "# line " + std::to_string(i) + "\n";
  yaml += "aoi:\n  cell_size: -5\n";  // cell_size on line 14
  const LoadResult r = load_config_string(yaml, "configs/zone.yaml");
  REQUIRE(r.errors.size() == 1);
  CHECK(format_error(r.errors[0], r.source) ==
        "configs/zone.yaml:14: aoi.cell_size: expected a number > 0 and <= 10000, got -5");
  CHECK(r.error_report() ==
        "configs/zone.yaml:14: aoi.cell_size: expected a number > 0 and <= 10000, got -5\n");
}

TEST_CASE("format_error leaves out the parts it does not have") {
  CHECK(format_error({"aoi.cell_size", 3, "bad"}, "z.yaml") == "z.yaml:3: aoi.cell_size: bad");
  CHECK(format_error({"aoi.cell_size", 0, "bad"}, "z.yaml") == "z.yaml: aoi.cell_size: bad");
  CHECK(format_error({"", 7, "bad"}, "z.yaml") == "z.yaml:7: bad");
  CHECK(format_error({"", 0, "bad"}, "z.yaml") == "z.yaml: bad");
  CHECK(format_error({"aoi.cell_size", 0, "bad"}, "") == "aoi.cell_size: bad");
  CHECK(format_error({"aoi.cell_size", 2, "bad"}, "") == "line 2: aoi.cell_size: bad");
}

TEST_CASE("a YAML syntax error is reported with its line") {
  SUBCASE("unclosed flow sequence") {
    const ConfigError e =
        only_error(load("zone:\n  name: a\nworld: [1, 2\naoi:\n  enabled: true\n"));
    CHECK(e.key.empty());
    CHECK(e.line >= 3);
    CHECK(e.message.find("YAML syntax error") == 0);
  }
  SUBCASE("bad indentation") {
    const ConfigError e = only_error(load("aoi:\n  cell_size: 3\n    view_radius: 4\n"));
    CHECK(e.line == 3);
    CHECK(e.message.find("YAML syntax error") == 0);
  }
  SUBCASE("tab indentation") {
    const ConfigError e = only_error(load("aoi:\n\tcell_size: 3\n"));
    CHECK(e.line == 2);
    CHECK(e.message.find("YAML syntax error") == 0);
  }
}

TEST_CASE("unknown keys are errors at every level - with the full path - line and a hint") {
  SUBCASE("typo inside a section") {
    const ConfigError e = only_error(load("aoi:\n  enabled: true\n  cel_size: 16\n"));
    CHECK(e.key == "aoi.cel_size");
    CHECK(e.line == 3);
    CHECK(e.message == "unknown key 'aoi.cel_size' (did you mean 'aoi.cell_size'?)");
  }
  SUBCASE("swapped letters") {
    const ConfigError e = only_error(load("aoi:\n  veiw_radius: 16\n"));
    CHECK(e.message == "unknown key 'aoi.veiw_radius' (did you mean 'aoi.view_radius'?)");
  }
  SUBCASE("misspelt section") {
    const ConfigError e = only_error(load("zone:\n  name: z\nnetwrok:\n  port: 1\n"));
    CHECK(e.key == "netwrok");
    CHECK(e.line == 3);
    CHECK(e.message == "unknown key 'netwrok' (did you mean 'network'?)");
  }
  SUBCASE("right key, wrong section") {
    const ConfigError e = only_error(load("world:\n  cell_size: 16\n"));
    CHECK(e.key == "world.cell_size");
    CHECK(e.message ==
          "unknown key 'world.cell_size' (did you mean 'aoi.cell_size' or 'static.cell_size'?)");
  }
  SUBCASE("a key name used in two sections suggests both") {
    const ConfigError e = only_error(load("world:\n  max_size: 16\n"));
    CHECK(e.message ==
          "unknown key 'world.max_size' (did you mean 'party.max_size' or 'guild.max_size'?)");
  }
  SUBCASE("a key at the top level instead of in its section") {
    const ConfigError e = only_error(load("port: 7000\n"));
    CHECK(e.key == "port");
    CHECK(e.line == 1);
    CHECK(e.message == "unknown key 'port' (did you mean 'network.port' or 'admin.port'?)");
  }
  SUBCASE("nothing close: no hint") {
    const ConfigError e = only_error(load("npcs:\n  flavour_text: hello\n"));
    CHECK(e.message == "unknown key 'npcs.flavour_text'");
  }
  SUBCASE("keys are case-sensitive") {
    const ConfigError e = only_error(load("AOI:\n  cell_size: 16\n"));
    CHECK(e.key == "AOI");
    CHECK(e.message == "unknown key 'AOI' (did you mean 'aoi'?)");
  }
  SUBCASE("an unknown section is reported once, not key by key") {
    const LoadResult r = load("admn:\n  a: 1\n  b: 2\n");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].key == "admn");
  }
}

TEST_CASE("a section that is not a map") {
  SUBCASE("a scalar") {
    const ConfigError e = only_error(load("tick: 20\n"));
    CHECK(e.key == "tick");
    CHECK(e.line == 1);
    CHECK(e.message == "expected a section (a map with keys rate_hz), got 20");
  }
  SUBCASE("a list") {
    const ConfigError e = only_error(load("zone:\n  name: z\naoi:\n  - cell_size: 3\n"));
    CHECK(e.key == "aoi");
    CHECK(e.line == 3);
    CHECK(e.message ==
          "expected a section (a map with keys enabled, cell_size, view_radius, hysteresis, "
          "crowd_min_in_view), got "
          "a list");
  }
  SUBCASE("an empty section is fine (every key commented out)") {
    const LoadResult r = load("aoi:\n  # cell_size: 3\nlog:\n");
    CHECK(r.ok());
    check_same(r.config, ZoneConfig{});
  }
  SUBCASE("the document itself is not a map") {
    const ConfigError e = only_error(load("- zone\n- world\n"));
    CHECK(e.key.empty());
    CHECK(e.line == 1);
    CHECK(e.message.find("expected a map of sections (zone, world, tick, aoi, players, npcs, "
                         "network, interest, precision, party, guild, chunks, static, game, "
                         "script, chat, threads, "
                         "limits, auth, persist, log, admin, debug) at the top "
                         "level, got a list") == 0);
  }
}

TEST_CASE("duplicate keys are errors") {
  SUBCASE("in a section") {
    const LoadResult r = load("aoi:\n  cell_size: 16\n  view_radius: 3\n  cell_size: 8\n");
    const ConfigError e = only_error(r);
    CHECK(e.key == "aoi.cell_size");
    CHECK(e.line == 4);
    CHECK(e.message == "duplicate key (first given on line 2); remove one");
  }
  SUBCASE("a whole section twice") {
    const ConfigError e =
        only_error(load("aoi:\n  cell_size: 16\nlog: {}\naoi:\n  enabled: false\n"));
    CHECK(e.key == "aoi");
    CHECK(e.line == 4);
  }
}

TEST_CASE("values of the wrong type") {
  SUBCASE("a word where a number is expected") {
    CHECK(error_for("aoi", "cell_size", "big").message ==
          "expected a number > 0 and <= 10000, got 'big'");
  }
  SUBCASE("a quoted number is a string") {
    CHECK(error_for("network", "port", "\"7777\"").message ==
          "expected an integer >= 0 and <= 65535, got \"7777\" (a quoted string)");
    CHECK(error_for("aoi", "enabled", "'true'").message ==
          "expected true or false, got \"true\" (a quoted string)");
  }
  SUBCASE("a float for an integer key") {
    CHECK(error_for("npcs", "count", "1.5").message ==
          "expected an integer >= 0 and <= 1000000, got 1.5");
    CHECK(error_for("tick", "rate_hz", "20.0").message ==
          "expected an integer >= 1 and <= 1000, got 20.0");
    CHECK(error_for("tick", "rate_hz", "2e1").message ==
          "expected an integer >= 1 and <= 1000, got 2e1");
  }
  SUBCASE("a negative number for an unsigned key") {
    CHECK(error_for("npcs", "seed", "-1").message ==
          "expected an integer >= 0 and <= 18446744073709551615, got -1");
    CHECK(error_for("limits", "max_bad_packets", "-3").message ==
          "expected an integer >= 0 and <= 1000000, got -3");
  }
  SUBCASE("too large for 64 bits") {
    CHECK(error_for("npcs", "seed", "18446744073709551616").message ==
          "expected an integer >= 0 and <= 18446744073709551615, got 18446744073709551616");
  }
  SUBCASE("not a boolean") {
    CHECK(error_for("aoi", "enabled", "yes").message == "expected true or false, got 'yes'");
    CHECK(error_for("aoi", "enabled", "1").message == "expected true or false, got 1");
  }
  SUBCASE("a list or a map where a value is expected") {
    CHECK(error_for("aoi", "cell_size", "[1, 2]").message ==
          "expected a number > 0 and <= 10000, got a list");
    CHECK(error_for("zone", "name", "{a: 1}").message ==
          "expected a non-empty string of at most 64 bytes, no control characters, got a map");
  }
  SUBCASE("an empty value") {
    CHECK(error_for("network", "port", "").message ==
          "expected an integer >= 0 and <= 65535, got an empty value");
    CHECK(error_for("network", "port", "~").message ==
          "expected an integer >= 0 and <= 65535, got an empty value");
  }
  SUBCASE("infinity and NaN are not numbers here") {
    CHECK(error_for("world", "max_x", ".inf").message ==
          "expected a number >= -1000000 and <= 1000000, got '.inf'");
    CHECK(error_for("world", "max_x", "nan").message ==
          "expected a number >= -1000000 and <= 1000000, got 'nan'");
    CHECK(error_for("world", "max_x", "inf").message ==
          "expected a number >= -1000000 and <= 1000000, got 'inf'");
  }
  SUBCASE("a failed key keeps its default") {
    const LoadResult r = load("aoi:\n  cell_size: big\n  view_radius: 12\n");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.config.aoi.cell_size == AoiConfig{}.cell_size);
    CHECK(r.config.aoi.view_radius == 12.0);
  }
}

TEST_CASE("number syntax accepted") {
  CHECK(accepts("aoi", "cell_size", "16"));
  CHECK(accepts("aoi", "cell_size", "16.5"));
  CHECK(accepts("aoi", "cell_size", "+16"));
  CHECK(accepts("aoi", "cell_size", "1.6e1"));
  CHECK(accepts("aoi", "cell_size", ".5"));
  CHECK(accepts("tick", "rate_hz", "+20"));
  CHECK(accepts("tick", "rate_hz", "020"));
  CHECK(accepts("limits", "max_bad_packets", "-0"));
  CHECK_FALSE(accepts("tick", "rate_hz", "0x14"));
  CHECK_FALSE(accepts("tick", "rate_hz", "1_000"));
  CHECK_FALSE(accepts("aoi", "cell_size", "+-3"));
  CHECK_FALSE(accepts("aoi", "cell_size", "3m"));
}

TEST_CASE("ranges - at and just beyond their edges") {
  // The example of the brief.
  CHECK(error_for("aoi", "cell_size", "-5").message ==
        "expected a number > 0 and <= 10000, got -5");
  CHECK(error_for("aoi", "cell_size", "0").message == "expected a number > 0 and <= 10000, got 0");
  CHECK(accepts("aoi", "cell_size", "10000"));
  CHECK_FALSE(accepts("aoi", "cell_size", "10000.5"));

  CHECK(error_for("aoi", "view_radius", "0").message ==
        "expected a number > 0 and <= 10000, got 0");
  CHECK(accepts("aoi", "hysteresis", "0"));
  CHECK_FALSE(accepts("aoi", "hysteresis", "-0.1"));

  CHECK(error_for("network", "max_packet_bytes", "575").message ==
        "expected an integer >= 576 and <= 1372 (ENet's 1400-byte MTU less its 28 header "
        "bytes; anything larger is sent as reliable fragments), got 575");
  CHECK(accepts("network", "max_packet_bytes", "576"));
  CHECK(accepts("network", "max_packet_bytes", "1372"));
  CHECK_FALSE(accepts("network", "max_packet_bytes", "1373"));

  CHECK(accepts("network", "port", "0"));
  CHECK(accepts("network", "port", "65535"));
  CHECK(error_for("network", "port", "65536").message ==
        "expected an integer >= 0 and <= 65535, got 65536");

  CHECK(error_for("tick", "rate_hz", "0").message == "expected an integer >= 1 and <= 1000, got 0");
  CHECK(accepts("tick", "rate_hz", "1"));
  CHECK(accepts("tick", "rate_hz", "1000"));
  CHECK_FALSE(accepts("tick", "rate_hz", "1001"));

  CHECK(error_for("network", "history_ticks", "1").message ==
        "expected an integer >= 2 and <= 64, got 1");
  CHECK(accepts("network", "history_ticks", "2"));
  CHECK(accepts("network", "history_ticks", "64"));
  CHECK_FALSE(accepts("network", "history_ticks", "65"));

  // The key's own range is what the most hosts can ever hold; the threads configured
  // narrow it (validate_test.cpp).
  CHECK(accepts("players", "max_players", "1"));
  CHECK(error_for("players", "max_players", "52417").message ==
        "expected an integer >= 1 and <= 52416, got 52417");
  CHECK_FALSE(accepts("players", "max_players", "0"));
  // Hit points are the game's data now (configs/game/): no longer zone keys.
  CHECK_FALSE(accepts("players", "max_health", "100"));
  CHECK_FALSE(accepts("npcs", "max_health", "100"));
  CHECK(accepts("npcs", "idle_fraction", "0"));
  CHECK(accepts("npcs", "idle_fraction", "1"));
  CHECK_FALSE(accepts("npcs", "idle_fraction", "1.01"));
  CHECK(accepts("npcs", "count", "0"));
  CHECK(accepts("world", "min_x", "-1000000"));
  CHECK_FALSE(accepts("world", "min_x", "-1000001"));
  CHECK_FALSE(accepts("network", "channel_limit", "1"));
  CHECK(accepts("network", "channel_limit", "2"));
  CHECK_FALSE(accepts("network", "channel_limit", "256"));
  CHECK_FALSE(accepts("network", "timeout_ms", "99"));
  CHECK_FALSE(accepts("log", "status_interval_s", "0"));
}

TEST_CASE("enum values: all accepted - anything else lists the allowed ones") {
  const std::pair<const char*, NpcBehaviour> behaviours[] = {
      {"idle", NpcBehaviour::kIdle},
      {"wander", NpcBehaviour::kWander},
      {"patrol", NpcBehaviour::kPatrol},
  };
  for (const auto& [name, value] : behaviours) {
    const LoadResult r = load(std::string("npcs:\n  behaviour: ") + name + "\n");
    REQUIRE(r.ok());
    CHECK(r.config.npcs.behaviour == value);
  }
  const std::pair<const char*, LogLevel> levels[] = {
      {"trace", LogLevel::kTrace}, {"debug", LogLevel::kDebug}, {"info", LogLevel::kInfo},
      {"warn", LogLevel::kWarn},   {"error", LogLevel::kError},
  };
  for (const auto& [name, value] : levels) {
    const LoadResult r = load(std::string("log:\n  level: \"") + name + "\"\n");
    REQUIRE(r.ok());
    CHECK(r.config.log.level == value);
  }
  CHECK(error_for("npcs", "behaviour", "walk").message ==
        "expected one of idle, wander, patrol, got 'walk'");
  CHECK(error_for("npcs", "behaviour", "Wander").message ==
        "expected one of idle, wander, patrol, got 'Wander'");
  CHECK(error_for("log", "level", "warning").message ==
        "expected one of trace, debug, info, warn, error, got 'warning'");
  CHECK(error_for("log", "level", "3").message ==
        "expected one of trace, debug, info, warn, error, got 3");
}

TEST_CASE("enum parse helpers") {
  CHECK(parse_npc_behaviour("idle") == NpcBehaviour::kIdle);
  CHECK(parse_npc_behaviour("patrol") == NpcBehaviour::kPatrol);
  CHECK_FALSE(parse_npc_behaviour("PATROL").has_value());
  CHECK_FALSE(parse_npc_behaviour("").has_value());
  CHECK(to_string(NpcBehaviour::kWander) == "wander");
  CHECK(parse_log_level("warn") == LogLevel::kWarn);
  CHECK_FALSE(parse_log_level("warning").has_value());
  CHECK(to_string(LogLevel::kTrace) == "trace");
  CHECK(to_string(static_cast<LogLevel>(42)).empty());
  CHECK(enum_choices(kNpcBehaviourNames, "|") == "idle|wander|patrol");
  CHECK(enum_choices(kLogLevelNames, "|") == "trace|debug|info|warn|error");
}

TEST_CASE("bind_address must be an IPv4 address") {
  CHECK(accepts("network", "bind_address", "0.0.0.0"));
  CHECK(accepts("network", "bind_address", "127.0.0.1"));
  CHECK(accepts("network", "bind_address", "\"10.1.2.3\""));
  CHECK(accepts("network", "bind_address", "255.255.255.255"));
  const std::string expected =
      "expected an IPv4 address in dotted-quad form, e.g. 0.0.0.0 (all interfaces) or "
      "127.0.0.1, got ";
  CHECK(error_for("network", "bind_address", "localhost").message == expected + "'localhost'");
  CHECK(error_for("network", "bind_address", "256.0.0.1").message == expected + "'256.0.0.1'");
  CHECK(error_for("network", "bind_address", "1.2.3").message == expected + "'1.2.3'");
  CHECK(error_for("network", "bind_address", "\"::1\"").message == expected + "'::1'");
  CHECK(error_for("network", "bind_address", "\" 127.0.0.1\"").message ==
        expected + "' 127.0.0.1'");
  CHECK(error_for("network", "bind_address", "\"\"").message == expected + "''");
}

TEST_CASE("zone.name must be a short - printable - non-empty string") {
  CHECK(accepts("zone", "name", "Starter Valley"));
  CHECK(accepts("zone", "name", "\"1234\""));
  CHECK(accepts("zone", "name", "1234"));  // a plain scalar is a string for a string key
  CHECK(accepts("zone", "name", "\"Zürich-3\""));
  CHECK(accepts("zone", "name", std::string(64, 'a')));
  const std::string expected =
      "expected a non-empty string of at most 64 bytes, no control characters, got ";
  CHECK(error_for("zone", "name", "\"\"").message == expected + "''");
  CHECK(error_for("zone", "name", "").message == expected + "an empty value");
  CHECK(error_for("zone", "name", std::string(65, 'a')).message ==
        expected + "'" + std::string(60, 'a') + "...'");
  CHECK(error_for("zone", "name", "\"a\\tb\"").message == expected + "'a\\x09b'");
}

TEST_CASE("checks across keys") {
  SUBCASE("world min must be below max, reported on the max key") {
    const LoadResult r = load("world:\n  min_x: 100\n  max_x: 100\n  min_y: 5\n  max_y: -5\n");
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0].key == "world.max_x");
    CHECK(r.errors[0].line == 3);
    CHECK(r.errors[0].message == "must be greater than world.min_x (100), got 100");
    CHECK(r.errors[1].key == "world.max_y");
    CHECK(r.errors[1].line == 5);
    CHECK(r.errors[1].message == "must be greater than world.min_y (5), got -5");
  }
  SUBCASE("only the min is in the file: the line is the min's") {
    const ConfigError e = only_error(load("world:\n  min_x: 5000\n"));
    CHECK(e.key == "world.max_x");
    CHECK(e.line == 2);
    CHECK(e.message == "must be greater than world.min_x (5000), got 2000");
  }
  SUBCASE("the AOI grid must stay within 16 Mi cells") {
    // 2000 m / 0.1 m = 20000 columns and rows: 4e8 cells.
    const ConfigError e = only_error(load("aoi:\n  cell_size: 0.1\n"));
    CHECK(e.key == "aoi.cell_size");
    CHECK(e.line == 2);
    CHECK(e.message ==
          "the AOI grid would have 400000000 cells for a 2000 x 2000 m world, more than "
          "16777216; expected a cell size of at least 0.489, got 0.1");
    // The suggested size itself passes; exactly 4096 x 4096 cells passes too.
    CHECK(accepts("aoi", "cell_size", "0.489"));
    CHECK(load("world: {max_x: 4096, max_y: 4096}\naoi: {cell_size: 1}\n").ok());
    CHECK_FALSE(load("world: {max_x: 4096, max_y: 4097}\naoi: {cell_size: 1}\n").ok());
  }
  SUBCASE("grid check counts partial cells (ceil)") {
    // 4096.5 m wide: 4097 columns of 1 m.
    const ConfigError e =
        only_error(load("world: {max_x: 4096.5, max_y: 4096}\naoi: {cell_size: 1}\n"));
    CHECK(e.key == "aoi.cell_size");
    CHECK(e.line == 2);
  }
  SUBCASE("bandwidth must fit one full packet per second") {
    const ConfigError e =
        only_error(load("network:\n  max_packet_bytes: 1372\n  client_bandwidth: 1200\n"));
    CHECK(e.key == "network.client_bandwidth");
    CHECK(e.line == 3);
    CHECK(e.message ==
          "must be at least network.max_packet_bytes (1372) so that a client can receive one "
          "full packet per second, got 1200");
  }
  SUBCASE("at least one snapshot per second") {
    const ConfigError e =
        only_error(load("tick: {rate_hz: 10}\nnetwork:\n  snapshot_interval_ticks: 11\n"));
    CHECK(e.key == "network.snapshot_interval_ticks");
    CHECK(e.line == 3);
    CHECK(load("tick: {rate_hz: 10}\nnetwork:\n  snapshot_interval_ticks: 10\n").ok());
  }
  SUBCASE("a key with its own error is not checked again against others") {
    // max_x is out of range: one error, not a second "must be greater than" one.
    const LoadResult r = load("world:\n  min_x: 10\n  max_x: -2000000\n");
    const ConfigError e = only_error(r);
    CHECK(e.key == "world.max_x");
    CHECK(e.message.find("expected a number") == 0);
  }
}

TEST_CASE("every error in a file is reported - in line order - checks across keys last") {
  const LoadResult r = load_config_string(R"(zone:
  name: ""
world:
  min_x: 10
  max_x: 5
tick:
  rate_hz: fast
aoi:
  enabled: true
  cel_size: 16
  view_radius: -1
npcs:
  behaviour: dance
  count: 2.5
network:
  port: 99999
  bind_address: localhost
  max_packet_bytes: 9000
lgo:
  level: info
limits: 3
)",
                                          "many.yaml");
  INFO(r.error_report());
  REQUIRE(r.errors.size() == 12);
  const std::pair<const char*, int> expected[] = {
      {"zone.name", 2},
      {"tick.rate_hz", 7},
      {"aoi.cel_size", 10},
      {"aoi.view_radius", 11},
      {"npcs.behaviour", 13},
      {"npcs.count", 14},
      {"network.port", 16},
      {"network.bind_address", 17},
      {"network.max_packet_bytes", 18},
      {"lgo", 19},
      {"limits", 21},
      {"world.max_x", 5},  // across keys: last
  };
  for (std::size_t i = 0; i < r.errors.size(); ++i) {
    CAPTURE(i);
    CHECK(r.errors[i].key == expected[i].first);
    CHECK(r.errors[i].line == expected[i].second);
    CHECK_FALSE(r.errors[i].message.empty());
  }
  CHECK(r.error_report().find("many.yaml:21: limits: expected a section") != std::string::npos);
}

TEST_CASE("a ',' where a document should start is a syntax error - not a hang") {
  // yaml-cpp 0.7 alone never returns on these (and eats memory until it is killed);
  // found by tests/fuzz/fuzz_config.
  const std::pair<const char*, int> cases[] = {{",", 1},
                                               {"\"a\"\n,", 2},
                                               {", 2, {a: b}]}]\n", 1},
                                               {"# c\n,]\n", 2},
                                               {"aoi:\n  cell_size: 3\n---\n, x\n", 4}};
  for (const auto& [yaml, line] : cases) {
    CAPTURE(yaml);
    auto loading = std::async(std::launch::async, [y = std::string(yaml)] { return load(y); });
    if (loading.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      std::fprintf(stderr, "load() did not return within 5 s on %s\n", yaml);
      std::_Exit(1);  // the loading thread cannot be stopped, and it allocates without end
    }
    const ConfigError e = only_error(loading.get());
    CHECK(e.line == line);
    CHECK(e.message.find("YAML syntax error: unexpected ','") == 0);
  }
}

TEST_CASE("more than one YAML document is refused") {
  const ConfigError e = only_error(load("zone: {name: a}\n---\nzone: {name: b}\n"));
  CHECK(e.key.empty());
  CHECK(e.line == 3);
  CHECK(e.message == "expected one YAML document, found 2 (remove the '---' separators)");
}

TEST_CASE("a key that is not a plain name") {
  const ConfigError e = only_error(load("aoi:\n  [a, b]: 1\n"));
  CHECK(e.key == "aoi");
  CHECK(e.line == 2);
  CHECK(e.message == "expected a key name, got a list");
}

TEST_CASE("a missing file is one clear error naming the path") {
  const LoadResult r = load_config_file("/nonexistent/dir/zone.yaml");
  const ConfigError e = only_error(r);
  CHECK(r.source == "/nonexistent/dir/zone.yaml");
  CHECK(e.line == 0);
  CHECK(r.error_report() ==
        "/nonexistent/dir/zone.yaml: cannot open config file: No such file or directory\n");
}

TEST_CASE("a directory is not a config file") {
  const LoadResult r = load_config_file(ZONE_SOURCE_DIR "/configs");
  CHECK(only_error(r).message == "cannot read config file: it is a directory");
}
