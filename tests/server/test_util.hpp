// Helpers shared by the server integration tests: small configurations, crafted client
// packets, and readable names for what the server reports.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "client/bot.hpp"
#include "config/zone_config.hpp"
#include "harness.hpp"
#include "protocol/codec.hpp"
#include "protocol/quantize.hpp"
#include "zone/zone_server.hpp"

namespace zone::test {

inline constexpr std::uint8_t kReliableChannel = protocol::kReliableChannel;
inline constexpr std::uint8_t kInputChannel = protocol::kUnreliableChannel;

// A zone so small that every entity is always within every player's view: the
// diagonal of 20 x 20 m is 28.3 m, less than the 30 m view radius. Player spawn points
// are random (seeded), so tests that need players to see each other use it.
inline config::ZoneConfig tiny_zone() {
  config::ZoneConfig c = small_zone();
  c.world = {0.0, 0.0, 20.0, 20.0};
  c.npcs.count = 5;
  return c;
}

// The disconnect reason a bot was given, as text, so failures read well.
inline std::string reason_of(std::uint32_t code) {
  return protocol::to_string(static_cast<protocol::DisconnectReason>(code));
}
inline std::string reason_of(const client::Bot& bot) {
  return reason_of(bot.disconnect_reason());
}
inline std::string reason_of(protocol::DisconnectReason r) {
  return protocol::to_string(r);
}

inline std::uint64_t drops(const ZoneServer& zone, DropReason r) {
  return zone.counters().drops[static_cast<std::size_t>(r)];
}
inline std::uint64_t disconnects(const ZoneServer& zone, protocol::DisconnectReason r) {
  return zone.counters().disconnects[static_cast<std::size_t>(r)];
}

inline std::vector<std::uint8_t> bytes_of(const flatbuffers::FlatBufferBuilder& fbb) {
  const auto s = protocol::bytes_of(fbb);
  return {s.begin(), s.end()};
}
inline std::vector<std::uint8_t> hello_packet(const std::string& name,
                                              std::uint16_t version = protocol::kProtocolVersion) {
  flatbuffers::FlatBufferBuilder fbb;
  protocol::build_hello(fbb, version, name);
  return bytes_of(fbb);
}
// An Input (channel 1): 16 bytes.
inline std::vector<std::uint8_t> input_packet(std::uint32_t sequence, float mx, float my,
                                              std::uint32_t ack_tick) {
  std::vector<std::uint8_t> bytes(protocol::kInputBytes);
  protocol::encode_input(
      {sequence, ack_tick, mx, my},
      std::span<std::uint8_t, protocol::kInputBytes>(bytes.data(), bytes.size()));
  return bytes;
}
// A verifiable ClientPacket whose union names a message type this protocol does not
// have (what a newer client might send).
inline std::vector<std::uint8_t> unknown_message_packet(std::uint8_t type) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto name = fbb.CreateString("x");
  const auto hello = protocol::CreateHello(fbb, protocol::kProtocolVersion, name);
  fbb.Finish(
      protocol::CreateClientPacket(fbb, static_cast<protocol::ClientMessage>(type), hello.Union()));
  return bytes_of(fbb);
}
// A ClientPacket with no message at all.
inline std::vector<std::uint8_t> empty_message_packet() {
  flatbuffers::FlatBufferBuilder fbb;
  protocol::ClientPacketBuilder b(fbb);
  fbb.Finish(b.Finish());
  return bytes_of(fbb);
}

inline bool send_bytes(Clients& clients, net::PeerId peer, const std::vector<std::uint8_t>& bytes,
                       net::Delivery delivery = net::Delivery::kReliable,
                       std::uint8_t channel = kReliableChannel) {
  return clients.host().send(peer, bytes, delivery, channel);
}

// The bot's own entity as its newest complete frame holds it.
inline replica::EntityState self_of(const client::Bot& bot) {
  return {bot.welcome().entity_id, bot.replica().self()};
}
inline std::string name_of(const client::Bot& bot, std::uint32_t id) {
  const replica::EntityInfo* info = bot.replica().info(id);
  return info ? info->name : std::string();
}
inline constexpr int kPlayerKind = static_cast<int>(protocol::EntityKind::kPlayer);
inline constexpr int kNpcKind = static_cast<int>(protocol::EntityKind::kNpc);
inline int kind_of(const client::Bot& bot, std::uint32_t id) {
  const replica::EntityInfo* info = bot.replica().info(id);
  return info ? static_cast<int>(info->kind) : -1;
}
// A ghost's or arrival's type and properties in the zone's built-in game (health and
// max_health, zone_params.hpp's make_game_types): type 0 is the player's, 1 the NPCs'.
inline world::PropertyValues health_properties(std::uint16_t type, std::int32_t health) {
  world::PropertyValues p;
  p.type = type;
  p.count = 2;
  p.values[0] = health;
  p.values[1] = health;
  return p;
}

// A property's value by name in values of the bot's session schema (-1: no such row).
inline std::int64_t property_of(const client::Bot& bot, protocol::Values values,
                                std::string_view name) {
  const auto row = bot.schema().find_field(name);
  return row ? values[*row] : -1;
}

// Distance in metres between two replicated states (centimetre positions).
inline double distance_m(const replica::EntityState& a, const replica::EntityState& b) {
  return std::hypot(static_cast<double>(a.x()) - b.x(), static_cast<double>(a.y()) - b.y()) *
         protocol::kPositionStep;
}
inline double metres(std::int32_t cm) {
  return protocol::dequantize_position(cm);
}

// A UDP socket on 127.0.0.1 with SO_REUSEPORT, as another program run by the same user
// would hold one (the kernel lets such sockets share a port with any of that user's
// SO_REUSEPORT sockets, whatever the process). Port 0: an ephemeral one.
class ForeignUdpSocket {
 public:
  explicit ForeignUdpSocket(std::uint16_t port = 0) : fd_(::socket(AF_INET, SOCK_DGRAM, 0)) {
    const int one = 1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
        ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      if (fd_ >= 0) ::close(fd_);
      throw std::runtime_error("cannot bind a UDP socket with SO_REUSEPORT");
    }
    port_ = ntohs(a.sin_port);
  }
  ~ForeignUdpSocket() { ::close(fd_); }
  ForeignUdpSocket(const ForeignUdpSocket&) = delete;
  ForeignUdpSocket& operator=(const ForeignUdpSocket&) = delete;
  std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

}  // namespace zone::test
