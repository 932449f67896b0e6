// The static layer's objects as the world holds them (docs/architecture.md, "Static
// layer"): trees, rocks and resource nodes from the zone's map file, circles that never
// move. The world files them in an aoi::StaticGrid for collision; replication sends
// them to each client once.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace zone::world {

enum class StaticKind : std::uint8_t { kTree = 0, kRock = 1, kResource = 2 };

struct StaticObject {
  std::uint32_t id = 0;  // 1.. in map file order
  StaticKind kind = StaticKind::kTree;
  double x = 0.0;  // metres
  double y = 0.0;
  double radius = 0.0;  // metres: nothing that moves comes closer to the centre
};

struct StaticParams {
  // Shared, never changed after start-up: copies of the params cost nothing.
  std::shared_ptr<const std::vector<StaticObject>> objects;
  double cell_size = 64.0;  // metres, the static grid's cells
};

}  // namespace zone::world
