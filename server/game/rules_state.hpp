// What the game API's bound functions share (internal to server/game). Each VM gets its
// own VmState (its timers and thinking NPCs: no state carries across a reload), which
// points at the one RulesShared of the GameRules (the world, the clock, the counters,
// the query scratch). A VmState lives at a fixed address, the upvalue of every function
// bound into its VM.
#pragma once

#include <cstdint>
#include <vector>

#include "aoi/grid_aoi.hpp"
#include "game/thinkers.hpp"
#include "game/timer_queue.hpp"
#include "util/splitmix64.hpp"
#include "world/world.hpp"

namespace zone::game {

struct RulesShared {
  explicit RulesShared(world::World& w, std::uint64_t seed) : world(w), rng(seed) {}
  world::World& world;
  double now = 0.0;        // rules seconds: the sum of the ticks' dt so far
  std::uint32_t tick = 0;  // the zone's tick number, as tick() gave it
  std::uint64_t api_refusals = 0;
  util::SplitMix64 rng;  // game.random_point, from RulesParams::random_seed
  // Radius queries' scratch, kept from call to call (no allocation in a steady state).
  struct Found {
    double d2 = 0.0;
    world::EntityId id = world::kNoEntity;
  };
  std::vector<aoi::EntityHandle> near;
  std::vector<Found> found;
};

struct VmState {
  explicit VmState(RulesShared& s) : shared(&s) {}
  RulesShared* shared;
  TimerQueue timers;
  Thinkers thinkers;
  std::int64_t last_timer = 0;  // game.after's result, out of its guarded part
};

}  // namespace zone::game
