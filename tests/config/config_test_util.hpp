// Helpers shared by the config tests.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/config_loader.hpp"

namespace zone::config::test {

// Field-by-field comparison (ZoneConfig has no operator==). Add new fields here too.
inline void check_same(const ZoneConfig& a, const ZoneConfig& b) {
  CHECK(a.name == b.name);
  CHECK(a.world.min_x == b.world.min_x);
  CHECK(a.world.min_y == b.world.min_y);
  CHECK(a.world.max_x == b.world.max_x);
  CHECK(a.world.max_y == b.world.max_y);
  CHECK(a.tick.rate_hz == b.tick.rate_hz);
  CHECK(a.aoi.enabled == b.aoi.enabled);
  CHECK(a.aoi.cell_size == b.aoi.cell_size);
  CHECK(a.aoi.view_radius == b.aoi.view_radius);
  CHECK(a.aoi.hysteresis == b.aoi.hysteresis);
  CHECK(a.players.max_players == b.players.max_players);
  CHECK(a.players.max_speed == b.players.max_speed);
  CHECK(a.players.max_name_length == b.players.max_name_length);
  CHECK(a.npcs.count == b.npcs.count);
  CHECK(a.npcs.seed == b.npcs.seed);
  CHECK(a.npcs.behaviour == b.npcs.behaviour);
  CHECK(a.npcs.speed == b.npcs.speed);
  CHECK(a.npcs.turn_rate == b.npcs.turn_rate);
  CHECK(a.npcs.patrol_length == b.npcs.patrol_length);
  CHECK(a.npcs.idle_fraction == b.npcs.idle_fraction);
  CHECK(a.network.bind_address == b.network.bind_address);
  CHECK(a.network.port == b.network.port);
  CHECK(a.network.channel_limit == b.network.channel_limit);
  CHECK(a.network.max_packet_bytes == b.network.max_packet_bytes);
  CHECK(a.network.client_bandwidth == b.network.client_bandwidth);
  CHECK(a.network.snapshot_interval_ticks == b.network.snapshot_interval_ticks);
  CHECK(a.network.history_ticks == b.network.history_ticks);
  CHECK(a.network.timeout_ms == b.network.timeout_ms);
  CHECK(a.interest.tiers == b.interest.tiers);
  CHECK(a.interest.near_fraction == b.interest.near_fraction);
  CHECK(a.interest.far_fraction == b.interest.far_fraction);
  CHECK(a.interest.middle_divisor == b.interest.middle_divisor);
  CHECK(a.interest.far_divisor == b.interest.far_divisor);
  CHECK(a.interest.crowd_threshold == b.interest.crowd_threshold);
  CHECK(a.interest.cone == b.interest.cone);
  CHECK(a.interest.cone_fov_degrees == b.interest.cone_fov_degrees);
  CHECK(a.interest.cone_radius == b.interest.cone_radius);
  CHECK(a.interest.load_adaptive == b.interest.load_adaptive);
  CHECK(a.interest.load_budget_ms == b.interest.load_budget_ms);
  CHECK(a.interest.load_raise_share == b.interest.load_raise_share);
  CHECK(a.interest.load_lower_share == b.interest.load_lower_share);
  CHECK(a.interest.load_smoothing_ticks == b.interest.load_smoothing_ticks);
  CHECK(a.interest.load_hold_ticks == b.interest.load_hold_ticks);
  CHECK(a.interest.load_far_slowdown == b.interest.load_far_slowdown);
  CHECK(a.interest.load_radius_steps == b.interest.load_radius_steps);
  CHECK(a.interest.load_radius_step == b.interest.load_radius_step);
  CHECK(a.precision.player_position_cm == b.precision.player_position_cm);
  CHECK(a.precision.player_heading_bits == b.precision.player_heading_bits);
  CHECK(a.precision.npc_position_cm == b.precision.npc_position_cm);
  CHECK(a.precision.npc_heading_bits == b.precision.npc_heading_bits);
  CHECK(a.precision.engage_radius == b.precision.engage_radius);
  CHECK(a.limits.max_client_packet_bytes == b.limits.max_client_packet_bytes);
  CHECK(a.limits.max_inputs_per_second == b.limits.max_inputs_per_second);
  CHECK(a.limits.max_bad_packets == b.limits.max_bad_packets);
  CHECK(a.auth.mode == b.auth.mode);
  CHECK(a.auth.public_key == b.auth.public_key);
  CHECK(a.auth.world == b.auth.world);
  CHECK(a.log.level == b.log.level);
  CHECK(a.log.status_interval_s == b.log.status_interval_s);
}

inline LoadResult load(std::string_view yaml) {
  return load_config_string(yaml, "test.yaml");
}

// The only error of a result (fails the test if there is not exactly one).
inline ConfigError only_error(const LoadResult& r) {
  INFO(r.error_report());
  REQUIRE(r.errors.size() == 1);
  return r.errors.front();
}

// The single error of a one-key document "section:\n  leaf: value\n" (on line 2).
inline ConfigError error_for(std::string_view section, std::string_view leaf,
                             std::string_view value) {
  const std::string yaml =
      std::string(section) + ":\n  " + std::string(leaf) + ": " + std::string(value) + "\n";
  INFO(yaml);
  const ConfigError e = only_error(load(yaml));
  CHECK(e.key == std::string(section) + "." + std::string(leaf));
  CHECK(e.line == 2);
  return e;
}

// Whether "section:\n  leaf: value\n" loads without errors.
inline bool accepts(std::string_view section, std::string_view leaf, std::string_view value) {
  const std::string yaml =
      std::string(section) + ":\n  " + std::string(leaf) + ": " + std::string(value) + "\n";
  const LoadResult r = load(yaml);
  INFO(yaml << r.error_report());
  return r.ok();
}

}  // namespace zone::config::test
