#include <doctest/doctest.h>

#include "config/config_loader.hpp"
#include "harness.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;

namespace {

bool playing(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kPlaying;
}

config::LoadResult loaded(const config::ZoneConfig& c) {
  config::LoadResult r;
  r.config = c;
  r.source = "<test>";
  r.errors = config::validate(c);
  return r;
}

std::string reload(ZoneServer& zone, config::LoadResult r, test::Clients& clients) {
  auto done = zone.request_reload(std::move(r));
  // The zone applies it at its next tick; keep the clients serviced meanwhile.
  while (done.wait_for(0ms) != std::future_status::ready) clients.pump(20ms);
  return done.get();
}

}  // namespace

TEST_CASE("reload: a larger view radius applies live - the player sees more - nobody is dropped") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::small_zone();
  cfg.aoi.view_radius = 10.0;
  cfg.npcs.count = 60;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("watcher", server.port());
  REQUIRE(clients.pump_until([&] { return bot.replica().frames_completed() > 10; }, 5s));
  const std::size_t before = bot.replica().current().entities.size();

  config::ZoneConfig next = cfg;
  next.aoi.view_radius = 120.0;  // most of the 200 x 200 m world
  const std::string report = reload(server.zone(), loaded(next), clients);
  CHECK(report.find("aoi.view_radius 10.0 -> 120.0") != std::string::npos);
  REQUIRE(clients.pump_until([&] { return bot.replica().current().entities.size() > before + 10; },
                             5s));
  // The client is told (ZoneParams), so what it was told in its Welcome stays true.
  CHECK(clients.pump_until([&] { return bot.welcome().view_radius == 120.0f; }, 2s));
  CHECK(playing(bot));
  CHECK(bot.replica().violations().empty());
  CHECK(server.stop().config().aoi.view_radius == 120.0);
}

TEST_CASE("reload: a new cell size rebuilds the grid without a single enter or leave") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::small_zone();  // idle NPCs
  cfg.npcs.count = 80;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("still", server.port());
  REQUIRE(clients.pump_until([&] { return bot.replica().frames_completed() > 10; }, 5s));
  clients.pump(200ms);
  const std::uint64_t enters = bot.replica().enters(), leaves = bot.replica().leaves();
  const auto seen = bot.replica().current().entities.size();
  for (const double cs : {4.0, 64.0, 200.0, 9.5}) {
    config::ZoneConfig next = cfg;
    next.aoi.cell_size = cs;
    reload(server.zone(), loaded(next), clients);
    clients.pump(200ms);
  }
  CHECK(bot.replica().enters() == enters);
  CHECK(bot.replica().leaves() == leaves);
  CHECK(bot.replica().current().entities.size() == seen);
  ZoneServer& zone = server.stop();
  CHECK(zone.world().aoi().config().cell_size == 9.5);
  CHECK(zone.replicator().stats().enter_events == enters);
}

TEST_CASE("reload: an invalid config changes nothing and restart-only keys are reported") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::small_zone();
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("steady", server.port());
  REQUIRE(clients.pump_until([&] { return playing(bot); }, 5s));

  config::LoadResult bad = config::load_config_string("aoi:\n  cell_size: -1\n", "bad.yaml");
  REQUIRE_FALSE(bad.ok());
  const std::string failed = reload(server.zone(), bad, clients);
  CHECK(failed.find("nothing changed") != std::string::npos);
  CHECK(failed.find("bad.yaml:2: aoi.cell_size") != std::string::npos);

  config::ZoneConfig next = cfg;
  next.world.max_x = 300.0;              // restart only
  next.npcs.turn_rate = 2.5;             // live
  next.network.client_bandwidth = 9000;  // live
  const std::string report = reload(server.zone(), loaded(next), clients);
  CHECK(report.find("world.max_x 200.0 -> 300.0") != std::string::npos);
  CHECK(report.find("need a restart") != std::string::npos);
  CHECK(report.find("npcs.turn_rate") != std::string::npos);
  clients.pump(100ms);
  CHECK(playing(bot));
  ZoneServer& zone = server.stop();
  CHECK(zone.config().world.max_x == 200.0);  // not applied
  CHECK(zone.config().aoi.cell_size == cfg.aoi.cell_size);
  CHECK(zone.config().npcs.turn_rate == 2.5);
  CHECK(zone.replicator().params().client_bandwidth == 9000);
  CHECK(zone.world().params().npcs.turn_rate == 2.5);
}

TEST_CASE("reload: speeds the clients were told need a restart - watchers see no impossible jump") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.players.max_speed = 7.0;
  cfg.npcs.speed = 3.0;
  cfg.npcs.behaviour = config::NpcBehaviour::kWander;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& runner = clients.add("runner", server.port());
  client::Bot& watcher = clients.add("watcher", server.port());
  auto run = [&](client::Bot& b) {
    return &b == &runner ? std::pair<float, float>{1.0f, 0.3f} : std::pair<float, float>{};
  };
  REQUIRE(clients.pump_until([&] { return playing(runner) && playing(watcher); }, 5s, run));

  config::ZoneConfig next = cfg;
  next.players.max_speed = 20.0;
  next.npcs.speed = 15.0;
  const std::string report = reload(server.zone(), loaded(next), clients);
  CHECK(report.find("need a restart") != std::string::npos);
  CHECK(report.find("players.max_speed 7.0 -> 20.0") != std::string::npos);
  CHECK(report.find("npcs.speed 3.0 -> 15.0") != std::string::npos);
  clients.pump(1500ms, run);
  CHECK(watcher.replica().violations().empty());
  CHECK(runner.replica().violations().empty());
  ZoneServer& zone = server.stop();
  CHECK(zone.world().params().player_max_speed == 7.0);
  CHECK(zone.world().params().npcs.speed == 3.0);
}
