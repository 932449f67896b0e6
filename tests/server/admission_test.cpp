// The game port against strangers (docs/security.md): forged connection attempts that
// never finish their handshake, and connections that never say hello, cannot keep an
// honest newcomer out. The attacker speaks from 127.0.0.2, the newcomer from 127.0.0.1,
// with the loopback exemption off so that both count as distinct remote addresses.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <enet/enet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <string>

#include "admin_http.hpp"
#include "harness.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;
using namespace zone;
using protocol::DisconnectReason;

namespace {

bool playing(const client::Bot& b) {
  return b.phase() == client::Bot::Phase::kPlaying && b.replica().frames_completed() > 2;
}

config::ZoneConfig guarded_zone() {
  config::ZoneConfig c = test::tiny_zone();
  c.threads.network = 1;  // one host: every attempt meets the same limits
  c.limits.loopback_exempt = false;
  c.limits.max_handshakes_per_address = 4;
  c.limits.max_handshakes = 64;
  c.limits.handshake_timeout_ms = 500;
  c.limits.max_connections_per_address = 8;
  return c;
}

// A UDP socket on 127.0.0.2 that sends forged ENet CONNECT commands, each with a new
// connect id (to ENet, a new connection each time), and never answers.
class ForgedConnects {
 public:
  explicit ForgedConnects(std::uint16_t server_port) {
    fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_addr.s_addr = ::inet_addr("127.0.0.2");
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) == 0);
    to_.sin_family = AF_INET;
    to_.sin_addr.s_addr = ::inet_addr("127.0.0.1");
    to_.sin_port = htons(server_port);
  }
  ~ForgedConnects() { ::close(fd_); }
  void send(int count) {
    for (int i = 0; i < count; ++i) {
      std::uint8_t buf[sizeof(ENetProtocolHeader) + sizeof(ENetProtocolConnect)] = {};
      auto* header = reinterpret_cast<ENetProtocolHeader*>(buf);
      header->peerID = ENET_HOST_TO_NET_16(static_cast<enet_uint16>(
          int{ENET_PROTOCOL_MAXIMUM_PEER_ID} | int{ENET_PROTOCOL_HEADER_FLAG_SENT_TIME}));
      header->sentTime = ENET_HOST_TO_NET_16(1);
      ENetProtocolConnect c{};
      c.header.command = static_cast<enet_uint8>(int{ENET_PROTOCOL_COMMAND_CONNECT} |
                                                 int{ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE});
      c.header.channelID = 0xFF;
      c.header.reliableSequenceNumber = ENET_HOST_TO_NET_16(1);
      c.outgoingPeerID = ENET_HOST_TO_NET_16(static_cast<enet_uint16>(i % 4000));
      c.incomingSessionID = 0xFF;
      c.outgoingSessionID = 0xFF;
      c.mtu = ENET_HOST_TO_NET_32(1400);
      c.windowSize = ENET_HOST_TO_NET_32(32768);
      c.channelCount = ENET_HOST_TO_NET_32(2);
      c.packetThrottleInterval = ENET_HOST_TO_NET_32(5000);
      c.packetThrottleAcceleration = ENET_HOST_TO_NET_32(2);
      c.packetThrottleDeceleration = ENET_HOST_TO_NET_32(2);
      c.connectID = static_cast<enet_uint32>(rng_());
      std::memcpy(buf + sizeof(ENetProtocolHeader), &c, sizeof c);
      ::sendto(fd_, buf, sizeof buf, 0, reinterpret_cast<const sockaddr*>(&to_), sizeof to_);
    }
  }

 private:
  int fd_ = -1;
  sockaddr_in to_{};
  std::mt19937 rng_{12345};
};

// One sample's value in the zone's /metrics (name with its labels, as written there), or
// -1 when it is not there.
double metric(std::uint16_t admin_port, const std::string& sample) {
  const std::string text = test::admin_get(admin_port, "/metrics").body;
  const auto at = text.find("\n" + sample + " ");
  return at == std::string::npos ? -1.0 : std::stod(text.substr(at + sample.size() + 2));
}

// Waits (up to 2 s: /metrics is published a few times a second) until `ok` holds for the
// value of `sample`; returns the last value read.
template <typename Pred>
double metric_when(std::uint16_t admin_port, const std::string& sample, Pred ok) {
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  double v = metric(admin_port, sample);
  while (!ok(v) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
    v = metric(admin_port, sample);
  }
  return v;
}

}  // namespace

TEST_CASE("admission: forged connects from one address cannot keep a newcomer out") {
  net::EnetLibrary enet;
  const config::ZoneConfig cfg = guarded_zone();
  test::ServerThread server(cfg);
  ForgedConnects attacker(server.port());
  test::Clients clients;
  attacker.send(1000);  // far more than the host's peer slots
  client::Bot& newcomer = clients.add("newcomer", server.port());
  const auto start = std::chrono::steady_clock::now();
  bool joined = false;
  while (!joined && std::chrono::steady_clock::now() - start < 5s) {
    attacker.send(50);  // the attack goes on while the newcomer joins
    joined = clients.pump_until([&] { return playing(newcomer); }, 50ms);
  }
  CHECK(joined);
  clients.pump(800ms);  // past the handshake timeout
  CHECK(playing(newcomer));
  // /metrics tells the operator (docs/security.md): refused attempts by the limit they
  // met, and the expired handshakes.
  const std::uint16_t admin = server.zone().admin_port();
  const std::string refused = "zone_network_connects_refused_total{reason=";
  double refused_address = -1.0;
  const double refused_handshakes =
      metric_when(admin, refused + "\"handshakes\"}", [&](double handshakes) {
        refused_address = metric(admin, refused + "\"address\"}");
        return handshakes + refused_address >= 1000;
      });
  const double expired =
      metric_when(admin, "zone_network_handshakes_expired_total", [](double v) { return v >= 1; });
  ZoneServer& zone = server.stop();
  const net::TrafficStats t = zone.traffic();
  // At most the per-address allowance of handshakes was ever open; the rest were dropped
  // unanswered, and the open ones expired.
  CHECK(t.connects_refused_half_open + t.connects_refused_address >= 1000);
  CHECK(t.half_open_expired >= 1);
  CHECK(t.half_open_expired <= 4 * 20);  // at most 4 at a time, one timeout (0.5 s) each
  CHECK(zone.counters().joins == 1);
  // The published counts lag the live ones by at most a publish period.
  CHECK(refused_handshakes >= 0);
  CHECK(refused_address >= 0);
  CHECK(refused_handshakes + refused_address >= 1000);
  CHECK(refused_handshakes <= static_cast<double>(t.connects_refused_half_open));
  CHECK(refused_address <= static_cast<double>(t.connects_refused_address));
  CHECK(expired >= 1);
  CHECK(expired <= static_cast<double>(t.half_open_expired));
}

// The loopback exemption lifts the per-address allowance for this machine (load tests),
// not the whole defence: one exempt address holds at most half the handshake places, so
// a local process flooding CONNECTs cannot keep a newcomer out either.
TEST_CASE("admission: an exempt loopback address holds at most half of the handshakes") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = guarded_zone();
  cfg.limits.loopback_exempt = true;  // both 127.0.0.2 and the newcomer's 127.0.0.1
  test::ServerThread server(cfg);
  ForgedConnects attacker(server.port());
  test::Clients clients;
  attacker.send(1000);
  client::Bot& newcomer = clients.add("newcomer", server.port());
  const auto start = std::chrono::steady_clock::now();
  bool joined = false;
  while (!joined && std::chrono::steady_clock::now() - start < 5s) {
    attacker.send(50);
    joined = clients.pump_until([&] { return playing(newcomer); }, 50ms);
  }
  CHECK(joined);
  clients.pump(800ms);
  CHECK(playing(newcomer));
  ZoneServer& zone = server.stop();
  const net::TrafficStats t = zone.traffic();
  // The attacker's handshakes past its half (32 of 64) were dropped unanswered.
  CHECK(t.connects_refused_half_open >= 900);
  CHECK(t.connects_refused_address == 0);  // no per-address allowance for it
  CHECK(zone.counters().joins == 1);
}

TEST_CASE("admission: connections that never say hello cannot hold the newcomers' slots") {
  net::EnetLibrary enet;
  config::ZoneConfig cfg = guarded_zone();
  cfg.limits.max_awaiting_hello = 6;
  cfg.limits.max_connections_per_address = 32;
  test::ServerThread server(cfg);
  // The stranger: real ENet connections from 127.0.0.2 that complete the handshake and
  // then say nothing.
  net::EnetHost stranger({.bind_address = "127.0.0.2",
                          .port = 0,
                          .max_peers = 64,
                          .channels = 2,
                          .max_unreliable_bytes = 1200,
                          .timeout_ms = 5000});
  std::vector<net::PeerId> silent;
  for (int i = 0; i < 20; ++i) silent.push_back(stranger.connect("127.0.0.1", server.port()));
  std::size_t connected = 0;
  const auto pump_stranger = [&] {
    stranger.service(0);
    net::NetEvent ev;
    while (stranger.next_event(ev)) {
      if (ev.type == net::NetEvent::Type::kConnect) ++connected;
    }
  };
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) {
    pump_stranger();
    std::this_thread::sleep_for(2ms);
  }
  CHECK(connected > 6);

  test::Clients clients;
  client::Bot& newcomer = clients.add("newcomer", server.port());
  CHECK(clients.pump_until(
      [&] {
        pump_stranger();
        return playing(newcomer);
      },
      5s));
  clients.pump(200ms);
  pump_stranger();
  const double evicted =
      metric_when(server.zone().admin_port(), "zone_sessions_evicted_silent_total",
                  [](double v) { return v >= 1; });
  ZoneServer& zone = server.stop();
  // Every connection beyond the allowance of 6 silent ones closed one of them, longest
  // silent first: never the newcomer, who said hello.
  CHECK(zone.counters().evicted_silent >= connected - 6);
  CHECK(zone.counters().evicted_silent > 0);
  CHECK(test::disconnects(zone, DisconnectReason::BadHello) == zone.counters().evicted_silent);
  CHECK(zone.counters().joins == 1);
  // /metrics has them too (published a few times a second: at most the final count).
  CHECK(evicted >= 1);
  CHECK(evicted <= static_cast<double>(zone.counters().evicted_silent));
}
