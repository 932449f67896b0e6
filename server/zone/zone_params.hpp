// Translation from the config file's shape to each layer's own parameters, so that no
// layer below the zone depends on the config format.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>

#include "auth/verifier.hpp"
#include "config/capacity.hpp"
#include "config/static_map.hpp"
#include "config/zone_config.hpp"
#include "net/enet_host.hpp"
#include "protocol/quantize.hpp"
#include "replication/replicator.hpp"
#include "world/world.hpp"
#include "zone/game_params.hpp"
#include "zone/ingest.hpp"
#include "zone/load_governor.hpp"

namespace zone {

inline world::NpcParams make_npc_params(const config::NpcConfig& c) {
  world::NpcParams p;
  p.count = c.count;
  p.seed = c.seed;
  switch (c.behaviour) {
    case config::NpcBehaviour::kIdle:
      p.behaviour = world::NpcBehaviour::kIdle;
      break;
    case config::NpcBehaviour::kWander:
      p.behaviour = world::NpcBehaviour::kWander;
      break;
    case config::NpcBehaviour::kPatrol:
      p.behaviour = world::NpcBehaviour::kPatrol;
      break;
  }
  p.speed = c.speed;
  p.turn_rate = c.turn_rate;
  p.patrol_length = c.patrol_length;
  p.idle_fraction = c.idle_fraction;
  return p;
}

inline world::PrecisionParams make_precision_params(const config::PrecisionConfig& c) {
  auto tier = [](std::uint32_t cm, std::uint32_t heading_bits) {
    return world::Precision{static_cast<std::uint16_t>(cm),
                            static_cast<std::uint8_t>(16 - heading_bits)};
  };
  return {tier(c.player_position_cm, c.player_heading_bits),
          tier(c.npc_position_cm, c.npc_heading_bits), c.engage_radius};
}

// The static layer: the map's objects with ids 1.. in file order, in the grid's cells.
inline world::StaticParams make_static_params(const config::StaticMapResult& map,
                                              const config::StaticConfig& c) {
  auto objects = std::make_shared<std::vector<world::StaticObject>>();
  objects->reserve(map.objects.size());
  std::uint32_t id = 0;
  for (const config::StaticObjectSpec& o : map.objects) {
    // Already whole centimetres (the loader rounds them as clients receive them).
    objects->push_back({++id, static_cast<world::StaticKind>(o.kind), o.x, o.y, o.radius});
  }
  return {std::move(objects), c.cell_size};
}

// `zone_index`: the zone's index in the world map (0 alone), the top bits of its ids;
// `ghost_margin`: the world map's ghost distance (0 alone), what the AOI covers beyond
// the zone's bounds for its neighbours' ghosts.
inline world::WorldParams make_world_params(const config::ZoneConfig& c,
                                            std::uint32_t zone_index = 0, double ghost_margin = 0.0,
                                            world::StaticParams statics = {}) {
  world::WorldParams p;
  p.grid.bounds = {{c.world.min_x, c.world.min_y}, {c.world.max_x, c.world.max_y}};
  p.grid.cell_size = c.aoi.cell_size;
  p.grid.hysteresis = c.aoi.hysteresis;
  p.grid.crowd_min_in_view = c.aoi.crowd_min_in_view;
  p.player_view_radius = c.aoi.view_radius;
  p.broadcast = !c.aoi.enabled;
  p.player_max_speed = c.players.max_speed;
  p.game = make_game_types(config::builtin_game_data());
  p.spawn_seed = c.npcs.seed ^ 0x5A17E5EEDull;
  p.npcs = make_npc_params(c.npcs);
  p.parties = {c.party.enabled, c.party.max_size, c.party.full_range};
  p.guilds = {c.guild.enabled, c.guild.max_size, c.guild.full_range};
  p.precision = make_precision_params(c.precision);
  p.statics = std::move(statics);
  p.zone_index = zone_index;
  p.ghost_margin = ghost_margin;
  return p;
}

// interest.load_adaptive: the view radius at a load level, as a share of aoi.view_radius.
inline double load_radius_factor(const config::InterestConfig& c, std::uint32_t level) {
  if (!c.load_adaptive || level < 2) return 1.0;
  return 1.0 - c.load_radius_step * std::min(level - 1, c.load_radius_steps);
}

inline LoadParams make_load_params(const config::ZoneConfig& c) {
  LoadParams p;
  p.enabled = c.interest.load_adaptive;
  p.budget_seconds =
      c.interest.load_budget_ms > 0.0 ? c.interest.load_budget_ms / 1000.0 : 1.0 / c.tick.rate_hz;
  p.raise_share = c.interest.load_raise_share;
  p.lower_share = c.interest.load_lower_share;
  p.smoothing_ticks = c.interest.load_smoothing_ticks;
  p.hold_ticks = c.interest.load_hold_ticks;
  p.max_level = 1 + c.interest.load_radius_steps;
  return p;
}

// `load_level`: interest.load_adaptive's level (level >= 1 slows the far tier down).
inline replication::ReplicationParams make_replication_params(const config::ZoneConfig& c,
                                                              std::uint32_t load_level = 0) {
  replication::ReplicationParams p;
  p.tick_rate = c.tick.rate_hz;
  p.max_packet_bytes = c.network.max_packet_bytes;
  p.client_bandwidth = c.network.client_bandwidth;
  p.snapshot_interval = c.network.snapshot_interval_ticks;
  p.history_ticks = c.network.history_ticks;
  // Rounded up: a wait of at least the configured time.
  p.max_deferral_ticks = (c.network.max_deferral_ms * c.tick.rate_hz + 999) / 1000;
  const config::InterestConfig& i = c.interest;
  p.interest.tiers = i.tiers;
  p.interest.near_fraction = i.near_fraction;
  p.interest.far_fraction = i.far_fraction;
  p.interest.middle_divisor = i.middle_divisor;
  p.interest.far_divisor = i.far_divisor;
  p.interest.crowd_threshold = i.crowd_threshold;
  p.interest.cone = i.cone;
  p.interest.cone_fov_degrees = i.cone_fov_degrees;
  p.interest.cone_radius = i.cone_radius;
  p.interest.far_slowdown = i.load_adaptive && load_level >= 1 ? i.load_far_slowdown : 1;
  return p;
}

// Host `index` of the zone's network hosts (all share network.port).
inline net::HostOptions make_host_options(const config::ZoneConfig& c, std::uint32_t index) {
  net::HostOptions o;
  o.bind_address = c.network.bind_address;
  o.port = c.network.port;
  o.reuse_port = true;
  o.join_group = index > 0;  // the first host claims the port, the others join it
  o.host_index = index;
  // Clients spread over the hosts by address hash, so any host may get more than its
  // share: each can hold every player (up to ENet's limit), plus a few slots so that a
  // full server can still tell a newcomer why it is refused instead of leaving its
  // connection attempt unanswered.
  // Connections waiting for their hello and unfinished handshakes have slots of their
  // own, so that strangers can never take a player's.
  o.max_peers = std::min<std::size_t>(config::kPeersPerHost,
                                      std::size_t{c.players.max_players} + config::kSparePeerSlots +
                                          c.limits.max_awaiting_hello + c.limits.max_handshakes);
  o.admission.per_address = c.limits.max_connections_per_address;
  o.admission.half_open = c.limits.max_handshakes;
  o.admission.half_open_per_address = c.limits.max_handshakes_per_address;
  o.admission.half_open_timeout_ms = c.limits.handshake_timeout_ms;
  o.admission.exempt_loopback = c.limits.loopback_exempt;
  o.admission.connect_cookies = c.limits.connect_cookies;
  o.channels = c.network.channel_limit;
  o.max_unreliable_bytes = c.network.max_packet_bytes;
  o.timeout_ms = c.network.timeout_ms;
  // ENet itself refuses to reassemble anything larger (the sender's channel then stalls
  // until it times out); below that, oversize packets are dropped and counted.
  o.max_packet_bytes = std::max<std::size_t>(
      64 * 1024, std::max(c.limits.max_client_packet_bytes, c.network.max_packet_bytes));
  return o;
}

inline Ingest::Limits make_ingest_limits(const config::ZoneConfig& c) {
  Ingest::Limits l;
  l.max_packet_bytes = c.limits.max_client_packet_bytes;
  // Room for several inputs per player per tick (a burst after a stall) before the
  // queue refuses more.
  l.max_events = std::max<std::size_t>(4096, std::size_t{8} * c.players.max_players);
  return l;
}

// The ticket verifier of a zone in ticket mode (auth.mode), nullptr in open mode. The
// config was validated: its key is a valid one.
inline std::unique_ptr<const auth::TicketVerifier> make_ticket_verifier(
    const config::ZoneConfig& c) {
  if (c.auth.mode != config::AuthMode::kTicket) return nullptr;
  const std::optional<auth::PublicKey> key = auth::parse_public_key(c.auth.public_key);
  if (!key) throw std::invalid_argument("auth.public_key is not a valid Ed25519 public key");
  return std::make_unique<const auth::TicketVerifier>(*key, config::ticket_world(c));
}

}  // namespace zone
