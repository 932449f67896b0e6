// The game's entity types and properties as the world holds them: the schema (the rows
// every entity carries, protocol/schema.hpp) and, per entity type, the values a new
// entity of that type starts with. The zone builds it from the game's data file
// (configs/game/); the world only stores and hands out values by row.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "protocol/schema.hpp"

namespace zone::world {

// Rows of the schema after the engine's: the game's properties, counted from 0.
inline constexpr std::size_t kMaxProperties = protocol::kMaxFields - protocol::kEngineFieldCount;

struct EntityTypeDefaults {
  // One value per game property (row kEngineFieldCount + i of the schema).
  std::vector<std::int32_t> properties;
};

struct GameTypes {
  protocol::Schema schema;
  std::vector<EntityTypeDefaults> defaults;  // by schema type index
  std::uint16_t player_type = 0;             // the type players spawn as
  std::uint16_t npc_type = 1;                // the type the zone's configured NPCs spawn as
  std::size_t property_count() const { return schema.size() - protocol::kEngineFieldCount; }
};

// The engine's rows alone, with types "player" and "npc" and no properties.
GameTypes default_game_types();

// A game property's value kept as its field holds it (wrapped to the width and
// sign-extended: what a client decodes).
std::int32_t normalize_property(const GameTypes& game, std::size_t property, std::int64_t value);

// An entity's game properties copied out of the world (a ghost report, a handoff): its
// type and one value per property, without an allocation.
struct PropertyValues {
  std::uint16_t type = 0;
  std::uint8_t count = 0;
  std::array<std::int32_t, kMaxProperties> values{};
  std::span<const std::int32_t> view() const { return {values.data(), count}; }
  void assign(std::span<const std::int32_t> v) {
    count = static_cast<std::uint8_t>(v.size() < kMaxProperties ? v.size() : kMaxProperties);
    for (std::size_t i = 0; i < count; ++i) values[i] = v[i];
  }
  friend bool operator==(const PropertyValues& a, const PropertyValues& b) {
    if (a.type != b.type || a.count != b.count) return false;
    for (std::size_t i = 0; i < a.count; ++i) {
      if (a.values[i] != b.values[i]) return false;
    }
    return true;
  }
};

}  // namespace zone::world
