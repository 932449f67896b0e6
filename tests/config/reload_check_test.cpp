// refuse_dropped_keys(): a reload whose file left out keys that the running config holds
// at a non-default value (a file cut short) is refused, key by key (issue 9, item 14).
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "config/config_loader.hpp"
#include "config_test_util.hpp"

using namespace zone::config;
using zone::config::test::load;

namespace {

const char* const kRunningFile = R"(zone:
  name: east-march
aoi:
  cell_size: 24.0
  view_radius: 42.5
players:
  max_players: 300
network:
  client_bandwidth: 32000
log:
  level: warn
)";

ZoneConfig running() {
  const LoadResult r = load(kRunningFile);
  INFO(r.error_report());
  REQUIRE(r.ok());
  return r.config;
}

}  // namespace

TEST_CASE("reload check: the same file, or one that changes values, passes") {
  const LoadResult same = refuse_dropped_keys(running(), load(kRunningFile));
  CHECK(same.ok());
  std::string changed = kRunningFile;
  changed.replace(changed.find("42.5"), 4, "50.0");
  const LoadResult r = refuse_dropped_keys(running(), load(changed));
  INFO(r.error_report());
  CHECK(r.ok());
  CHECK(r.config.aoi.view_radius == 50.0);
}

TEST_CASE("reload check: a file cut in the middle is refused - every lost key named") {
  // Cut after "view_radius: 42.5": valid YAML, but players, network and log are gone.
  const std::string text = kRunningFile;
  const std::string cut = text.substr(0, text.find("players:"));
  const LoadResult plain = load(cut);
  REQUIRE(plain.ok());  // on its own the cut file is a valid config...
  const LoadResult r = refuse_dropped_keys(running(), plain);
  REQUIRE_FALSE(r.ok());  // ...but not as a reload of the running one
  REQUIRE(r.errors.size() == 3);
  CHECK(r.errors[0].key == "players.max_players");
  CHECK(r.errors[1].key == "network.client_bandwidth");
  CHECK(r.errors[2].key == "log.level");
  CHECK(r.error_report().find(
            "test.yaml: players.max_players: missing from the file (it ends at line 5): the "
            "running zone has 300, and this reload would reset it to the default 1000; expected "
            "the key to be set (a truncated file?). To return to the default on purpose, write "
            "'max_players: 1000' under 'players:'\n") == 0);
  CHECK(r.errors[2].message.find("has warn, and this reload would reset it to the default info") !=
        std::string::npos);
}

TEST_CASE("reload check: cut inside a section - the keys after the cut are named") {
  const std::string text = kRunningFile;
  const std::string cut = text.substr(0, text.find("  view_radius"));
  const LoadResult r = refuse_dropped_keys(running(), load(cut));
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.errors.size() == 4);
  CHECK(r.errors[0].key == "aoi.view_radius");
}

TEST_CASE("reload check: writing the default value returns a key to it on purpose") {
  std::string text = kRunningFile;
  text.replace(text.find("level: warn"), 11, "level: info");
  const LoadResult r = refuse_dropped_keys(running(), load(text));
  INFO(r.error_report());
  CHECK(r.ok());
  CHECK(r.config.log.level == LogLevel::kInfo);
}

TEST_CASE("reload check: a key left out that was at its default anyway changes nothing") {
  // The running file never set npcs.*; a file without log.level while the running
  // config has the default level is fine too.
  ZoneConfig c = running();
  c.log.level = LogLevel::kInfo;
  std::string text = kRunningFile;
  text.erase(text.find("log:"));
  const LoadResult r = refuse_dropped_keys(c, load(text));
  INFO(r.error_report());
  CHECK(r.ok());
}

TEST_CASE("reload check: a value kept by a command-line override is not a lost key") {
  // The running zone was started with --set network.client_bandwidth=32000 on top of a
  // file that does not set it; the reload re-applies the override the same way.
  std::string text = kRunningFile;
  text.erase(text.find("network:"), std::string("network:\n  client_bandwidth: 32000\n").size());
  LoadResult next = load(text);
  REQUIRE(next.ok());
  REQUIRE_FALSE(set_value(next.config, "network.client_bandwidth", "32000").has_value());
  const LoadResult r = refuse_dropped_keys(running(), next);
  INFO(r.error_report());
  CHECK(r.ok());
}

TEST_CASE("reload check: results built in code and invalid files are passed through") {
  LoadResult built;
  built.config = ZoneConfig{};
  built.source = "<test>";
  CHECK(refuse_dropped_keys(running(), built).ok());  // no keys_set: not from a file

  const LoadResult bad = load("aoi:\n  cell_size: -1\n");
  const LoadResult r = refuse_dropped_keys(running(), bad);
  CHECK(r.errors.size() == 1);  // only its own error
}

TEST_CASE("reload check: the shipped configs/zone.yaml cut at every line") {
  std::ifstream in(std::string(ZONE_SOURCE_DIR) + "/configs/zone.yaml");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(!text.empty());
  // A zone running a file that differs from the defaults in its last key: any cut that
  // keeps the YAML valid but loses that key is refused; the whole file is accepted.
  std::string edited = text;
  const auto at = edited.rfind("truth_history_ticks: 64");
  REQUIRE(at != std::string::npos);
  edited.replace(at, 23, "truth_history_ticks: 99");
  const LoadResult full = load(edited);
  REQUIRE(full.ok());
  CHECK(refuse_dropped_keys(full.config, full).ok());
  int refused = 0, cuts = 0;
  for (std::size_t end = edited.find('\n'); end < at; end = edited.find('\n', end + 1)) {
    const LoadResult cut = load(edited.substr(0, end + 1));
    if (!cut.ok()) continue;  // e.g. cut between a section and its keys: still YAML errors
    ++cuts;
    const LoadResult r = refuse_dropped_keys(full.config, cut);
    CHECK_FALSE(r.ok());
    if (!r.ok()) ++refused;
    CHECK(r.errors.back().key == "debug.truth_history_ticks");
  }
  CHECK(cuts > 100);
  CHECK(refused == cuts);
}
