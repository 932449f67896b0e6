// How many players a zone can take: the one place that knows, for config validation and
// for sizing the ENet host (zone/zone_params.hpp).
//
// ENet numbers a host's peers with 12 bits (ENET_PROTOCOL_MAXIMUM_PEER_ID = 0xFFF), so
// enet_host_create() refuses more than 4095 peers and the server fails at bind. The
// server also keeps kSparePeerSlots peers beyond players.max_players, so that a full
// zone can still answer a newcomer with a "server full" reason instead of silence.
// tests/server/transport_limits_test.cpp checks these against <enet/protocol.h> and
// binds a host of exactly max_players_limit() players.
#pragma once

#include <cstdint>

namespace zone::config {

inline constexpr std::uint32_t kEnetMaxPeersPerHost = 4095;  // ENET_PROTOCOL_MAXIMUM_PEER_ID
inline constexpr std::uint32_t kSparePeerSlots = 16;

// The most players `network_hosts` ENet hosts can take. Today a zone has one host; a
// config key for more hosts turns the players.max_players bound in config_schema.cpp
// into a check across keys on max_players_limit(that key).
constexpr std::uint32_t max_players_limit(std::uint32_t network_hosts = 1) {
  return network_hosts * (kEnetMaxPeersPerHost - kSparePeerSlots);
}

}  // namespace zone::config
