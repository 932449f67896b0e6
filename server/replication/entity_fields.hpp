// Where each replicated field's value comes from: a world entity, quantised into the
// units of the field table (shared/protocol/entity_fields.hpp) at the entity's precision.
#pragma once

#include "protocol/entity_fields.hpp"
#include "protocol/quantize.hpp"
#include "world/entity.hpp"

namespace zone::replication {

inline protocol::FieldValues entity_fields(const world::Entity& e) {
  protocol::FieldValues v{};
  const world::Precision& p = e.precision;
  v[protocol::kX] = protocol::quantize_position(e.x, p.position_cm);
  v[protocol::kY] = protocol::quantize_position(e.y, p.position_cm);
  v[protocol::kHeading] = protocol::quantize_heading(e.heading, p.heading_shift);
  v[protocol::kMoveState] = e.moving() ? 1 : 0;
  v[protocol::kHealth] = e.health;
  v[protocol::kParty] = static_cast<std::int32_t>(e.party);
  v[protocol::kGuild] = static_cast<std::int32_t>(e.guild);
  v[protocol::kPositionUnit] = p.position_cm - 1;
  v[protocol::kHeadingUnit] = p.heading_shift;
  return v;
}

}  // namespace zone::replication
