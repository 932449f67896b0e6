// Where each replicated value comes from: the engine's rows from a world entity,
// quantised at the entity's precision, and the game's properties as the world holds them
// (one row of the schema, protocol/schema.hpp).
#pragma once

#include <algorithm>

#include "protocol/quantize.hpp"
#include "protocol/schema.hpp"
#include "world/world.hpp"

namespace zone::replication {

inline void entity_values(const world::World& world, std::uint32_t slot,
                          protocol::MutableValues v) {
  const world::Entity& e = world.entity(slot);
  const world::Precision& p = e.precision;
  v[protocol::kX] = protocol::quantize_position(e.x, p.position_cm);
  v[protocol::kY] = protocol::quantize_position(e.y, p.position_cm);
  v[protocol::kHeading] = protocol::quantize_heading(e.heading, p.heading_shift);
  v[protocol::kMoveState] = protocol::move_state(e.moving(), e.teleports);
  v[protocol::kPositionUnit] = p.position_cm - 1;
  v[protocol::kHeadingUnit] = p.heading_shift;
  v[protocol::kParty] = static_cast<std::int32_t>(e.party);
  v[protocol::kGuild] = static_cast<std::int32_t>(e.guild);
  const auto properties = world.properties(slot);
  std::copy(properties.begin(), properties.end(), v.begin() + protocol::kEngineFieldCount);
}

}  // namespace zone::replication
