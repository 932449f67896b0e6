// The zone's threads as a client sees them: several ENet hosts behind one port, ingest
// that keeps up with bursts, and players whose inputs stop.
#include <doctest/doctest.h>

#include <deque>
#include <numeric>
#include <set>

#include "harness.hpp"
#include "test_util.hpp"
#include "zone/zone_params.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;

namespace {

bool playing(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kPlaying && b.replica().frames_completed() > 2;
}

}  // namespace

TEST_CASE("threads: bots spread over every ENet host of one port and play normally") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::small_zone();
  cfg.threads.network = 3;
  cfg.threads.workers = 3;
  cfg.players.max_players = 60;
  test::ServerThread server(cfg);
  REQUIRE(server.zone().network_hosts() == 3);
  REQUIRE(server.zone().replication_workers() == 3);
  // The kernel picks a host by the source address: give every bot its own, as real
  // clients on their own machines have (15 sources for 45 bots left a host empty in
  // 3 x (2/3)^15 = 0.7% of runs).
  test::Clients clients(1, 45);
  std::vector<client::Bot*> bots;
  for (int i = 0; i < 45; ++i)
    bots.push_back(&clients.add(fmt::format("bot-{}", i), server.port()));
  const auto walk = [](client::Bot& b) {
    const float a = static_cast<float>(b.welcome().entity_id % 7);
    return std::pair<float, float>{std::cos(a), std::sin(a)};
  };
  REQUIRE(clients.pump_until(
      [&] { return std::all_of(bots.begin(), bots.end(), [](auto* b) { return playing(*b); }); },
      10s, walk));
  clients.pump(1s, walk);
  for (const client::Bot* b : bots) {
    CHECK(playing(*b));
    CHECK(b->replica().violations().empty());
  }
  ZoneServer& zone = server.stop();
  const std::vector<std::size_t> per_host = zone.players_per_host();
  REQUIRE(per_host.size() == 3);
  CHECK(std::accumulate(per_host.begin(), per_host.end(), std::size_t{0}) == bots.size());
  // The kernel spreads clients by a hash of their address: with 45 sources a host is left
  // empty in 3 x (2/3)^45 < 1e-7 of runs if the spread works.
  for (const std::size_t n : per_host) CHECK(n > 0);
  CHECK(zone.counters().joins == bots.size());
}

TEST_CASE(
    "threads: the zone's port is its own - a port another socket holds is refused, and port 0 "
    "never lands on one") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::small_zone();
  cfg.threads.network = 2;
  // A port another program holds with SO_REUSEPORT: joining it would split the clients
  // between that program and the zone.
  const test::ForeignUdpSocket other;
  cfg.network.port = other.port();
  CHECK_THROWS_AS(net::EnetHost{make_host_options(cfg, 0)}, net::NetError);

  // Port 0 with SO_REUSEPORT alone may land on a port such sockets hold (the kernel then
  // counts it as free for this user): with 800 of them, about 1 bind in 35 would. Each
  // first host of a zone claims a port that no socket holds.
  std::deque<test::ForeignUdpSocket> held;
  std::set<std::uint16_t> held_ports;
  for (int i = 0; i < 800; ++i) held_ports.insert(held.emplace_back().port());
  cfg.network.port = 0;
  net::HostOptions first = make_host_options(cfg, 0);
  first.max_peers = 4;
  for (int i = 0; i < 200; ++i) {
    const net::EnetHost host{first};
    CHECK(held_ports.count(host.port()) == 0);
    // The other hosts of the zone join the claimed port.
    net::HostOptions second = make_host_options(cfg, 1);
    second.max_peers = 4;
    second.port = host.port();
    CHECK_NOTHROW(net::EnetHost{second});
  }
}

TEST_CASE("threads: a burst of thousands of inputs in one tick is read whole - nothing lost") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.threads.network = 1;  // every datagram on one socket
  cfg.limits.max_inputs_per_second = 100000;
  cfg.tick.rate_hz = 20;
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& bot = clients.add("burst", server.port());
  clients.mute(bot);  // from the start: every input the server counts is the burst's
  REQUIRE(clients.pump_until([&] { return playing(bot); }, 5s));
  // One datagram per input (a flush after each), far more than ENet reads per service
  // call (256), all within a few milliseconds: well inside one 50 ms tick.
  constexpr int kBurst = 3000;
  for (int i = 0; i < kBurst; ++i) {
    bot.send_input(clients.host(), 0.1f, 0.0f);
    clients.host().flush();
  }
  clients.pump(500ms);
  ZoneServer& zone = server.stop();
  CHECK(zone.counters().inputs == kBurst);
  for (std::size_t r = 0; r < kDropReasons; ++r) {
    CHECK_MESSAGE(zone.counters().drops[r] == 0, "dropped as ",
                  to_string(static_cast<DropReason>(r)));
  }
}

TEST_CASE("sessions: a player whose inputs stop is dropped with reason 'timed out'") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = test::tiny_zone();
  cfg.network.timeout_ms = 600;
  cfg.players.resume_grace_ms = 0;  // it leaves at once (the hold: reconnect_test.cpp)
  test::ServerThread server(cfg);
  test::Clients clients;
  client::Bot& quiet = clients.add("quiet", server.port());
  client::Bot& talker = clients.add("talker", server.port());
  REQUIRE(clients.pump_until([&] { return playing(quiet) && playing(talker); }, 5s));
  // ENet keeps the connection alive (pings, acknowledgements); only the inputs stop.
  clients.mute(quiet);
  const auto stopped = std::chrono::steady_clock::now();
  REQUIRE(clients.pump_until([&] { return quiet.phase() == client::Bot::Phase::kClosed; }, 4s));
  const auto after = std::chrono::steady_clock::now() - stopped;
  CHECK(test::reason_of(quiet) == test::reason_of(DisconnectReason::Timeout));
  CHECK(after >= 600ms);
  CHECK(playing(talker));
  ZoneServer& zone = server.stop();
  CHECK(test::disconnects(zone, DisconnectReason::Timeout) == 1);
  CHECK(zone.players() == 1);
}
