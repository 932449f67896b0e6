// The limits in server/net/enet_limits.hpp and server/config/capacity.hpp against ENet
// itself: its headers, enet_host_create(), and packets on the loopback wire
// (issue 9, items 9 and 11).
#include <doctest/doctest.h>

#include <enet/enet.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "config/capacity.hpp"
#include "config/config_loader.hpp"
#include "harness.hpp"
#include "net/enet_host.hpp"
#include "net/enet_limits.hpp"
#include "zone/zone_params.hpp"

using namespace std::chrono_literals;
using namespace zone;

static_assert(net::kEnetDefaultMtu == ENET_HOST_DEFAULT_MTU);
static_assert(net::kEnetMinimumMtu == ENET_PROTOCOL_MINIMUM_MTU);
// enet_peer_send(): fragmentLength = mtu - sizeof (ENetProtocolHeader)
//                                        - sizeof (ENetProtocolSendFragment)
static_assert(net::kEnetFragmentOverhead ==
              sizeof(ENetProtocolHeader) + sizeof(ENetProtocolSendFragment));
static_assert(net::kMaxUnfragmentedPayload == 1372);
static_assert(config::kPeersPerHost == ENET_PROTOCOL_MAXIMUM_PEER_ID);

namespace {

// A raw ENet client host (not our wrapper), so the test sees what ENet delivers: the
// packet's flags say whether it came as one unreliable command or as reliable fragments.
class RawClient {
 public:
  explicit RawClient(std::uint32_t mtu = ENET_HOST_DEFAULT_MTU) {
    host_ = enet_host_create(nullptr, 1, 2, 0, 0);
    REQUIRE(host_ != nullptr);
    // What the CONNECT command will ask the server for: peers take the host's MTU when
    // they are reset, and a connection sends its peer's.
    host_->mtu = mtu;
    for (std::size_t i = 0; i < host_->peerCount; ++i) enet_peer_reset(&host_->peers[i]);
  }
  ~RawClient() { enet_host_destroy(host_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void connect(std::uint16_t port) {
    ENetAddress a{};
    enet_address_set_host_ip(&a, "127.0.0.1");
    a.port = port;
    peer_ = enet_host_connect(host_, &a, 2, 0);
    REQUIRE(peer_ != nullptr);
  }
  // Services the host for up to `ms`; returns the first packet received, if any.
  struct Received {
    std::size_t bytes = 0;
    std::uint32_t flags = 0;
    std::uint8_t channel = 0;
  };
  std::optional<Received> service(int ms) {
    ENetEvent ev;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      if (enet_host_service(host_, &ev, 1) <= 0) continue;
      if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
        Received r{ev.packet->dataLength, ev.packet->flags, ev.channelID};
        enet_packet_destroy(ev.packet);
        return r;
      }
    }
    return std::nullopt;
  }
  ENetPeer* peer() { return peer_; }

 private:
  ENetHost* host_ = nullptr;
  ENetPeer* peer_ = nullptr;
};

// A server-side EnetHost (the transport under test) with a raw client connected to it.
struct Link {
  net::EnetHost server;
  RawClient client;
  net::PeerId peer;

  Link(std::size_t max_unreliable_bytes, std::uint32_t client_mtu)
      : server({.bind_address = "127.0.0.1",
                .port = 0,
                .max_peers = 4,
                .channels = 2,
                .max_unreliable_bytes = max_unreliable_bytes}),
        client(client_mtu) {
    client.connect(server.port());
    const auto end = std::chrono::steady_clock::now() + 3s;
    while (!peer.valid() && std::chrono::steady_clock::now() < end) {
      client.service(2);
      server.service(2);
      net::NetEvent ev;
      while (server.next_event(ev)) {
        if (ev.type == net::NetEvent::Type::kConnect) peer = ev.peer;
      }
    }
    REQUIRE(peer.valid());
    client.service(50);  // the client side completes its handshake too
  }

  // Sends `size` bytes unreliably on channel 1; returns what arrived (nullopt: refused or
  // nothing within a second).
  std::optional<RawClient::Received> send_unreliable(std::size_t size) {
    const std::vector<std::uint8_t> bytes(size, 0x5A);
    if (!server.send(peer, bytes, net::Delivery::kUnreliable, 1)) return std::nullopt;
    server.flush();
    return client.service(1000);
  }
};

}  // namespace

TEST_CASE("transport: the largest accepted max_packet_bytes arrives as one unreliable datagram") {
  net::EnetLibrary enet;
  Link link(net::kMaxUnfragmentedPayload, ENET_HOST_DEFAULT_MTU);
  const auto got = link.send_unreliable(net::kMaxUnfragmentedPayload);
  REQUIRE(got.has_value());
  CHECK(got->bytes == 1372);
  CHECK(got->channel == 1);
  // Reassembled fragments are delivered flagged reliable; a single unreliable command not.
  CHECK((got->flags & ENET_PACKET_FLAG_RELIABLE) == 0);
}

TEST_CASE("transport: ENet itself turns one byte more into reliable fragments") {
  // The boundary is ENet's, not ours: shown with raw ENet on both ends.
  net::EnetLibrary enet;
  ENetAddress a{};
  enet_address_set_host_ip(&a, "127.0.0.1");
  a.port = 0;
  ENetHost* server = enet_host_create(&a, 2, 2, 0, 0);
  REQUIRE(server != nullptr);
  ENetAddress bound{};
  REQUIRE(enet_socket_get_address(server->socket, &bound) == 0);
  RawClient client;
  client.connect(bound.port);
  ENetPeer* server_peer = nullptr;
  ENetEvent ev;
  for (int i = 0; i < 2000 && server_peer == nullptr; ++i) {
    client.service(1);
    if (enet_host_service(server, &ev, 1) > 0 && ev.type == ENET_EVENT_TYPE_CONNECT) {
      server_peer = ev.peer;
    }
  }
  REQUIRE(server_peer != nullptr);
  client.service(50);
  for (const std::size_t size : {std::size_t{1372}, std::size_t{1373}}) {
    CAPTURE(size);
    std::vector<std::uint8_t> bytes(size, 1);
    ENetPacket* p = enet_packet_create(bytes.data(), bytes.size(), 0);  // unreliable
    REQUIRE(enet_peer_send(server_peer, 1, p) == 0);
    enet_host_flush(server);
    std::optional<RawClient::Received> got;
    for (int i = 0; i < 1000 && !got; ++i) {
      got = client.service(1);
      enet_host_service(server, &ev, 0);  // acknowledgments of fragments
    }
    REQUIRE(got.has_value());
    CHECK(got->bytes == size);
    const bool reliable = (got->flags & ENET_PACKET_FLAG_RELIABLE) != 0;
    CHECK(reliable == (size > net::kMaxUnfragmentedPayload));
  }
  enet_host_destroy(server);
}

TEST_CASE("transport: unreliable sends above the hard cap are refused whatever the options") {
  net::EnetLibrary enet;
  // Options that would allow more than ENet sends unfragmented (the config refuses this,
  // the transport must too).
  Link link(1400, ENET_HOST_DEFAULT_MTU);
  CHECK_FALSE(link.send_unreliable(1373).has_value());
  CHECK_FALSE(link.send_unreliable(1400).has_value());
  CHECK(link.server.stats().send_refused == 2);
  const auto got = link.send_unreliable(1372);
  REQUIRE(got.has_value());
  CHECK((got->flags & ENET_PACKET_FLAG_RELIABLE) == 0);
  // Reliable packets may be any size: ENet fragments them as it should.
  const std::vector<std::uint8_t> big(4000, 7);
  CHECK(link.server.send(link.peer, big, net::Delivery::kReliable, 0));
}

TEST_CASE("transport: a peer that asks for a smaller MTU gets a smaller cap") {
  net::EnetLibrary enet;
  Link link(1200, net::kEnetMinimumMtu);  // the client's CONNECT asks for 576
  const std::size_t cap = net::max_unfragmented_payload(net::kEnetMinimumMtu);
  CHECK(cap == 548);
  CHECK_FALSE(link.send_unreliable(cap + 1).has_value());
  const auto got = link.send_unreliable(cap);
  REQUIRE(got.has_value());
  CHECK((got->flags & ENET_PACKET_FLAG_RELIABLE) == 0);
}

TEST_CASE(
    "capacity: the most players validation accepts bind - a host beyond ENet's limit would not") {
  net::EnetLibrary enet;
  config::ZoneConfig c = test::small_zone();
  c.threads.network = 2;
  c.players.max_players = config::max_players_for(2);
  CHECK(config::validate(c).empty());
  // Any host may get more than its share of clients: each is sized for all of them, up
  // to ENet's limit.
  const net::HostOptions first = make_host_options(c, 0);
  CHECK(first.max_peers == ENET_PROTOCOL_MAXIMUM_PEER_ID);
  net::EnetHost a{first};
  net::HostOptions second = make_host_options(c, 1);
  second.port = a.port();
  CHECK_NOTHROW(net::EnetHost{second});

  net::HostOptions beyond = first;
  beyond.max_peers = config::kPeersPerHost + 1;
  CHECK_THROWS_AS(net::EnetHost{beyond}, net::NetError);

  c.players.max_players = config::max_players_for(2) + 1;
  const auto errors = config::validate(c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "players.max_players");
}
