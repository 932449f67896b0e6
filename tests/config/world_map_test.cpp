// The world map (configs/world.yaml): the shipped file, good maps, and every kind of bad
// one with its key, line and message; a zone's config checked against the map.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/world_map.hpp"

using namespace zone::config;

namespace {

WorldMapResult load(const std::string& yaml) {
  return load_world_map_string(yaml, "world.yaml");
}

// Two zones side by side, west of x = 1000 and east of it.
const std::string kTwoZones = R"(nats:
  url: "nats://127.0.0.1:4222"
ghosts:
  distance: 50
zones:
  - name: west
    rect: {min_x: 0, min_y: 0, max_x: 1000, max_y: 1000}
    game: "127.0.0.1:7777"
    admin: "127.0.0.1:7780"
  - name: east
    rect: {min_x: 1000, min_y: 0, max_x: 2000, max_y: 1000}
    game: "127.0.0.1:7787"
    admin: "127.0.0.1:7790"
)";

// The one error of a result, checked against its key and line.
ConfigError only_error(const WorldMapResult& r, const std::string& key, int line) {
  INFO(r.error_report());
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors.front().key == key);
  CHECK(r.errors.front().line == line);
  return r.errors.front();
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("world map: the shipped configs/world.yaml loads, and its zones are neighbours") {
  const WorldMapResult r = load_world_map_file(ZONE_SOURCE_DIR "/configs/world.yaml");
  INFO(r.error_report());
  REQUIRE(r.ok());
  REQUIRE(r.map.zones.size() == 2);
  CHECK(r.map.nats_url == "nats://127.0.0.1:4222");
  CHECK(r.map.subject_prefix == "world");
  CHECK(r.map.ghost_distance == 40.0);
  CHECK(r.map.ghost_timeout_ms == 1000);
  CHECK(r.map.neighbours(0) == std::vector<std::size_t>{1});
  // The shipped zone config fits the shipped world (view 30 + hysteresis 2 <= 40).
  const LoadResult zone = load_config_file(ZONE_SOURCE_DIR "/configs/zone.yaml");
  REQUIRE(zone.ok());
  ZoneConfig c = zone.config;
  apply_world_zone(r.map, 1, c);
  CHECK(check_zone_in_world(r.map, 1, c).empty());
}

TEST_CASE("world map: a good map gives every value, and applies to a zone's config") {
  const WorldMapResult r = load(kTwoZones);
  INFO(r.error_report());
  REQUIRE(r.ok());
  const WorldMap& m = r.map;
  CHECK(m.ghost_distance == 50.0);
  CHECK(m.ghost_timeout_ms == 1000);  // default
  REQUIRE(m.find("east").has_value());
  CHECK(*m.find("east") == 1);
  CHECK_FALSE(m.find("north").has_value());
  CHECK(m.zones[1].rect.min_x == 1000.0);
  CHECK(m.zones[1].game.host == "127.0.0.1");
  CHECK(m.zones[1].game.port == 7787);
  CHECK(m.zones[1].admin.port == 7790);
  ZoneConfig c;
  apply_world_zone(m, 1, c);
  CHECK(c.name == "east");
  CHECK(c.world.min_x == 1000.0);
  CHECK(c.world.max_x == 2000.0);
  CHECK(c.network.port == 7787);
  CHECK(c.admin.port == 7790);
}

TEST_CASE("world map: neighbours are the zones within the ghost distance, corners included") {
  // 2 x 2 square of 100 m zones, and one far away.
  const WorldMapResult r = load(R"(nats: {url: "nats://localhost:4222"}
ghosts: {distance: 10, timeout_ms: 500}
zones:
  - {name: sw, rect: {min_x: 0, min_y: 0, max_x: 100, max_y: 100}, game: "h:1", admin: "h:2"}
  - {name: se, rect: {min_x: 100, min_y: 0, max_x: 200, max_y: 100}, game: "h:3", admin: "h:4"}
  - {name: nw, rect: {min_x: 0, min_y: 100, max_x: 100, max_y: 200}, game: "h:5", admin: "h:6"}
  - {name: ne, rect: {min_x: 100, min_y: 100, max_x: 200, max_y: 200}, game: "h:7", admin: "h:8"}
  - {name: far, rect: {min_x: 500, min_y: 500, max_x: 600, max_y: 600}, game: "h:9", admin: "h:0"}
)");
  INFO(r.error_report());
  REQUIRE(r.ok());
  CHECK(r.map.ghost_timeout_ms == 500);
  CHECK(r.map.neighbours(0) == std::vector<std::size_t>{1, 2, 3});
  CHECK(r.map.neighbours(3) == std::vector<std::size_t>{0, 1, 2});
  CHECK(r.map.neighbours(4).empty());
}

TEST_CASE("world map: bad values name the key, the line and what was expected") {
  SUBCASE("URL") {
    const auto e = only_error(load(replace(kTwoZones, "\"nats://127.0.0.1:4222\"", "http://x")),
                              "nats.url", 2);
    CHECK(e.message.find("expected a URL nats://HOST:PORT or tls://HOST:PORT, got 'http://x'") !=
          std::string::npos);
  }
  SUBCASE("ghost distance") {
    const auto e =
        only_error(load(replace(kTwoZones, "distance: 50", "distance: -1")), "ghosts.distance", 4);
    CHECK(e.message.find("expected a number > 0") != std::string::npos);
  }
  SUBCASE("a quoted number is a string") {
    only_error(load(replace(kTwoZones, "distance: 50", "distance: \"50\"")), "ghosts.distance", 4);
  }
  SUBCASE("zone name") {
    const auto e = only_error(load(replace(kTwoZones, "name: east", "name: \"east zone\"")),
                              "zones[1].name", 10);
    CHECK(e.message.find("letters, digits") != std::string::npos);
  }
  SUBCASE("address") {
    const auto e = only_error(load(replace(kTwoZones, "\"127.0.0.1:7787\"", "\"127.0.0.1\"")),
                              "zones[1].game", 12);
    CHECK(e.message.find("expected HOST:PORT") != std::string::npos);
  }
  SUBCASE("port out of range") {
    only_error(load(replace(kTwoZones, "\"127.0.0.1:7790\"", "\"127.0.0.1:70000\"")),
               "zones[1].admin", 13);
  }
  SUBCASE("coordinate") {
    only_error(load(replace(kTwoZones, "max_x: 2000", "max_x: wide")), "zones[1].rect.max_x", 11);
  }
  SUBCASE("empty rectangle") {
    const auto e =
        only_error(load(replace(kTwoZones, "max_x: 2000", "max_x: 1000")), "zones[1].rect", 11);
    CHECK(e.message.find("expected min_x < max_x") != std::string::npos);
  }
}

TEST_CASE("world map: unknown, duplicate and missing keys") {
  SUBCASE("unknown key with a suggestion") {
    const auto e =
        only_error(load(replace(kTwoZones, "distance: 50", "distanse: 50")), "ghosts.distanse", 4);
    CHECK(e.message == "unknown key 'distanse' (did you mean 'distance'?)");
  }
  SUBCASE("duplicate key") {
    const auto e =
        only_error(load(replace(kTwoZones, "distance: 50", "distance: 50\n  distance: 60")),
                   "ghosts.distance", 5);
    CHECK(e.message.find("duplicate key (first given on line 4)") != std::string::npos);
  }
  SUBCASE("missing key of a zone") {
    const auto e =
        only_error(load(replace(kTwoZones, "    admin: \"127.0.0.1:7790\"\n", "")), "zones[1]", 10);
    CHECK(e.message == "missing key 'admin'");
  }
  SUBCASE("missing URL") {
    const auto e = only_error(
        load(replace(kTwoZones, "  url: \"nats://127.0.0.1:4222\"\n", "  subject_prefix: w\n")),
        "nats.url", 0);
    CHECK(e.message.find("missing") != std::string::npos);
  }
  SUBCASE("no zones") {
    only_error(load("nats: {url: \"nats://a:1\"}\nzones: []\n"), "zones", 2);
  }
  SUBCASE("empty file") {
    CHECK_FALSE(load("").ok());
    CHECK_FALSE(load("# only a comment\n").ok());
  }
  SUBCASE("not a map") {
    only_error(load("- a\n- b\n"), "", 1);
  }
  SUBCASE("YAML syntax error") {
    const WorldMapResult r = load("nats: {url: [\n");
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors.front().message.find("YAML syntax error") != std::string::npos);
  }
}

TEST_CASE("world map: zones must have unique names and disjoint rectangles") {
  SUBCASE("duplicate name") {
    const auto e =
        only_error(load(replace(kTwoZones, "name: east", "name: west")), "zones[1].name", 10);
    CHECK(e.message.find("duplicate zone name 'west' (zones[0], line 6)") != std::string::npos);
  }
  SUBCASE("overlap") {
    const auto e =
        only_error(load(replace(kTwoZones, "min_x: 1000", "min_x: 999")), "zones[1].rect", 10);
    CHECK(e.message.find("overlaps zone 'west'") != std::string::npos);
  }
  SUBCASE("every error at once, in line order") {
    std::string bad = replace(kTwoZones, "distance: 50", "distance: 0");
    bad = replace(bad, "max_x: 2000", "max_x: x");
    const WorldMapResult r = load(bad);
    INFO(r.error_report());
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0].key == "ghosts.distance");
    CHECK(r.errors[1].key == "zones[1].rect.max_x");
    CHECK(r.error_report().find("world.yaml:4: ghosts.distance: expected") == 0);
  }
}

TEST_CASE("world map: a file that is missing or not a regular file is one error") {
  const WorldMapResult r = load_world_map_file("/nonexistent/world.yaml");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.error_report().find("/nonexistent/world.yaml: cannot open config file") == 0);
  CHECK(load_world_map_file("/dev/zero").errors.size() == 1);
}

TEST_CASE("world map: a zone's view must fit within the ghost distance, with the AOI on") {
  const WorldMapResult r = load(kTwoZones);
  REQUIRE(r.ok());
  ZoneConfig c;
  apply_world_zone(r.map, 0, c);
  CHECK(check_zone_in_world(r.map, 0, c).empty());
  c.aoi.view_radius = 49.0;  // + hysteresis 2 > 50
  auto errors = check_zone_in_world(r.map, 0, c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "aoi.view_radius");
  CHECK(errors[0].message.find("= 51 m, expected at most the world map's ghosts.distance (50 m)") !=
        std::string::npos);
  c.aoi.view_radius = 30.0;
  c.aoi.enabled = false;
  errors = check_zone_in_world(r.map, 0, c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "aoi.enabled");
  c.aoi.enabled = true;
  c.world.max_x = 1200.0;
  errors = check_zone_in_world(r.map, 0, c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "world.min_x");
}

TEST_CASE("world map: in ticket mode every zone must name the world (auth.world)") {
  const WorldMapResult r = load(kTwoZones);
  REQUIRE(r.ok());
  ZoneConfig c;
  apply_world_zone(r.map, 0, c);
  c.auth.mode = AuthMode::kTicket;
  c.auth.public_key = "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c";
  auto errors = check_zone_in_world(r.map, 0, c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "auth.world");
  CHECK(errors[0].message.find("expected the world's name in ticket mode") == 0);
  c.auth.world = "emerald";
  CHECK(check_zone_in_world(r.map, 0, c).empty());
  c.auth = AuthConfig{};  // open mode: nothing to name
  CHECK(check_zone_in_world(r.map, 0, c).empty());
}

TEST_CASE("world map: handoff timeouts and the public address clients are sent to") {
  const WorldMapResult defaults = load(kTwoZones);
  REQUIRE(defaults.ok());
  CHECK(defaults.map.handoff_timeout_ms == 2000);
  CHECK(defaults.map.arrival_timeout_ms == 10000);
  // Without `public`, clients are sent to the game address.
  CHECK(defaults.map.zones[1].public_game.host == "127.0.0.1");
  CHECK(defaults.map.zones[1].public_game.port == 7787);

  const WorldMapResult set = load(replace(
      replace(kTwoZones,
              "ghosts:", "handoff:\n  timeout_ms: 500\n  arrival_timeout_ms: 3000\nghosts:"),
      "    admin: \"127.0.0.1:7790\"",
      "    admin: \"127.0.0.1:7790\"\n    public: \"east.example.com:9000\""));
  INFO(set.error_report());
  REQUIRE(set.ok());
  CHECK(set.map.handoff_timeout_ms == 500);
  CHECK(set.map.arrival_timeout_ms == 3000);
  CHECK(set.map.zones[1].public_game.host == "east.example.com");
  CHECK(set.map.zones[1].public_game.port == 9000);
  CHECK(set.map.zones[1].game.port == 7787);

  SUBCASE("a timeout out of range") {
    const auto e =
        only_error(load(replace(kTwoZones, "ghosts:", "handoff:\n  timeout_ms: 50\nghosts:")),
                   "handoff.timeout_ms", 4);
    CHECK(e.message.find("expected an integer >= 100 and <= 60000, got 50") != std::string::npos);
  }
  SUBCASE("an unknown handoff key") {
    const WorldMapResult r =
        load(replace(kTwoZones, "ghosts:", "handoff:\n  timeout: 500\nghosts:"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.errors.front().key == "handoff.timeout");
  }
  SUBCASE("a wildcard game address needs a public one") {
    const auto e = only_error(load(replace(kTwoZones, "\"127.0.0.1:7787\"", "\"0.0.0.0:7787\"")),
                              "zones[1].public", 10);
    CHECK(e.message.find("wildcard") != std::string::npos);
    CHECK(e.message.find("expected public: HOST:PORT") != std::string::npos);
    const WorldMapResult fixed =
        load(replace(replace(kTwoZones, "\"127.0.0.1:7787\"", "\"0.0.0.0:7787\""),
                     "    admin: \"127.0.0.1:7790\"",
                     "    admin: \"127.0.0.1:7790\"\n    public: \"10.1.2.3:7787\""));
    CHECK(fixed.ok());
  }
  SUBCASE("a public address must be one clients can reach") {
    for (const char* bad : {"\"0.0.0.0:7787\"", "\"east.example.com:0\"", "\"nope\""}) {
      const auto e = only_error(
          load(replace(kTwoZones, "    admin: \"127.0.0.1:7790\"",
                       std::string("    admin: \"127.0.0.1:7790\"\n    public: ") + bad)),
          "zones[1].public", 14);
      CHECK(e.message.find("expected") != std::string::npos);
    }
  }
}

TEST_CASE("world map: NATS credentials and TLS are paths to files, checked when a zone starts") {
  const std::string secure = replace(kTwoZones, "  url: \"nats://127.0.0.1:4222\"\n",
                                     "  url: \"tls://nats.internal:4222\"\n"
                                     "  password_file: \"/run/zone/{zone}.password\"\n"
                                     "  tls:\n"
                                     "    ca_file: \"/run/zone/ca.pem\"\n"
                                     "    cert_file: \"/run/zone/{zone}.pem\"\n"
                                     "    key_file: \"/run/zone/{zone}.key\"\n");
  SUBCASE("good") {
    const WorldMapResult r = load(secure);
    INFO(r.error_report());
    REQUIRE(r.ok());
    CHECK(r.map.nats_url == "tls://nats.internal:4222");
    CHECK(r.map.auth.password_file == "/run/zone/{zone}.password");
    CHECK(r.map.auth.tls_ca_file == "/run/zone/ca.pem");
    CHECK(r.map.auth.tls_cert_file == "/run/zone/{zone}.pem");
    CHECK(r.map.auth.tls_key_file == "/run/zone/{zone}.key");
    CHECK(zone_path(r.map.auth.tls_key_file, "east") == "/run/zone/east.key");
    CHECK(zone_path("{zone}/{zone}", "w") == "w/w");
  }
  SUBCASE("the shipped map has none of them") {
    CHECK(load(kTwoZones).map.auth.password_file.empty());
  }
  SUBCASE("a certificate without its key") {
    const auto e = only_error(load(replace(secure, "    key_file: \"/run/zone/{zone}.key\"\n", "")),
                              "nats.tls.key_file", 4);
    CHECK(e.message.find("needs both") != std::string::npos);
  }
  SUBCASE("TLS without the CA") {
    const auto e = only_error(load(replace(secure, "    ca_file: \"/run/zone/ca.pem\"\n", "")),
                              "nats.tls.ca_file", 2);
    CHECK(e.message.find("CA certificate") != std::string::npos);
  }
  SUBCASE("a tls:// URL without the CA") {
    only_error(load(replace(kTwoZones, "nats://127.0.0.1", "tls://127.0.0.1")), "nats.tls.ca_file",
               2);
  }
  SUBCASE("a path that is not a string") {
    only_error(load(replace(secure, "\"/run/zone/{zone}.password\"", "[a]")), "nats.password_file",
               3);
  }
  SUBCASE("unknown key under tls") {
    only_error(load(replace(secure, "{zone}.key\"\n", "{zone}.key\"\n    verify: true\n")),
               "nats.tls.verify", 8);
  }
}

TEST_CASE("world map: a zone's password file is read and checked") {
  std::string dir = (std::filesystem::temp_directory_path() / "zone-secrets-XXXXXX").string();
  REQUIRE(mkdtemp(dir.data()) != nullptr);
  const std::string map_text =
      replace(kTwoZones, "  url: \"nats://127.0.0.1:4222\"\n",
              "  url: \"nats://127.0.0.1:4222\"\n  password_file: \"" + dir + "/{zone}.pw\"\n");
  const WorldMapResult r = load(map_text);
  REQUIRE(r.ok());
  const auto write = [&](const std::string& zone, const std::string& text, mode_t mode) {
    const std::string path = dir + "/" + zone + ".pw";
    std::ofstream(path) << text;
    REQUIRE(::chmod(path.c_str(), mode) == 0);
  };
  BusSecrets s;
  SUBCASE("each zone its own file, its name as the user") {
    write("west", "w-secret-1\n", 0600);
    write("east", "e-secret-2", 0400);
    CHECK(load_bus_secrets(r.map, 0, s).empty());
    CHECK(s.user == "west");
    CHECK(s.password == "w-secret-1");
    CHECK_FALSE(s.tls);
    CHECK(load_bus_secrets(r.map, 1, s).empty());
    CHECK(s.user == "east");
    CHECK(s.password == "e-secret-2");
  }
  SUBCASE("missing") {
    const auto e = load_bus_secrets(r.map, 0, s);
    REQUIRE(e.size() == 1);
    CHECK(e[0].key == "nats.password_file");
    CHECK(e[0].message.find("cannot read") != std::string::npos);
    CHECK(s.user.empty());
  }
  SUBCASE("readable by others") {
    write("west", "w-secret-1\n", 0644);
    const auto e = load_bus_secrets(r.map, 0, s);
    REQUIRE(e.size() == 1);
    CHECK(e[0].message.find("mode 0644") != std::string::npos);
  }
  SUBCASE("empty, or with spaces or quotes") {
    for (const std::string& bad :
         std::vector<std::string>{"\n", "two words", "quo\"te", std::string(1025, 'x')}) {
      CAPTURE(bad);
      write("west", bad, 0600);
      const auto e = load_bus_secrets(r.map, 0, s);
      REQUIRE(e.size() == 1);
      CHECK(e[0].message.find("printable ASCII") != std::string::npos);
    }
  }
  SUBCASE("a directory") {
    std::filesystem::create_directory(dir + "/west.pw");
    const auto e = load_bus_secrets(r.map, 0, s);
    REQUIRE(e.size() == 1);
    CHECK(e[0].message.find("not a regular file") != std::string::npos);
  }
  SUBCASE("without a password file: no user") {
    CHECK(load_bus_secrets(load(kTwoZones).map, 0, s).empty());
    CHECK(s.user.empty());
  }
  std::filesystem::remove_all(dir);
}
