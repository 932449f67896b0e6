// Where each replicated field's value comes from: a world entity, quantised into the
// units of the field table (shared/protocol/entity_fields.hpp).
#pragma once

#include "protocol/entity_fields.hpp"
#include "protocol/quantize.hpp"
#include "world/entity.hpp"

namespace zone::replication {

inline protocol::FieldValues entity_fields(const world::Entity& e) {
  protocol::FieldValues v{};
  v[protocol::kX] = protocol::quantize_position(e.x);
  v[protocol::kY] = protocol::quantize_position(e.y);
  v[protocol::kHeading] = protocol::quantize_heading(e.heading);
  v[protocol::kMoveState] = e.moving() ? 1 : 0;
  v[protocol::kHealth] = e.health;
  v[protocol::kParty] = static_cast<std::int32_t>(e.party);
  v[protocol::kGuild] = static_cast<std::int32_t>(e.guild);
  return v;
}

}  // namespace zone::replication
