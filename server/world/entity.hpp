// What the world knows about one entity. Stored densely, indexed by the entity's AOI
// slot, so an AOI event leads to its entity without a lookup.
#pragma once

#include <cstdint>
#include <string>

#include "aoi/grid_aoi.hpp"

namespace zone::world {

// Zone-unique and never reused while the process runs, so a client can never confuse
// a new entity with an old one that had the same id.
using EntityId = std::uint32_t;
inline constexpr EntityId kNoEntity = 0;

enum class EntityKind : std::uint8_t { kPlayer = 0, kNpc = 1 };

struct Entity {
  EntityId id = kNoEntity;
  EntityKind kind = EntityKind::kNpc;
  aoi::EntityHandle aoi;
  double x = 0.0;
  double y = 0.0;
  double heading = 0.0;  // radians, direction of travel
  double vx = 0.0;       // m/s, this tick's velocity
  double vy = 0.0;
  std::uint16_t health = 0;
  std::uint16_t max_health = 0;
  std::string name;
  // Set by World::despawn. The record stays readable until its slot is reused, so the
  // AOI leave events of the despawn tick can still name the entity.
  bool despawned = false;
  bool live() const { return id != kNoEntity && !despawned; }
  bool moving() const { return vx != 0.0 || vy != 0.0; }
};

}  // namespace zone::world
