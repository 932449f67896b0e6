// A transfer token in ticket mode (a world of zones): honoured only with a ticket of the
// account and character the player was handed over with. Sessions alone, fed the events
// its network threads would hand it (the ticket already verified there), against a world
// holding a player another zone handed over.
#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "harness.hpp"
#include "test_util.hpp"
#include "zone/sessions.hpp"
#include "zone/zone_params.hpp"

using namespace std::chrono_literals;
using namespace zone;

namespace {

constexpr std::array<std::uint8_t, 16> kToken = {1, 2,  3,  4,  5,  6,  7,  8,
                                                 9, 10, 11, 12, 13, 14, 15, 16};

// What Ingest makes of a connect and of a Hello with a verified ticket and this token.
Inbox hello_with_login(net::PeerId peer, std::uint64_t account, std::uint64_t character) {
  Inbox inbox;
  InboundEvent connect;
  connect.kind = InboundEvent::Kind::kConnect;
  connect.peer = peer;
  connect.at = std::chrono::steady_clock::now();
  inbox.events.push_back(connect);
  InboundEvent hello;
  hello.kind = InboundEvent::Kind::kHello;
  hello.peer = peer;
  hello.at = connect.at;
  hello.data = protocol::kProtocolVersion;
  const std::string name = "Alice";
  hello.name_at = 0;
  hello.name_size = static_cast<std::uint32_t>(name.size());
  hello.token_size = kToken.size();
  hello.has_token = true;
  hello.ticket_checked = true;
  hello.has_ticket = true;
  hello.ticket_error = auth::TicketError::kNone;
  hello.account_id = account;
  hello.character_id = character;
  inbox.text = name + std::string(kToken.begin(), kToken.end());
  inbox.events.push_back(hello);
  return inbox;
}

}  // namespace

TEST_CASE("arrival: in ticket mode a transfer token needs a ticket of the player's login") {
  config::ZoneConfig cfg = test::small_zone();
  cfg.npcs.count = 0;
  Logger log(config::LogLevel::kError);
  world::World world(make_world_params(cfg));
  replication::Replicator replicator(make_replication_params(cfg), world);
  Sessions sessions(cfg, log, world, replicator);
  const std::array<std::size_t, 1> peers = {8};
  sessions.size_hosts(peers);
  std::vector<net::SendBatch> out(1);

  // Handed over from zone 1 of the world, with its login: account 12, character 34.
  const world::EntityId id = (world::EntityId{1} << world::kLocalIdBits) | 5;
  const std::uint32_t slot = world.adopt({.id = id,
                                          .kind = world::EntityKind::kPlayer,
                                          .x = 50.0,
                                          .y = 50.0,
                                          .properties = test::health_properties(0, 100),
                                          .name = "Alice",
                                          .account = 12,
                                          .character = 34});
  REQUIRE(slot != world::World::kNoSlot);
  CHECK(world.entity(slot).account == 12);
  sessions.expect_arrival(slot, kToken, 0, 0, 10s);

  SUBCASE("another account's ticket, or another character's, is refused") {
    sessions.handle(hello_with_login({0, 1, 0}, 99, 34), 1, out);
    sessions.handle(hello_with_login({1, 1, 0}, 12, 35), 2, out);
    CHECK(sessions.counters().arrival_tokens_refused == 2);
    CHECK(sessions.counters().arrivals == 0);
    CHECK(sessions.counters()
              .disconnects[static_cast<std::size_t>(protocol::DisconnectReason::BadHello)] == 2);
    // The token is still its player's: the right ticket gets in after the refusals.
    sessions.handle(hello_with_login({2, 1, 0}, 12, 34), 3, out);
    CHECK(sessions.counters().arrivals == 1);
  }
  SUBCASE("the player's own ticket gets in, as the same entity with its login") {
    sessions.handle(hello_with_login({0, 1, 0}, 12, 34), 1, out);
    CHECK(sessions.counters().arrival_tokens_refused == 0);
    CHECK(sessions.counters().arrivals == 1);
    CHECK(sessions.counters().tickets_accepted == 1);
    CHECK(world.entity(slot).id == id);
    CHECK(world.entity(slot).account == 12);
    CHECK(world.entity(slot).character == 34);
  }
}
