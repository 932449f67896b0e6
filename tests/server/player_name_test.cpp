// Names in Hello: invalid UTF-8, control, bidi and invisible characters are refused with
// BadHello before they reach a log, the world, other clients or the admin map; the map
// keeps answering (issue 9, item 3).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "admin_http.hpp"
#include "harness.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;

TEST_CASE("player names: bad UTF-8 and bidi overrides are refused - the map keeps answering") {
  net::EnetLibrary enet;
  const config::ZoneConfig cfg = test::tiny_zone();
  test::ServerThread server(cfg, AdminSetup{.token = test::kTestAdminToken, .config_source = {}});
  const std::uint16_t admin = server.zone().admin_port();
  REQUIRE(admin != 0);
  test::Clients clients;
  const std::string good_name = "Zoë 日本";
  client::Bot& good = clients.add(good_name, server.port());
  client::Bot& watcher = clients.add("watcher", server.port());

  const std::vector<std::string> bad_names = {
      "\xC3\x28",  // invalid UTF-8
      "bad\xFF",   // invalid UTF-8 byte
      "\xC0\xAF"
      "etc",                 // overlong
      "\xED\xA0\x80",        // a surrogate
      "admin\u202Egnp.exe",  // right-to-left override
      "x\u2066y\u2069",      // isolates
      "\xC2\x85next",        // C1 control (NEL)
      "al\u200Bice",         // zero width space
      "\u3164",              // hangul filler: a blank name
  };
  std::vector<client::Bot*> bad;
  for (const std::string& name : bad_names) bad.push_back(&clients.add(name, server.port()));
  const auto closed = [](const client::Bot* b) {
    return b->phase() == client::Bot::Phase::kClosed;
  };
  REQUIRE(clients.pump_until(
      [&] {
        return std::all_of(bad.begin(), bad.end(), closed) &&
               watcher.replica().find(good.welcome().entity_id) != nullptr;
      },
      5s));
  for (std::size_t i = 0; i < bad.size(); ++i) {
    CAPTURE(i);
    CHECK(test::reason_of(*bad[i]) == test::reason_of(DisconnectReason::BadHello));
    CHECK(bad[i]->welcome().entity_id == 0);
  }
  // The well-named player is in, and others see its name exactly.
  CHECK(good.phase() == client::Bot::Phase::kPlaying);
  CHECK(test::name_of(watcher, good.welcome().entity_id) == good_name);

  // The admin map answers, with the player selected (its name in the answer: a selection
  // shows from the next published frame on) and without.
  for (const std::uint32_t select : {0u, good.welcome().entity_id}) {
    CAPTURE(select);
    test::HttpAnswer map;
    const auto end = std::chrono::steady_clock::now() + 3s;
    do {
      map = test::admin_map(admin, cfg.world.max_x, cfg.world.max_y, select);
      clients.pump(50ms);
    } while (select != 0 && map.body.find(good_name) == std::string::npos &&
             std::chrono::steady_clock::now() < end);
    CHECK(map.status == 200);
    CHECK(nlohmann::json::accept(map.body));
    if (select != 0) CHECK(map.body.find(good_name) != std::string::npos);
  }

  ZoneServer& zone = server.stop();
  CHECK(zone.players() == 2);
  CHECK(test::disconnects(zone, DisconnectReason::BadHello) == bad_names.size());
  zone.world().for_each_entity([&](std::uint32_t, const world::Entity& e) {
    if (e.kind == world::EntityKind::kPlayer) {
      CHECK((e.name == good_name || e.name == "watcher"));
    }
  });
}
