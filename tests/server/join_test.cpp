// Joining and leaving: the welcome, players seeing each other, refusals, broadcast mode.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

#include "harness.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;

TEST_CASE("join: the welcome describes the zone, and two nearby players see each other") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.players.max_speed = 6.5;
  cfg.npcs.speed = 2.0;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& alice = clients.add("alice", server.port());
  client::Bot& bob = clients.add("bob", server.port());

  // Both are always in each other's view in this zone, so each must come to hold the
  // other's player entity.
  const auto sees = [](const client::Bot& a, const client::Bot& b) {
    return b.welcome().entity_id != 0 && a.replica().find(b.welcome().entity_id) != nullptr;
  };
  REQUIRE(clients.pump_until([&] { return sees(alice, bob) && sees(bob, alice); }, 5s));
  clients.pump(200ms);

  for (client::Bot* b : {&alice, &bob}) {
    INFO("bot ", b->name());
    CHECK(b->phase() == client::Bot::Phase::kPlaying);
    const client::WelcomeInfo& w = b->welcome();
    CHECK(w.entity_id != 0);
    CHECK(w.server_tick > 0);
    CHECK(w.tick_rate == 50);
    CHECK(w.view_radius == doctest::Approx(30.0));
    CHECK(w.hysteresis == doctest::Approx(2.0));
    CHECK(w.world_min_x == doctest::Approx(0.0));
    CHECK(w.world_min_y == doctest::Approx(0.0));
    CHECK(w.world_max_x == doctest::Approx(20.0));
    CHECK(w.world_max_y == doctest::Approx(20.0));
    CHECK(w.aoi_enabled);
    CHECK(w.max_speed == doctest::Approx(6.5));  // the faster of players and NPCs
    CHECK(b->replica().violations().empty());
    // The client's own entity rides in the self record, never as a foreign entity; it
    // stands inside the world.
    CHECK(b->replica().find(w.entity_id) == nullptr);
    CHECK(test::metres(test::self_of(*b).x()) >= w.world_min_x);
    CHECK(test::metres(test::self_of(*b).x()) <= w.world_max_x);
    CHECK(test::property_of(*b, b->replica().self(), "health") == 100);  // the built-in game
    CHECK(test::property_of(*b, b->replica().self(), "max_health") == 100);
    // Every NPC too: the zone is smaller than the view.
    CHECK(b->replica().current().entities.size() == cfg.npcs.count + 1);
  }
  CHECK(alice.welcome().entity_id != bob.welcome().entity_id);

  const auto bob_at_alice = alice.replica().find(bob.welcome().entity_id);
  const auto alice_at_bob = bob.replica().find(alice.welcome().entity_id);
  REQUIRE(bob_at_alice != nullptr);
  REQUIRE(alice_at_bob != nullptr);
  CHECK(test::kind_of(alice, bob.welcome().entity_id) == test::kPlayerKind);
  CHECK(test::kind_of(bob, alice.welcome().entity_id) == test::kPlayerKind);
  CHECK(test::name_of(alice, bob.welcome().entity_id) == "bob");
  CHECK(test::name_of(bob, alice.welcome().entity_id) == "alice");
  // What one sees of the other is what the other knows of itself (both stand still).
  CHECK(bob_at_alice->x() == test::self_of(bob).x());
  CHECK(bob_at_alice->y() == test::self_of(bob).y());
  CHECK(alice_at_bob->x() == test::self_of(alice).x());
  CHECK(alice_at_bob->y() == test::self_of(alice).y());

  ZoneServer& zone = server.stop();
  CHECK(zone.players() == 2);
  CHECK(zone.counters().joins == 2);
  const world::Entity* b = zone.world().find(bob.welcome().entity_id);
  REQUIRE(b != nullptr);
  CHECK(b->name == "bob");
  CHECK(bob_at_alice->x() == protocol::quantize_position(b->x));
  CHECK(bob_at_alice->y() == protocol::quantize_position(b->y));
}

TEST_CASE("join: a player that leaves is despawned from the views of those who saw it") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  // A connection lost without a goodbye leaves at once (the hold: reconnect_test.cpp).
  cfg.players.resume_grace_ms = 0;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& alice = clients.add("alice", server.port());
  client::Bot& bob = clients.add("bob", server.port());
  REQUIRE(clients.pump_until(
      [&] {
        return bob.welcome().entity_id != 0 &&
               alice.replica().find(bob.welcome().entity_id) != nullptr;
      },
      5s));
  const std::uint32_t bob_id = bob.welcome().entity_id;
  const std::uint64_t leaves_before = alice.replica().leaves();

  bool polite = true;
  SUBCASE("it quits") {
    bob.quit(clients.host());
  }
  SUBCASE("its connection is dropped without a goodbye reason") {
    polite = false;
    clients.host().disconnect_now(bob.peer(), 0);
  }
  CHECK(clients.pump_until([&] { return alice.replica().find(bob_id) == nullptr; }, 3s));
  CHECK(alice.replica().leaves() == leaves_before + 1);
  CHECK(alice.replica().violations().empty());
  CHECK(alice.phase() == client::Bot::Phase::kPlaying);
  // Nobody else left: alice still sees every NPC.
  clients.pump(200ms);
  CHECK(alice.replica().current().entities.size() == test::tiny_zone().npcs.count);

  // A newcomer (likely in the leaver's slots: peer, entity and replication client) is a
  // new entity to alice, and sees the zone correctly itself.
  client::Bot& carol = clients.add("carol", server.port());
  REQUIRE(clients.pump_until(
      [&] {
        return carol.welcome().entity_id != 0 &&
               alice.replica().find(carol.welcome().entity_id) != nullptr &&
               carol.replica().current().entities.size() == test::tiny_zone().npcs.count + 1;
      },
      3s));
  CHECK(carol.welcome().entity_id != bob_id);
  CHECK(test::name_of(alice, carol.welcome().entity_id) == "carol");
  CHECK(alice.replica().find(bob_id) == nullptr);
  CHECK(carol.replica().find(alice.welcome().entity_id) != nullptr);
  CHECK(carol.replica().find(bob_id) == nullptr);
  CHECK(carol.replica().violations().empty());
  CHECK(alice.replica().violations().empty());

  ZoneServer& zone = server.stop();
  CHECK(zone.players() == 2);
  CHECK(zone.counters().leaves == 1);
  if (polite) CHECK(test::disconnects(zone, DisconnectReason::ClientQuit) == 1);
  CHECK(zone.world().find(bob_id) == nullptr);
}

TEST_CASE("join: refusals end the connection promptly with the right reason") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.players.max_players = 2;
  cfg.players.max_name_length = 32;
  test::ServerThread server(cfg);
  test::Clients clients;
  const auto closed = [](const client::Bot& b) { return b.phase() == client::Bot::Phase::kClosed; };
  std::size_t players_at_end = 0;
  std::uint64_t refused_tokens = 0;

  SUBCASE("wrong protocol version") {
    client::Bot& old = clients.add("old-client", server.port());
    old.set_protocol_version(999);
    REQUIRE(clients.pump_until([&] { return closed(old); }, 3s));
    CHECK(test::reason_of(old) == test::reason_of(DisconnectReason::ProtocolMismatch));
    CHECK(old.welcome().entity_id == 0);
    CHECK(old.replica().frames_completed() == 0);
  }
  SUBCASE("bad names") {
    client::Bot& empty = clients.add("", server.port());
    client::Bot& longer = clients.add(std::string(33, 'x'), server.port());
    client::Bot& control = clients.add("new\nline", server.port());
    client::Bot& longest = clients.add(std::string(32, 'y'), server.port());  // just fits
    REQUIRE(
        clients.pump_until([&] { return closed(empty) && closed(longer) && closed(control); }, 3s));
    CHECK(test::reason_of(empty) == test::reason_of(DisconnectReason::BadHello));
    CHECK(test::reason_of(longer) == test::reason_of(DisconnectReason::BadHello));
    CHECK(test::reason_of(control) == test::reason_of(DisconnectReason::BadHello));
    CHECK(clients.pump_until([&] { return longest.replica().frames_completed() > 5; }, 3s));
    CHECK(longest.phase() == client::Bot::Phase::kPlaying);
    players_at_end = 1;
  }
  SUBCASE("a transfer token this zone never issued") {
    // Only a zone that took a player over from another expects its client, with the
    // token it gave; this zone is alone and gave none.
    client::Bot& forged = clients.add("forged", server.port(), [](client::Bot& b) {
      b.set_transfer_token(std::vector<std::uint8_t>(16, 0xAB));
    });
    client::Bot& short_token = clients.add("short", server.port(), [](client::Bot& b) {
      b.set_transfer_token({1, 2, 3});
    });
    REQUIRE(clients.pump_until([&] { return closed(forged) && closed(short_token); }, 3s));
    CHECK(test::reason_of(forged) == test::reason_of(DisconnectReason::BadHello));
    CHECK(test::reason_of(short_token) == test::reason_of(DisconnectReason::BadHello));
    CHECK(forged.welcome().entity_id == 0);
    refused_tokens = 2;
  }
  SUBCASE("server full") {
    client::Bot& a = clients.add("a", server.port());
    client::Bot& b = clients.add("b", server.port());
    REQUIRE(clients.pump_until(
        [&] { return a.replica().frames_completed() > 2 && b.replica().frames_completed() > 2; },
        3s));
    client::Bot& c = clients.add("c", server.port());
    REQUIRE(clients.pump_until([&] { return closed(c); }, 3s));
    CHECK(test::reason_of(c) == test::reason_of(DisconnectReason::ServerFull));
    CHECK(c.welcome().entity_id == 0);
    // The two players are not disturbed by the refusal.
    const std::uint64_t a_frames = a.replica().frames_completed();
    clients.pump(300ms);
    CHECK(a.phase() == client::Bot::Phase::kPlaying);
    CHECK(b.phase() == client::Bot::Phase::kPlaying);
    CHECK(a.replica().frames_completed() > a_frames);
    // A place frees up when a player leaves.
    b.quit(clients.host());
    client::Bot& d = clients.add("d", server.port());
    CHECK(clients.pump_until([&] { return d.replica().frames_completed() > 2; }, 3s));
    CHECK(d.phase() == client::Bot::Phase::kPlaying);
    players_at_end = 2;  // a and d
  }

  ZoneServer& zone = server.stop();
  CHECK(zone.players() == players_at_end);
  CHECK(zone.counters().arrival_tokens_refused == refused_tokens);
  CHECK(zone.counters().arrivals == 0);
}

TEST_CASE("join: with the AOI switched off a client is sent every entity of the world") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::small_zone();
  cfg.world = {0.0, 0.0, 1000.0, 1000.0};
  cfg.aoi.enabled = false;
  cfg.aoi.cell_size = 32.0;
  cfg.npcs.count = 30;
  cfg.npcs.behaviour = config::NpcBehaviour::kWander;
  cfg.network.client_bandwidth = 1'000'000;  // the budget is not what this test is about
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& alice = clients.add("alice", server.port());
  client::Bot& bob = clients.add("bob", server.port());
  const auto all_seen = [&](const client::Bot& b) {
    return b.replica().current().entities.size() == cfg.npcs.count + 1;  // NPCs + the other
  };
  REQUIRE(clients.pump_until([&] { return all_seen(alice) && all_seen(bob); }, 5s));
  clients.pump(300ms);

  CHECK_FALSE(alice.welcome().aoi_enabled);
  // The radius reported is the whole world.
  CHECK(alice.welcome().view_radius >= std::hypot(1000.0, 1000.0));
  CHECK(alice.replica().violations().empty());
  CHECK(bob.replica().violations().empty());
  CHECK(alice.replica().find(bob.welcome().entity_id) != nullptr);

  // Far-apart NPCs are in view: the entities seen span much more than 2 x 30 m.
  const auto& ents = alice.replica().current().entities;
  double max_d = 0.0;
  for (const auto& e : ents) max_d = std::max(max_d, test::distance_m(e, test::self_of(alice)));
  CHECK(max_d > 100.0);
  std::set<std::string> names;
  for (const auto& e : ents) {
    if (test::kind_of(alice, e.id) == test::kNpcKind) names.insert(test::name_of(alice, e.id));
  }
  CHECK(names.size() == cfg.npcs.count);

  ZoneServer& zone = server.stop();
  std::size_t npcs = 0;
  zone.world().for_each_entity([&](std::uint32_t, const world::Entity& e) {
    if (e.kind != world::EntityKind::kNpc) return;
    ++npcs;
    CHECK_MESSAGE(alice.replica().find(e.id) != nullptr, "npc ", e.id, " missing");
  });
  CHECK(npcs == cfg.npcs.count);
}
