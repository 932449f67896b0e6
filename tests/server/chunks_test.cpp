// The chunk layer through the real zone loop and ENet: a walking player is told which
// chunks to load and unload, the bot checks every ChunkUpdate against its own position
// at the update's tick, and a zone without the layer sends none; the live map is told the
// layer's geometry.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "test_util.hpp"
#include "zone/map_publisher.hpp"

using namespace std::chrono_literals;
using namespace zone;

namespace {

config::ZoneConfig chunk_zone() {
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.world = {0.0, 0.0, 200.0, 200.0};
  cfg.npcs.count = 0;
  cfg.players.max_speed = 40.0;
  cfg.chunks.enabled = true;
  cfg.chunks.size = 16.0;
  cfg.chunks.load_radius = 20.0;
  cfg.chunks.hysteresis = 6.0;
  cfg.chunks.interval_ticks = 2;
  return cfg;
}

}  // namespace

TEST_CASE("chunks: a walking player is told to load ahead and unload behind - exactly") {
  net::EnetLibrary enet;
  const config::ZoneConfig cfg = chunk_zone();
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& walker = clients.add("walker", server.port());
  REQUIRE(clients.pump_until([&] { return walker.chunks().updates > 0; }, 5s));
  // Its own chunk at least, at once.
  CHECK(!walker.chunks().loaded.empty());
  // Walk a 40 m square at 40 m/s: chunks come and go.
  int leg = 0;
  const float dirs[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
  const auto start = std::chrono::steady_clock::now();
  clients.pump(4000ms, [&](client::Bot&) {
    leg = static_cast<int>((std::chrono::steady_clock::now() - start) / 1000ms) % 4;
    return std::pair<float, float>{dirs[leg][0], dirs[leg][1]};
  });
  clients.pump(300ms);
  const client::ChunkInfo& chunks = walker.chunks();
  INFO("first mismatch: ", chunks.first_mismatch);
  CHECK(chunks.updates > 10);
  CHECK(chunks.checks >= chunks.updates - 2);  // the last ones may still wait for a frame
  CHECK(chunks.mismatches == 0);
  // A player holds what is near it, never more than the chunks within the unload radius.
  CHECK(chunks.loaded.size() <= util::ChunkGrid::max_loaded(16.0, 26.0));
  ZoneServer& zone = server.stop();
  CHECK(zone.counters().chunk_updates == chunks.updates);
  CHECK(zone.counters().chunk_unloads > 0);
  CHECK(zone.counters().chunk_loads - zone.counters().chunk_unloads == chunks.loaded.size());
}

TEST_CASE("chunks: a zone without the chunk layer sends no ChunkUpdate") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = chunk_zone();
  cfg.chunks.enabled = false;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("bot", server.port());
  REQUIRE(clients.pump_until([&] { return bot.phase() == client::Bot::Phase::kPlaying; }, 5s));
  clients.pump(500ms, [](client::Bot&) { return std::pair<float, float>{1.0f, 0.0f}; });
  CHECK(bot.chunks().updates == 0);
  CHECK(server.stop().counters().chunk_updates == 0);
}

TEST_CASE("chunks: the live map is told the chunk size and radii (0 when the layer is off)") {
  world::WorldParams wp;
  world::World w(wp);
  MapPublisher map(1);
  MapStats stats;
  map.publish(1, w, stats);
  CHECK(nlohmann::json::parse(map.frame_json(MapWindow{})).at("chunks").at("size") == 0.0);
  stats.chunk_size = 64.0;
  stats.chunk_load_radius = 100.0;
  stats.chunk_unload_radius = 120.0;
  map.publish(2, w, stats);
  const nlohmann::json chunks = nlohmann::json::parse(map.frame_json(MapWindow{})).at("chunks");
  CHECK(chunks.at("size") == 64.0);
  CHECK(chunks.at("load_radius") == 100.0);
  CHECK(chunks.at("unload_radius") == 120.0);
}
