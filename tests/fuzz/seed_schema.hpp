// The schema the snapshot_part seeds are written in (make_seeds.cpp) and the fuzz target
// reads every input in (fuzz_snapshot_part.cpp): the zone's built-in game
// (zone::make_game_types): the engine's rows, then health (u16, immediate) and max_health
// (u16); the entity types "player" (0) and "npc" (1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/schema.hpp"

namespace zone::fuzz {

inline const protocol::Schema& seed_schema() {
  static const protocol::Schema schema = [] {
    protocol::Schema s;
    protocol::FieldSpec health;
    health.name = "health";
    health.bits = 16;
    health.update = protocol::UpdateTier::kImmediate;
    protocol::FieldSpec max_health = health;
    max_health.name = "max_health";
    max_health.update = protocol::UpdateTier::kTiered;
    s.add_field(health);
    s.add_field(max_health);
    return s;
  }();
  return schema;
}
inline constexpr std::size_t kHealthRow = protocol::kEngineFieldCount;
inline constexpr std::size_t kMaxHealthRow = protocol::kEngineFieldCount + 1;
inline constexpr std::uint16_t kPlayerType = 0;
inline constexpr std::uint16_t kNpcType = 1;

}  // namespace zone::fuzz
