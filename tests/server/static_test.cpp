// The static layer through the real zone loop and ENet: a player is sent every object of
// the static cells around it once, exactly as the map has them (the bot checks each
// message against the map and its own position); it cannot walk into a rock; a map that
// does not load stops the zone from starting; a zone without a map sends nothing.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "protocol/quantize.hpp"
#include "test_util.hpp"
#include "zone/map_publisher.hpp"

using namespace std::chrono_literals;
using namespace zone;

namespace {

struct Rock {
  double x, y, r;
};

// Objects on a 20 m lattice over the 200 m world, all of one radius.
std::vector<Rock> lattice(double radius) {
  std::vector<Rock> rocks;
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 10; ++j) rocks.push_back({10.0 + 20.0 * i, 10.0 + 20.0 * j, radius});
  }
  return rocks;
}

std::string write_map(const std::vector<Rock>& rocks) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("zone-static-" + std::to_string(::getpid()) + ".yaml"))
                               .string();
  std::ofstream out(path);
  out << "objects:\n";
  for (const Rock& r : rocks) out << "  - [rock, " << r.x << ", " << r.y << ", " << r.r << "]\n";
  out << "  - [tree, 0.004, 199.996, 0.5]\n";  // rounded to the centimetre: (0, 200)
  return path;
}

config::ZoneConfig static_zone(const std::string& map) {
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.world = {0.0, 0.0, 200.0, 200.0};
  cfg.npcs.count = 0;
  cfg.players.max_speed = 20.0;
  cfg.statics.map_file = map;
  cfg.statics.cell_size = 50.0;
  cfg.statics.view_radius = 40.0;
  cfg.statics.interval_ticks = 2;
  return cfg;
}

// The map as GET /debug/static gives it, for the bot's exact check.
std::shared_ptr<client::StaticTruth> truth_of(const std::vector<Rock>& rocks) {
  nlohmann::json j;
  j["cell_size"] = 50.0;
  j["world"] = {0.0, 0.0, 200.0, 200.0};
  auto& objects = j["objects"] = nlohmann::json::array();
  std::uint32_t id = 0;
  for (const Rock& r : rocks) objects.push_back({++id, 1, r.x, r.y, r.r});  // rocks
  objects.push_back({++id, 0, 0.0, 200.0, 0.5});
  auto truth = std::make_shared<client::StaticTruth>();
  std::string error;
  REQUIRE_MESSAGE(client::StaticTruth::parse(j.dump(), *truth, error), error);
  return truth;
}

double metres(protocol::Values v, protocol::Field axis) {
  return protocol::position_metres(v, axis);
}

}  // namespace

TEST_CASE("static: a walking player gets each nearby cell's objects once - exactly the map's") {
  net::EnetLibrary enet;
  // Small ones, which a walker slides past.
  const std::vector<Rock> rocks = lattice(0.3);
  const std::string map = write_map(rocks);
  config::ZoneConfig cfg = static_zone(map);
  cfg.statics.view_radius = 20.0;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& walker = clients.add("walker", server.port());
  walker.set_static_truth(truth_of(rocks));
  REQUIRE(clients.pump_until([&] { return walker.statics().updates > 0; }, 5s));
  // Walk 80 m across the world and back: new cells come into reach, old ones are never
  // sent again.
  const float way = metres(walker.self(), protocol::kX) < 100.0 ? 1.0f : -1.0f;
  const auto start = std::chrono::steady_clock::now();
  clients.pump(8000ms, [&](client::Bot&) {
    const bool out = std::chrono::steady_clock::now() - start < 4000ms;
    return std::pair<float, float>{out ? way : -way, 0.1f};
  });
  clients.pump(300ms);
  const client::StaticInfo& s = walker.statics();
  INFO("first mismatch: ", s.first_mismatch);
  CHECK(s.mismatches == 0);
  CHECK(s.updates >= 2);
  CHECK(s.checks >= s.updates - 2);  // the last ones may still wait for a frame
  CHECK(s.truth_cells >= 4);         // a 40 m radius always reaches several 50 m cells
  CHECK(s.objects_received > 0);
  ZoneServer& zone = server.stop();
  CHECK(zone.counters().static_messages == s.updates);
  CHECK(zone.counters().static_objects_sent == s.objects_received);
  std::remove(map.c_str());
}

namespace {

// 1,900 tiny rocks in each of the 16 cells of 50 m: about 38 kB of StaticObjects a cell,
// some 600 kB for a player who sees the whole world.
std::vector<Rock> dense_rocks() {
  std::vector<Rock> rocks;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int n = 0; n < 1900; ++n) {
        rocks.push_back({50.0 * i + 1.0 + (n % 40) * 1.2, 50.0 * j + 1.0 + (n / 40) * 1.0, 0.05});
      }
    }
  }
  return rocks;
}

// The largest StaticObjects message: 2,048 objects of 20 bytes, 1,024 cells of 8 bytes
// and the envelope, under 50 kB.
constexpr std::uint64_t kMaxStaticMessage = 50000;

}  // namespace

TEST_CASE("static: a dense map reaches a client paced by network.client_bandwidth") {
  net::EnetLibrary enet;
  const std::vector<Rock> rocks = dense_rocks();
  const std::string map = write_map(rocks);
  config::ZoneConfig cfg = static_zone(map);
  cfg.statics.view_radius = 300.0;  // every cell, from anywhere
  cfg.network.client_bandwidth = 200000;
  const double per_tick = 200000.0 / cfg.tick.rate_hz;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("bot", server.port());
  bot.set_static_truth(truth_of(rocks));
  // The frame tick the bot holds when each message arrives (it stands still).
  std::vector<std::uint32_t> at;
  REQUIRE(clients.pump_until(
      [&] {
        while (at.size() < bot.statics().updates) at.push_back(bot.replica().current().tick);
        return bot.statics().checks > 0;
      },
      60s));
  const client::StaticInfo& s = bot.statics();
  INFO("first mismatch: ", s.first_mismatch);
  CHECK(s.mismatches == 0);
  CHECK(s.truth_cells == 16);  // every cell, exactly the map's
  ZoneServer& zone = server.stop();
  const std::uint64_t bytes = zone.counters().static_bytes_sent;
  CHECK(bytes > 500000);
  CHECK(zone.counters().static_messages == s.updates);
  REQUIRE(at.size() >= 2);
  // Paced: what went in the ticks from the first message to the last is what the budget
  // paid for in them (a tick of slack at each end for when a message is seen), plus the
  // first message, which goes at once.
  const std::uint32_t ticks = at.back() - at.front() + 2;
  INFO("bytes ", bytes, " over ", ticks, " ticks, messages ", s.updates);
  CHECK(static_cast<double>(bytes) <= per_tick * ticks + kMaxStaticMessage);
  CHECK(zone.counters().static_waits_budget > 0);
  CHECK(zone.counters().static_waits_unacked == 0);
  std::remove(map.c_str());
}

TEST_CASE("static: a client that never acknowledges is sent at most 64 KiB and one message") {
  net::EnetLibrary enet;
  const std::vector<Rock> rocks = dense_rocks();
  const std::string map = write_map(rocks);
  config::ZoneConfig cfg = static_zone(map);
  cfg.statics.view_radius = 300.0;
  cfg.network.client_bandwidth = 10000000;  // the budget is not what holds it back
  cfg.network.timeout_ms = 60000;           // nor the input time-out
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("mute", server.port());
  bot.set_static_truth(truth_of(rocks));
  clients.mute(bot);  // no input: no ack_tick, ever
  REQUIRE(clients.pump_until([&] { return bot.statics().updates > 0; }, 10s));
  // 40 ticks on (the frames keep coming): an acknowledging client would have it all.
  const std::uint32_t first = bot.replica().current().tick;
  REQUIRE(clients.pump_until([&] { return bot.replica().current().tick > first + 40; }, 30s));
  // 20 bytes an object (the zone's own counters are read once it stops).
  const std::uint64_t held = bot.statics().objects_received * 20;
  INFO("static object bytes the silent client got: ", held);
  CHECK(held > 0);
  CHECK(held <= kStaticUnackedBytes + kMaxStaticMessage);
  CHECK(bot.statics().checks == 0);  // not all of it
  // Once it acknowledges, the rest follows: held back, not dropped.
  clients.mute(bot, false);
  REQUIRE(clients.pump_until([&] { return bot.statics().checks > 0; }, 60s));
  INFO("first mismatch: ", bot.statics().first_mismatch);
  CHECK(bot.statics().mismatches == 0);
  CHECK(bot.statics().truth_cells == 16);
  const ZoneCounters& c = server.stop().counters();
  CHECK(c.static_bytes_sent > 500000);
  CHECK(c.static_waits_unacked > 0);
  std::remove(map.c_str());
}

TEST_CASE("static: a player walking at a rock stops at its rim and never gets inside") {
  net::EnetLibrary enet;
  const std::vector<Rock> rocks = lattice(3.0);
  const std::string map = write_map(rocks);
  test::ServerThread server(static_zone(map));
  test::Clients clients;
  client::Bot& bot = clients.add("bot", server.port());
  REQUIRE(clients.pump_until([&] { return bot.phase() == client::Bot::Phase::kPlaying; }, 5s));
  REQUIRE(clients.pump_until([&] { return bot.ack_tick() != 0; }, 5s));
  // The nearest rock, and straight at its centre, every input.
  const double x0 = metres(bot.self(), protocol::kX), y0 = metres(bot.self(), protocol::kY);
  const Rock* target = &rocks.front();
  for (const Rock& r : rocks) {
    if (std::hypot(r.x - x0, r.y - y0) < std::hypot(target->x - x0, target->y - y0)) target = &r;
  }
  double closest = 1e9;
  clients.pump(2500ms, [&](client::Bot& b) {
    const double x = metres(b.self(), protocol::kX), y = metres(b.self(), protocol::kY);
    closest = std::min(closest, std::hypot(x - target->x, y - target->y));
    const double dx = target->x - x, dy = target->y - y, len = std::max(1e-9, std::hypot(dx, dy));
    return std::pair<float, float>{static_cast<float>(dx / len), static_cast<float>(dy / len)};
  });
  const double x = metres(bot.self(), protocol::kX), y = metres(bot.self(), protocol::kY);
  // At the rim (to the centimetre the frame holds), pressed against it.
  CHECK(closest >= target->r - 0.01);
  CHECK(std::hypot(x - target->x, y - target->y) <= target->r + 0.05);
  CHECK(server.stop().world().collisions() > 10);
  std::remove(map.c_str());
}

TEST_CASE("static: a map that does not load stops the zone, naming the line") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("zone-bad-static-" + std::to_string(::getpid()) + ".yaml"))
                               .string();
  std::ofstream(path) << "objects:\n  - [rock, 10, 10, 2]\n  - [boulder, 20, 20, 2]\n";
  Logger log(config::LogLevel::kError);
  try {
    ZoneServer zone(static_zone(path), log);
    FAIL("the zone started with a bad map");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(what.find(path + ":3: objects[1]: expected the kind tree, rock or resource") !=
                      std::string::npos,
                  what);
  }
  std::remove(path.c_str());
}

TEST_CASE("static: a zone without a map sends no StaticObjects and blocks nothing") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = static_zone("");
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("bot", server.port());
  REQUIRE(clients.pump_until([&] { return bot.phase() == client::Bot::Phase::kPlaying; }, 5s));
  clients.pump(500ms, [](client::Bot&) { return std::pair<float, float>{1.0f, 0.0f}; });
  CHECK(bot.statics().updates == 0);
  ZoneServer& zone = server.stop();
  CHECK(zone.counters().static_messages == 0);
  CHECK(zone.world().collisions() == 0);
  CHECK(zone.world().statics().empty());
}

TEST_CASE("static: the live map is sent the objects in its window, or none past the cap") {
  world::WorldParams wp;
  auto objects = std::make_shared<std::vector<world::StaticObject>>();
  objects->push_back({1, world::StaticKind::kTree, 10.0, 10.0, 0.5});
  objects->push_back({2, world::StaticKind::kRock, 500.0, 500.0, 3.25});
  objects->push_back({3, world::StaticKind::kResource, 1500.0, 20.0, 1.0});
  wp.statics = {objects, 64.0};
  world::World w(wp);
  MapPublisher map(1);
  map.publish(1, w, MapStats{});
  const nlohmann::json all = nlohmann::json::parse(map.frame_json(MapWindow{}));
  CHECK(all.at("statics_in_window") == 3);
  CHECK(all.at("statics").size() == 12);
  // A window round the rock only: [x, y, radius, kind].
  const nlohmann::json one =
      nlohmann::json::parse(map.frame_json(MapWindow{400.0, 400.0, 600.0, 600.0}));
  CHECK(one.at("statics_in_window") == 1);
  CHECK(one.at("statics") == nlohmann::json::array({500.0, 500.0, 3.25, 1}));
  // Thousands in view: counted, not sent.
  for (std::uint32_t i = 0; i < 6000; ++i) {
    objects->push_back({4 + i, world::StaticKind::kTree, 700.0 + i * 0.1, 700.0, 0.1});
  }
  world::World busy(wp);
  map.publish(2, busy, MapStats{});
  const nlohmann::json many = nlohmann::json::parse(map.frame_json(MapWindow{}));
  CHECK(many.at("statics_in_window") == 6003);
  CHECK(many.at("statics").empty());
}
