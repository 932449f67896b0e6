// Parties through the real zone loop and ENet: JoinParty answered with PartyStatus, the
// other members told of every change, members replicated across the zone with their
// party field, refusals (full, too soon, switched off) changing nothing; and the live
// map's view of the selection's party.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "test_util.hpp"
#include "zone/map_publisher.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::GroupResult;

namespace {

config::ZoneConfig party_zone() {
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.world = {0.0, 0.0, 1000.0, 1000.0};  // players spawn far apart, mostly out of view
  cfg.npcs.count = 0;
  cfg.party.enabled = true;
  cfg.party.max_size = 3;
  cfg.party.min_request_interval_ms = 100;  // the least allowed
  return cfg;
}

GroupResult last_result(const client::Bot& b) {
  return static_cast<GroupResult>(b.party().last_result);
}

std::vector<std::uint32_t> ids_of(std::initializer_list<const client::Bot*> bots) {
  std::vector<std::uint32_t> ids;
  for (const client::Bot* b : bots) ids.push_back(b->welcome().entity_id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

TEST_CASE("party: a shared key makes a party whose members see each other across the zone") {
  net::EnetLibrary enet;
  test::ServerThread server(party_zone());
  test::Clients clients;
  client::Bot& alice = clients.add("alice", server.port());
  client::Bot& bob = clients.add("bob", server.port());
  client::Bot& carol = clients.add("carol", server.port());
  client::Bot& dave = clients.add("dave", server.port());
  const std::vector<client::Bot*> all = {&alice, &bob, &carol, &dave};
  REQUIRE(clients.pump_until(
      [&] {
        return std::all_of(all.begin(), all.end(), [](const client::Bot* b) {
          return b->phase() == client::Bot::Phase::kPlaying;
        });
      },
      5s));
  constexpr std::uint64_t kKey = 0x5EC12E7C0FFEEull;
  for (client::Bot* b : {&alice, &bob, &carol}) b->join_party(clients.host_of(*b), kKey);
  const std::vector<std::uint32_t> trio = ids_of({&alice, &bob, &carol});
  REQUIRE(clients.pump_until(
      [&] {
        return alice.party().members == trio && bob.party().members == trio &&
               carol.party().members == trio;
      },
      5s));
  const std::uint32_t party = alice.party().id;
  CHECK(party != 0);
  // An answer to each request; the others are told once per tick that changed the party,
  // after its requests: Alice of Bob and Carol joining (in one tick or two), Bob of
  // Carol (whose join came after his answer, in his tick or a later one), Carol (the
  // last) only her own answer.
  const std::uint64_t alice_heard = alice.party().statuses;
  CHECK(alice_heard >= 2);
  CHECK(alice_heard <= 3);
  CHECK(bob.party().statuses == 2);
  CHECK(carol.party().statuses == 1);
  CHECK(bob.party().id == party);
  CHECK(carol.party().id == party);
  // Each member holds the other two wherever they are, with their party field.
  const auto holds_members = [&](const client::Bot& me) {
    for (const client::Bot* other : {&alice, &bob, &carol}) {
      if (other == &me) continue;
      const auto e = me.replica().find(other->welcome().entity_id);
      if (e == nullptr || e->party() != party) return false;
    }
    return me.replica().self()[protocol::kParty] == static_cast<std::int32_t>(party);
  };
  REQUIRE(clients.pump_until(
      [&] { return holds_members(alice) && holds_members(bob) && holds_members(carol); }, 5s));

  // Asking again for one's own party changes nothing and tells nobody else.
  clients.pump(150ms);  // past party.min_request_interval_ms
  alice.join_party(clients.host_of(alice), kKey);
  REQUIRE(clients.pump_until([&] { return alice.party().statuses == alice_heard + 1; }, 5s));
  CHECK(last_result(alice) == GroupResult::Joined);
  CHECK(alice.party().members == trio);
  clients.pump(100ms);
  CHECK(bob.party().statuses == 2);  // his answer, Carol's arrival
  CHECK(carol.party().statuses == 1);

  // A fourth is refused: the party holds three.
  dave.join_party(clients.host_of(dave), kKey);
  REQUIRE(clients.pump_until([&] { return dave.party().statuses > 0; }, 5s));
  CHECK(last_result(dave) == GroupResult::Full);
  CHECK(dave.party().id == 0);
  CHECK(dave.party().statuses == 1);
  CHECK(alice.party().members == trio);

  // Bob leaves: he is told, the others are told, and he is gone from their views unless
  // he happens to stand within their view radius.
  const std::uint64_t alice_statuses = alice.party().statuses;
  bob.join_party(clients.host_of(bob), 0);
  const std::vector<std::uint32_t> duo = ids_of({&alice, &carol});
  REQUIRE(clients.pump_until(
      [&] { return last_result(bob) == GroupResult::Left && alice.party().members == duo; }, 5s));
  CHECK(bob.party().id == 0);
  CHECK(bob.party().members.empty());
  CHECK(alice.party().statuses > alice_statuses);
  CHECK(last_result(alice) == GroupResult::Changed);
  REQUIRE(clients.pump_until(
      [&] {
        const auto b = alice.replica().find(bob.welcome().entity_id);
        return b == nullptr || b->party() == 0;
      },
      5s));

  // Carol quits: Alice is told she is alone.
  carol.quit(clients.host_of(carol));
  const std::vector<std::uint32_t> solo = ids_of({&alice});
  REQUIRE(clients.pump_until([&] { return alice.party().members == solo; }, 5s));
  CHECK(alice.party().id == party);

  ZoneServer& zone = server.stop();
  const auto requests = zone.counters().group_requests[0];  // parties
  CHECK(requests[static_cast<std::size_t>(GroupResult::Joined)] == 4);
  CHECK(requests[static_cast<std::size_t>(GroupResult::Full)] == 1);
  CHECK(requests[static_cast<std::size_t>(GroupResult::Left)] == 1);
  for (const client::Bot* b : all) CHECK(b->replica().violations().empty());
}

TEST_CASE("party: requests sooner than the interval and in a zone without parties change nothing") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = party_zone();
  cfg.party.min_request_interval_ms = 60000;
  test::ServerThread server(cfg);
  config::ZoneConfig off = party_zone();
  off.party.enabled = false;
  test::ServerThread server_off(off);
  test::Clients clients;
  client::Bot& eve = clients.add("eve", server.port());
  client::Bot& fred = clients.add("fred", server_off.port());
  REQUIRE(clients.pump_until(
      [&] {
        return eve.phase() == client::Bot::Phase::kPlaying &&
               fred.phase() == client::Bot::Phase::kPlaying;
      },
      5s));
  eve.join_party(clients.host_of(eve), 1);
  REQUIRE(clients.pump_until([&] { return eve.party().statuses == 1; }, 5s));
  CHECK(last_result(eve) == GroupResult::Joined);
  const std::uint32_t party = eve.party().id;
  eve.join_party(clients.host_of(eve), 2);
  REQUIRE(clients.pump_until([&] { return eve.party().statuses == 2; }, 5s));
  CHECK(last_result(eve) == GroupResult::TooSoon);
  CHECK(eve.party().id == party);  // unchanged

  fred.join_party(clients.host_of(fred), 1);
  REQUIRE(clients.pump_until([&] { return fred.party().statuses == 1; }, 5s));
  CHECK(last_result(fred) == GroupResult::Disabled);
  CHECK(fred.party().id == 0);
  clients.pump(100ms);
  CHECK(fred.replica().self()[protocol::kParty] == 0);
  CHECK(eve.phase() == client::Bot::Phase::kPlaying);  // answered, not kicked
  CHECK(
      server.stop().counters().group_requests[0][static_cast<std::size_t>(GroupResult::TooSoon)] ==
      1);
  CHECK(server_off.stop()
            .counters()
            .group_requests[0][static_cast<std::size_t>(GroupResult::Disabled)] == 1);
}

TEST_CASE("party: the live map's selection names its party and where the other members are") {
  world::WorldParams wp;
  wp.grid.bounds = {{0.0, 0.0}, {1000.0, 1000.0}};
  wp.parties.enabled = true;
  world::World w(wp);
  const std::uint32_t a = w.spawn_player("a"), b = w.spawn_player("b"), c = w.spawn_player("c");
  w.join_party(a, 9);
  w.join_party(b, 9);
  MapPublisher map(1);
  map.select(w.entity(a).id);
  map.publish(1, w, MapStats{});
  const nlohmann::json j = nlohmann::json::parse(map.frame_json(MapWindow{}));
  const nlohmann::json& sel = j.at("selected");
  CHECK(sel.at("party").get<std::uint32_t>() == w.entity(a).party);
  REQUIRE(sel.at("party_members").size() == 1);  // b, not a itself, not c
  const nlohmann::json& member = sel.at("party_members")[0];
  CHECK(member.at(0).get<std::uint32_t>() == w.entity(b).id);
  CHECK(member.at(1).get<double>() == doctest::Approx(w.entity(b).x).epsilon(1e-6));
  CHECK(member.at(2).get<double>() == doctest::Approx(w.entity(b).y).epsilon(1e-6));
  map.select(w.entity(c).id);
  map.publish(2, w, MapStats{});
  const nlohmann::json alone = nlohmann::json::parse(map.frame_json(MapWindow{}));
  CHECK(alone.at("selected").at("party").get<std::uint32_t>() == 0);
  CHECK(alone.at("selected").at("party_members").empty());
}

TEST_CASE("party: a guild is joined with JoinGuild and answered with GuildStatus") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = party_zone();
  cfg.guild.min_request_interval_ms = 100;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& gina = clients.add("gina", server.port());
  client::Bot& hugo = clients.add("hugo", server.port());
  REQUIRE(clients.pump_until(
      [&] {
        return gina.phase() == client::Bot::Phase::kPlaying &&
               hugo.phase() == client::Bot::Phase::kPlaying;
      },
      5s));
  gina.join_guild(clients.host_of(gina), 31337);
  hugo.join_guild(clients.host_of(hugo), 31337);
  const std::vector<std::uint32_t> both = ids_of({&gina, &hugo});
  REQUIRE(clients.pump_until(
      [&] { return gina.guild().members == both && hugo.guild().members == both; }, 5s));
  const std::uint32_t guild = gina.guild().id;
  CHECK(guild != 0);
  CHECK(hugo.guild().id == guild);
  CHECK(gina.party().statuses == 0);  // a guild is not a party
  REQUIRE(clients.pump_until(
      [&] {
        const auto h = gina.replica().find(hugo.welcome().entity_id);
        return h != nullptr && h->guild() == guild && h->party() == 0;
      },
      5s));
  CHECK(gina.replica().self()[protocol::kGuild] == static_cast<std::int32_t>(guild));
  ZoneServer& zone = server.stop();
  CHECK(zone.counters().group_requests[1][static_cast<std::size_t>(GroupResult::Joined)] == 2);
  CHECK(zone.counters().group_requests[0][static_cast<std::size_t>(GroupResult::Joined)] == 0);
  CHECK(zone.world().guilds().member_count() == 2);
}
