// NPC behaviour: a per-NPC state machine stepped once per tick. Behaviours are an enum
// switched on in one loop over contiguous brains, not virtual calls per NPC.
#pragma once

#include <cstdint>

#include "util/splitmix64.hpp"
#include "world/entity.hpp"

namespace zone::world {

enum class NpcBehaviour : std::uint8_t { kIdle, kWander, kPatrol };

struct NpcParams {
  std::uint32_t count = 0;
  std::uint64_t seed = 1;
  NpcBehaviour behaviour = NpcBehaviour::kWander;
  double speed = 3.0;          // m/s
  double turn_rate = 1.0;      // rad/s of random heading drift while wandering
  double patrol_length = 200;  // metres per patrol leg
  double idle_fraction = 0.2;  // share of time a wanderer stands still
};

// Who drives an NPC: its configured behaviour (NpcParams), or the game's rules
// (server/game), which steer it towards a point (a chase, a walk home) or hold it still
// until they release it to its behaviour again.
enum class NpcControl : std::uint8_t { kBehaviour, kSteer, kHold };

struct NpcBrain {
  std::uint32_t slot = 0;
  NpcControl control = NpcControl::kBehaviour;
  double goal_x = 0.0;  // kSteer: where it walks, at goal_speed (m/s), then stands
  double goal_y = 0.0;
  double goal_speed = 0.0;
  double timer = 0.0;     // seconds left in the current phase
  bool resting = false;   // wander: standing still
  double anchor_x = 0.0;  // patrol: centre of the leg
  double anchor_y = 0.0;
  double axis_x = 1.0;  // patrol: unit direction of the leg
  double axis_y = 0.0;
  double sign = 1.0;  // patrol: which way along the leg
};

// Sets the NPC's velocity and heading for this tick: its behaviour's, or the rules'
// steering (straight at the goal, arriving exactly, no path-finding).
void think(NpcBrain& brain, Entity& npc, const NpcParams& params, util::SplitMix64& rng, double dt);
// Steering around the static layer: the NPC walked into an object and could not move;
// it heads the other way (a wanderer turns round, a patroller walks its leg back). An NPC
// the rules steer keeps its goal.
void turn_back(NpcBrain& brain, Entity& npc, const NpcParams& params);

}  // namespace zone::world
