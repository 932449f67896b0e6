// Translation from the world map to the ghost exchange's parameters (like zone_params.hpp
// for the zone config), so that the cluster layer does not depend on the config format.
#pragma once

#include "cluster/ghost_exchange.hpp"
#include "config/world_map.hpp"

#include <algorithm>
#include <vector>

namespace zone {

inline aoi::Bounds to_bounds(const config::Rect& r) {
  return {{r.min_x, r.min_y}, {r.max_x, r.max_y}};
}

// The rectangles of zone `index`'s neighbours: where its players may step to be handed
// over (world::WorldParams::open_areas).
inline std::vector<aoi::Bounds> neighbour_areas(const config::WorldMap& map, std::size_t index) {
  std::vector<aoi::Bounds> areas;
  for (const std::size_t n : map.neighbours(index)) areas.push_back(to_bounds(map.zones[n].rect));
  return areas;
}

// `history_ticks`: the zone's replication history (network.history_ticks); `game_port`:
// the port the zone's game host bound (the map's, or an ephemeral one); `tick_rate`: a
// player taken back waits a second before it may cross again; `secrets`: how it logs in
// to NATS; `max_name_bytes`: players.max_name_length, which names from the bus meet too.
inline cluster::ExchangeParams make_exchange_params(const config::WorldMap& map, std::size_t index,
                                                    std::uint32_t history_ticks,
                                                    std::uint16_t game_port,
                                                    std::uint32_t tick_rate,
                                                    const config::BusSecrets& secrets = {},
                                                    std::size_t max_name_bytes = 32) {
  cluster::ExchangeParams p;
  p.nats_url = map.nats_url;
  p.nats_user = secrets.user;
  p.nats_password = secrets.password;
  p.nats_tls = secrets.tls;
  p.nats_ca_file = secrets.tls_ca_file;
  p.nats_cert_file = secrets.tls_cert_file;
  p.nats_key_file = secrets.tls_key_file;
  p.max_name_bytes = max_name_bytes;
  p.subject_prefix = map.subject_prefix;
  p.self_index = static_cast<std::uint32_t>(index);
  p.self_name = map.zones.at(index).name;
  for (const std::size_t n : map.neighbours(index)) {
    p.neighbours.push_back(
        {static_cast<std::uint32_t>(n), map.zones[n].name, to_bounds(map.zones[n].rect)});
  }
  for (std::size_t z = 0; z < map.zones.size(); ++z) {
    if (z != index) p.world_zones.push_back(map.zones[z].name);
  }
  p.ghost_distance = map.ghost_distance;
  p.ghost_timeout = std::chrono::milliseconds(map.ghost_timeout_ms);
  p.id_reuse_ticks = history_ticks + 1;
  const config::Address& reach = map.zones.at(index).public_game;
  p.game_host = reach.host;
  p.game_port = reach.port != 0 ? reach.port : game_port;
  p.handoff_timeout = std::chrono::milliseconds(map.handoff_timeout_ms);
  p.cross_cooldown_ticks = static_cast<std::uint16_t>(std::min<std::uint32_t>(tick_rate, 65535));
  return p;
}

}  // namespace zone
