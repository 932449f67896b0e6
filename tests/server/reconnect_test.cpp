// Reconnects (docs/protocol.md, "Reconnecting"): a client whose connection is lost comes
// back with its Welcome's resume token to the same entity, position and groups, and the
// players around it see no leave and no enter; a token is good once, within the grace;
// a client on a new address takes its player back even before the zone notices the old
// connection is gone; a quit is no loss; after the grace the player leaves.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "admin_http.hpp"
#include "harness.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;

namespace {

constexpr auto kPatience = 20s;

// The zone notices a lost connection after a second without inputs.
config::ZoneConfig resume_zone(std::uint32_t grace_ms) {
  config::ZoneConfig c = test::tiny_zone();
  c.network.timeout_ms = 1000;
  c.players.resume_grace_ms = grace_ms;
  return c;
}

bool closed(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kClosed;
}
bool playing(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kPlaying && b.replica().frames_completed() > 2;
}

// Pumps the clients until /metrics has `line` (published a few times a second).
bool metrics_show(test::Clients& clients, std::uint16_t admin, const std::string& line) {
  return clients.pump_until(
      [&] { return test::admin_get(admin, "/metrics").body.find(line) != std::string::npos; },
      kPatience);
}

}  // namespace

TEST_CASE("reconnect: a lost connection resumes the same entity and nobody around sees it go") {
  net::EnetLibrary enet;
  test::ServerThread server(resume_zone(60000));
  test::Clients clients;
  client::Bot& alice = clients.add("alice", server.port());
  client::Bot& bob = clients.add("bob", server.port());
  REQUIRE(clients.pump_until(
      [&] {
        return playing(alice) && playing(bob) &&
               bob.replica().find(alice.welcome().entity_id) != nullptr;
      },
      kPatience));
  alice.join_party(clients.host_of(alice), 0xC0FFEE);
  REQUIRE(clients.pump_until([&] { return alice.party().id != 0; }, kPatience));
  const std::uint32_t id = alice.welcome().entity_id;
  const std::uint32_t party = alice.party().id;
  const std::vector<std::uint8_t> token = alice.resume_token();
  REQUIRE(token.size() == 16);
  const std::uint64_t bob_leaves = bob.replica().leaves();
  const std::uint64_t bob_enters = bob.replica().enters();

  // The network goes: not a word to the zone, which notices by the time-out and holds
  // the player.
  clients.mute(alice);
  alice.drop(clients.host_of(alice));
  REQUIRE(metrics_show(clients, server.zone().admin_port(), "zone_players_held 1"));
  const replica::FoundEntity seen = bob.replica().find(id);
  REQUIRE(seen != nullptr);
  const replica::EntityState held(*seen);

  // Back, from a new port, with the token.
  alice.resume(clients.host_of(alice));
  clients.mute(alice, false);
  REQUIRE(clients.pump_until([&] { return playing(alice); }, kPatience));
  CHECK(alice.welcome().entity_id == id);
  CHECK(alice.resumes() == 1);
  CHECK(alice.resume_id_changes() == 0);
  // Where it was held, and a new token for the next time.
  const replica::EntityState self(id, alice.replica().self());
  CHECK(self.x() == held.x());
  CHECK(self.y() == held.y());
  CHECK(alice.resume_token().size() == 16);
  CHECK(alice.resume_token() != token);
  // Its party is still its own, and its view is whole again (full snapshots).
  CHECK(clients.pump_until([&] { return alice.party().id == party; }, kPatience));
  CHECK(clients.pump_until([&] { return alice.replica().find(bob.welcome().entity_id) != nullptr; },
                           kPatience));
  clients.pump(300ms);
  CHECK(bob.replica().find(id) != nullptr);
  CHECK(bob.replica().leaves() == bob_leaves);
  CHECK(bob.replica().enters() == bob_enters);
  CHECK(bob.replica().violations().empty());
  CHECK(alice.replica().violations().empty());

  // A token is good once: the old one is refused, with the reason.
  client::Bot& again =
      clients.add("alice", server.port(), [&](client::Bot& b) { b.set_resume_token(token); });
  REQUIRE(clients.pump_until([&] { return closed(again); }, kPatience));
  CHECK(test::reason_of(again) == test::reason_of(DisconnectReason::ResumeRefused));
  CHECK(playing(alice));

  ZoneServer& zone = server.stop();
  const ZoneCounters c = zone.counters();
  CHECK(c.holds == 1);
  CHECK(c.resumes == 1);
  CHECK(c.resumes_refused == 1);
  CHECK(c.joins == 2);
  CHECK(c.leaves == 0);
  CHECK(zone.players() == 2);
}

TEST_CASE(
    "reconnect: a client on a new address takes its player back before the old one times out") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = resume_zone(60000);
  cfg.network.timeout_ms = 60000;  // the zone will not notice the old connection is gone
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& alice = clients.add("alice", server.port());
  client::Bot& bob = clients.add("bob", server.port());
  REQUIRE(clients.pump_until(
      [&] {
        return playing(alice) && playing(bob) &&
               bob.replica().find(alice.welcome().entity_id) != nullptr;
      },
      kPatience));
  const std::uint32_t id = alice.welcome().entity_id;
  const std::uint64_t bob_leaves = bob.replica().leaves();
  alice.drop(clients.host_of(alice));
  alice.resume(clients.host_of(alice));
  REQUIRE(clients.pump_until([&] { return playing(alice); }, kPatience));
  CHECK(alice.welcome().entity_id == id);
  clients.pump(300ms);
  CHECK(bob.replica().leaves() == bob_leaves);
  CHECK(bob.replica().find(id) != nullptr);

  ZoneServer& zone = server.stop();
  const ZoneCounters c = zone.counters();
  CHECK(c.resumes == 1);
  CHECK(c.holds == 0);
  // The old connection is closed with the reason a newer login gets.
  CHECK(test::disconnects(zone, DisconnectReason::LoggedInElsewhere) == 1);
  CHECK(c.leaves == 0);
  CHECK(zone.players() == 2);
}

TEST_CASE("reconnect: after the grace the player leaves, and a quit is no lost connection") {
  net::EnetLibrary enet;
  test::ServerThread server(resume_zone(500));
  test::Clients clients;
  client::Bot& alice = clients.add("alice", server.port());
  client::Bot& bob = clients.add("bob", server.port());
  client::Bot& carol = clients.add("carol", server.port());
  const auto all_seen = [&] {
    return playing(alice) && playing(bob) && playing(carol) &&
           bob.replica().find(alice.welcome().entity_id) != nullptr &&
           bob.replica().find(carol.welcome().entity_id) != nullptr;
  };
  REQUIRE(clients.pump_until(all_seen, kPatience));
  const std::uint32_t id = alice.welcome().entity_id;
  const std::vector<std::uint8_t> token = alice.resume_token();
  clients.mute(alice);
  alice.drop(clients.host_of(alice));
  // Held for half a second, then gone for everyone.
  REQUIRE(clients.pump_until([&] { return bob.replica().find(id) == nullptr; }, kPatience));
  client::Bot& late =
      clients.add("alice", server.port(), [&](client::Bot& b) { b.set_resume_token(token); });
  REQUIRE(clients.pump_until([&] { return closed(late); }, kPatience));
  CHECK(test::reason_of(late) == test::reason_of(DisconnectReason::ResumeRefused));

  // A client that says goodbye leaves at once: nothing is held.
  const std::uint32_t carol_id = carol.welcome().entity_id;
  clients.mute(carol);
  carol.quit(clients.host_of(carol));
  REQUIRE(clients.pump_until([&] { return bob.replica().find(carol_id) == nullptr; }, kPatience));

  ZoneServer& zone = server.stop();
  const ZoneCounters c = zone.counters();
  CHECK(c.holds == 1);
  CHECK(c.holds_expired == 1);
  CHECK(c.resumes == 0);
  CHECK(c.resumes_refused == 1);
  CHECK(c.leaves == 2);
  CHECK(zone.players() == 1);
}

TEST_CASE("reconnect: with players.resume_grace_ms 0 there is no token and a lost player leaves") {
  net::EnetLibrary enet;
  test::ServerThread server(resume_zone(0));
  test::Clients clients;
  client::Bot& alice = clients.add("alice", server.port());
  client::Bot& bob = clients.add("bob", server.port());
  REQUIRE(clients.pump_until(
      [&] {
        return playing(alice) && playing(bob) &&
               bob.replica().find(alice.welcome().entity_id) != nullptr;
      },
      kPatience));
  CHECK(alice.resume_token().empty());
  const std::uint32_t id = alice.welcome().entity_id;
  clients.mute(alice);
  alice.drop(clients.host_of(alice));
  REQUIRE(clients.pump_until([&] { return bob.replica().find(id) == nullptr; }, kPatience));
  ZoneServer& zone = server.stop();
  CHECK(zone.counters().holds == 0);
  CHECK(zone.counters().leaves == 1);
}
