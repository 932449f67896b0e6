// How many players a zone can hold, from ENet's limits and the threads configured. One
// function, used by validation and by the server that sizes its hosts, so the two can
// never disagree.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>

#include "config/zone_config.hpp"

namespace zone::config {

// ENet numbers peers with 12 bits (ENET_PROTOCOL_MAXIMUM_PEER_ID = 0xFFF): a host holds at
// most 4,095 connections (tests/server/transport_limits_test.cpp checks it against
// <enet/protocol.h>).
inline constexpr std::uint32_t kPeersPerHost = 4095;
// Peer slots a host keeps beyond the players it may hold, so that a full zone can still
// answer a newcomer with a "server full" reason instead of silence.
inline constexpr std::uint32_t kSparePeerSlots = 16;
// The kernel spreads clients over the hosts sharing the port by a hash of their address,
// so hosts fill unevenly; the zone plans on 80% of each (well above three standard
// deviations of the spread at these sizes), the rest is slack.
inline constexpr std::uint32_t kPlayersPerHost = kPeersPerHost * 4 / 5;
inline constexpr std::uint32_t kMaxNetworkHosts = 16;

inline std::uint32_t cpu_cores() {
  return std::max(1u, std::thread::hardware_concurrency());
}
// threads.network with 0 resolved: one host per core, at most kMaxNetworkHosts.
inline std::uint32_t network_hosts(const ZoneConfig& c) {
  return c.threads.network != 0 ? c.threads.network : std::min(cpu_cores(), kMaxNetworkHosts);
}
// threads.workers with 0 resolved: one per core.
inline std::uint32_t replication_workers(const ZoneConfig& c) {
  return c.threads.workers != 0 ? c.threads.workers : cpu_cores();
}
inline std::uint32_t max_players_for(std::uint32_t hosts) {
  return hosts * kPlayersPerHost;
}

}  // namespace zone::config
