// validate() and set_value(): checking a config changed in code (command-line overrides).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "config/config_loader.hpp"
#include "config_test_util.hpp"

using namespace zone::config;
using zone::config::test::load;

TEST_CASE("the built-in defaults are valid") {
  CHECK(validate(ZoneConfig{}).empty());
}

TEST_CASE("validate() reports range errors by key path - without a line") {
  ZoneConfig c;
  c.aoi.cell_size = -1.0;
  c.network.max_packet_bytes = 9000;
  c.tick.rate_hz = 0;
  c.network.bind_address = "my-host";
  c.name = "";
  const auto errors = validate(c);
  REQUIRE(errors.size() == 5);
  CHECK(errors[0].key == "zone.name");
  CHECK(errors[0].message ==
        "expected a non-empty string of at most 64 bytes, no control characters, got \"\"");
  CHECK(errors[1].key == "tick.rate_hz");
  CHECK(errors[1].message == "expected an integer >= 1 and <= 1000, got 0");
  CHECK(errors[2].key == "aoi.cell_size");
  CHECK(errors[2].message == "expected a number > 0 and <= 10000, got -1.0");
  CHECK(errors[3].key == "network.bind_address");
  CHECK(errors[4].key == "network.max_packet_bytes");
  for (const auto& e : errors) CHECK(e.line == 0);
  CHECK(format_error(errors[2], "<command line>") ==
        "<command line>: aoi.cell_size: expected a number > 0 and <= 10000, got -1.0");
}

TEST_CASE("validate() rejects values the YAML loader could never produce") {
  ZoneConfig c;
  c.aoi.view_radius = std::numeric_limits<double>::quiet_NaN();
  c.world.max_x = std::numeric_limits<double>::infinity();
  c.npcs.behaviour = static_cast<NpcBehaviour>(7);
  c.log.level = static_cast<LogLevel>(9);
  const auto errors = validate(c);
  REQUIRE(errors.size() == 4);
  CHECK(errors[0].key == "world.max_x");
  CHECK(errors[0].message == "expected a number >= -1000000 and <= 1000000, got inf");
  CHECK(errors[1].key == "aoi.view_radius");
  CHECK(errors[1].message == "expected a number > 0 and <= 10000, got nan");
  CHECK(errors[2].key == "npcs.behaviour");
  CHECK(errors[2].message == "expected one of idle, wander, patrol, got 7");
  CHECK(errors[3].key == "log.level");
}

TEST_CASE("validate() runs the checks across keys") {
  ZoneConfig c;
  c.world.min_y = 3000;
  c.aoi.cell_size = 0.01;
  c.network.client_bandwidth = 1000;
  c.network.max_packet_bytes = 1200;
  auto errors = validate(c);
  REQUIRE(errors.size() == 2);  // the grid check waits for valid bounds
  CHECK(errors[0].key == "world.max_y");
  CHECK(errors[0].message == "must be greater than world.min_y (3000), got 2000");
  CHECK(errors[1].key == "network.client_bandwidth");

  c.world.min_y = 0;
  errors = validate(c);
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].key == "aoi.cell_size");
  CHECK(errors[0].message.find("the AOI grid would have 40000000000 cells") == 0);
}

TEST_CASE("validate() holds max_players to what the network hosts can hold, naming the limit") {
  ZoneConfig c;
  c.threads.network = 1;
  c.players.max_players = 3276;
  CHECK(validate(c).empty());
  c.players.max_players = 3277;
  auto errors = validate(c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "players.max_players");
  CHECK(errors[0].message.find("must be at most 3276 with threads.network resolved to 1 host(s)") ==
        0);
  CHECK(errors[0].message.find("4095 connections") != std::string::npos);
  // Beyond ENet's 4,095 peers of one host, which used to pass and then fail to bind.
  c.players.max_players = 4090;
  CHECK(validate(c).size() == 1);
  c.threads.network = 2;
  CHECK(validate(c).empty());
  c.players.max_players = 10000;
  CHECK(validate(c).size() == 1);
  c.threads.network = 4;
  CHECK(validate(c).empty());
}

TEST_CASE("validate() refuses a deferral bound shorter than one tick") {
  ZoneConfig c;
  c.tick.rate_hz = 20;
  c.network.max_deferral_ms = 49;
  auto errors = validate(c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "network.max_deferral_ms");
  CHECK(errors[0].message == "must be at least one tick (50 ms at tick.rate_hz 20), got 49");
  c.network.max_deferral_ms = 50;
  CHECK(validate(c).empty());
}

TEST_CASE("load - then override in code - then validate()") {
  const LoadResult r = load("tick:\n  rate_hz: 20\nnetwork:\n  snapshot_interval_ticks: 10\n");
  REQUIRE(r.ok());
  ZoneConfig c = r.config;
  c.network.port = 9000;  // a fine override
  CHECK(validate(c).empty());
  c.tick.rate_hz = 5;  // now the file's snapshot interval is too long for the new rate
  const auto errors = validate(c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "network.snapshot_interval_ticks");
  CHECK(errors[0].line == 0);
  CHECK(errors[0].message ==
        "must be at most tick.rate_hz (5) so that clients get at least one snapshot per second, "
        "got 10");
}

TEST_CASE("set_value() sets one key from text - with the loader's checks") {
  ZoneConfig c;
  CHECK_FALSE(set_value(c, "aoi.cell_size", "16").has_value());
  CHECK(c.aoi.cell_size == 16.0);
  CHECK_FALSE(set_value(c, "aoi.enabled", "false").has_value());
  CHECK_FALSE(c.aoi.enabled);
  CHECK_FALSE(set_value(c, "npcs.behaviour", "patrol").has_value());
  CHECK(c.npcs.behaviour == NpcBehaviour::kPatrol);
  CHECK_FALSE(set_value(c, "network.bind_address", "127.0.0.1").has_value());
  CHECK(c.network.bind_address == "127.0.0.1");
  CHECK_FALSE(set_value(c, "zone.name", "west wing").has_value());
  CHECK(c.name == "west wing");
  CHECK_FALSE(set_value(c, "log.level", "trace").has_value());
  CHECK(c.log.level == LogLevel::kTrace);
  CHECK(validate(c).empty());

  SUBCASE("a bad value leaves the config untouched") {
    const auto e = set_value(c, "network.port", "70000");
    REQUIRE(e.has_value());
    CHECK(e->key == "network.port");
    CHECK(e->line == 0);
    CHECK(e->message == "expected an integer >= 0 and <= 65535, got 70000");
    CHECK(c.network.port == NetworkConfig{}.port);
  }
  SUBCASE("an unknown key gets a suggestion") {
    const auto e = set_value(c, "aoi.cellsize", "16");
    REQUIRE(e.has_value());
    CHECK(e->message == "unknown key 'aoi.cellsize' (did you mean 'aoi.cell_size'?)");
  }
  SUBCASE("a section is not a key") {
    const auto e = set_value(c, "aoi", "16");
    REQUIRE(e.has_value());
    CHECK(e->message == "unknown key 'aoi'");
  }
  SUBCASE("checks across keys are left to validate()") {
    CHECK_FALSE(set_value(c, "world.min_x", "2500").has_value());
    const auto errors = validate(c);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].key == "world.max_x");
  }
}

TEST_CASE("validate() bounds the chunks a player can hold, naming the keys involved") {
  ZoneConfig c;
  c.chunks.enabled = true;
  c.chunks.size = 16;
  c.chunks.load_radius = 1000;
  const auto errors = validate(c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "chunks.load_radius");
  CHECK(errors[0].message.find("could hold") != std::string::npos);
  CHECK(errors[0].message.find("more than 1024") != std::string::npos);
  c.chunks.load_radius = 200;  // (floor(2 * 328 / 16) + 2)^2 = 1849 > 1024 with the hysteresis
  CHECK(validate(c).size() == 1);
  c.chunks.hysteresis = 16;  // (floor(2 * 216 / 16) + 2)^2 = 841
  CHECK(validate(c).empty());
  c.chunks.size = 16.5;  // clients get it as a float: whole metres only
  const auto fractional = validate(c);
  REQUIRE(fractional.size() == 1);
  CHECK(fractional[0].key == "chunks.size");
  CHECK(fractional[0].message == "expected a whole number of metres, got 16.5");
}

TEST_CASE(
    "config auth: ticket mode needs a valid public key - the world defaults to the zone's name") {
  // RFC 8032's first test key.
  const std::string key = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
  ZoneConfig c;
  CHECK(c.auth.mode == AuthMode::kOpen);
  CHECK(ticket_world(c) == "zone");
  c.auth.mode = AuthMode::kTicket;
  auto errors = validate(c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "auth.public_key");
  CHECK(errors[0].message.find("auth.mode is ticket: expected the login service's public key") ==
        0);
  c.auth.public_key = key;
  CHECK(validate(c).empty());
  c.auth.world = "emerald";
  CHECK(ticket_world(c) == "emerald");

  const auto bad = [](std::string_view k, std::string_view v) {
    ZoneConfig t;
    return set_value(t, k, v);
  };
  CHECK_FALSE(bad("auth.mode", "ticket").has_value());
  CHECK_FALSE(bad("auth.public_key", key).has_value());
  CHECK(bad("auth.mode", "tickets").has_value());
  CHECK(bad("auth.public_key", key.substr(1)).has_value());         // 63 digits
  CHECK(bad("auth.public_key", "zz" + key.substr(2)).has_value());  // not hex
  // All zeros is a small-order point, which would accept forged signatures.
  const auto zero = bad("auth.public_key", std::string(64, '0'));
  REQUIRE(zero.has_value());
  CHECK(zero->message.find("expected an Ed25519 public key as 64 hexadecimal digits") == 0);
  CHECK(bad("auth.world", std::string(65, 'w')).has_value());
  CHECK(bad("auth.world", "new\nline").has_value());

  const LoadResult r = load("auth:\n  mode: ticket\n  world: emerald\n");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].key == "auth.public_key");
  const LoadResult ok = load("auth:\n  mode: ticket\n  public_key: \"" + key + "\"\n");
  CHECK(ok.ok());
}
