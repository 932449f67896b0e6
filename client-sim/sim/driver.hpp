// Per-bot movement: turns the scenario and the bot's authoritative position into the
// movement intent of its next input.
#pragma once

#include <utility>

#include "client/bot.hpp"
#include "sim/scenario.hpp"
#include "util/splitmix64.hpp"

namespace zone::sim {

struct DriverState {
  double heading = 0.0;
  bool anchored = false;  // patrol: anchor taken from the first known position
  double anchor_x = 0.0;
  double anchor_y = 0.0;
  double axis = 0.0;  // patrol: leg direction, radians
  double sign = 1.0;
  std::size_t waypoint = 0;  // route: the point walked to
  bool has_last = false;     // cross_zones wander: where the bot was at the last new frame
  double last_x = 0.0;
  double last_y = 0.0;
  std::uint32_t last_tick = 0;  // that frame's server tick
  // Combat (hunt): the entity chosen as the target (0: none), how far it is in the bot's
  // newest frame, and whether the bot itself is dead (its `state` property is 1).
  std::uint32_t target = 0;
  double target_distance = 0.0;
  bool dead = false;
};

// Combat: picks the nearest living entity the bot holds (of the kinds the scenario
// targets) into d.target and d.target_distance, and reads whether the bot is dead. An
// entity is living unless the schema has a `state` property and it is 1.
void choose_target(const Scenario& s, DriverState& d, const client::Bot& bot);

// Returns (move_x, move_y) with length <= 1.
std::pair<float, float> next_intent(const Scenario& s, DriverState& d, const client::Bot& bot,
                                    util::SplitMix64& rng, double dt);

}  // namespace zone::sim
