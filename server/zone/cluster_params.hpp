// Translation from the world map to the ghost exchange's parameters (like zone_params.hpp
// for the zone config), so that the cluster layer does not depend on the config format.
#pragma once

#include "cluster/ghost_exchange.hpp"
#include "config/world_map.hpp"

namespace zone {

inline aoi::Bounds to_bounds(const config::Rect& r) {
  return {{r.min_x, r.min_y}, {r.max_x, r.max_y}};
}

// `history_ticks`: the zone's replication history (network.history_ticks).
inline cluster::ExchangeParams make_exchange_params(const config::WorldMap& map, std::size_t index,
                                                    std::uint32_t history_ticks) {
  cluster::ExchangeParams p;
  p.nats_url = map.nats_url;
  p.subject_prefix = map.subject_prefix;
  p.self_index = static_cast<std::uint32_t>(index);
  p.self_name = map.zones.at(index).name;
  for (const std::size_t n : map.neighbours(index)) {
    p.neighbours.push_back(
        {static_cast<std::uint32_t>(n), map.zones[n].name, to_bounds(map.zones[n].rect)});
  }
  p.ghost_distance = map.ghost_distance;
  p.ghost_timeout = std::chrono::milliseconds(map.ghost_timeout_ms);
  p.id_reuse_ticks = history_ticks + 1;
  return p;
}

}  // namespace zone
