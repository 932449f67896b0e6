// The static layer's map file (static.map_file): the environment objects of a zone, trees,
// rocks and resource nodes, as circles. configs/maps/README.md describes the format;
// configs/maps/sample.yaml is one (scripts/make-static-map.py makes others). The loader
// is as strict as the zone config's: every problem is reported as FILE:LINE: KEY: MESSAGE,
// and a map that loads is one the zone can run (inside the world, within the limits
// below, leaving room to spawn).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_loader.hpp"
#include "config/zone_config.hpp"

namespace zone::config {

enum class StaticKind : std::uint8_t { kTree = 0, kRock = 1, kResource = 2 };

// Positions and radii are rounded to whole centimetres when loaded (as clients receive
// them), and every check is made on the rounded values.
struct StaticObjectSpec {
  StaticKind kind = StaticKind::kTree;
  double x = 0.0;  // metres, world coordinates
  double y = 0.0;
  double radius = 0.0;  // metres: nothing walks closer to the centre
};

// About 40 bytes a line: a file at the object cap fits, and the YAML tree of a file of
// this size stays a few hundred MB at worst.
inline constexpr std::size_t kMaxStaticMapBytes = 8 * 1024 * 1024;
inline constexpr std::size_t kMaxStaticObjects = 200000;
// Refused objects reported before the loader stops reading.
inline constexpr std::size_t kMaxStaticMapErrors = 100;
// Entries of the collision lists: each object is listed under every static cell its
// bounding box touches (aoi::StaticGrid), so a few huge objects on small cells cost
// this much memory (4 bytes an entry).
inline constexpr std::uint64_t kMaxStaticCellEntries = 4 * 1024 * 1024;
inline constexpr double kMaxStaticRadius = 1000.0;  // metres
// Objects whose centres share one static cell: one StaticObjects message holds a cell's
// objects whole, so this bounds a message. An object is 20 bytes in it and a cell 8, so a
// message of at most this many objects and kMaxStaticCellsPerMessage cells stays under
// 50 KB, well inside the largest packet the zone sends (network.max_packet_bytes is for
// snapshots; reliable messages may be up to 64 KiB).
inline constexpr std::size_t kMaxStaticObjectsPerCell = 2048;
inline constexpr std::size_t kMaxStaticCellsPerMessage = 1024;
// The objects may cover at most this share of the world's area, so spawns find room.
inline constexpr double kMaxStaticCover = 0.5;

struct StaticMapResult {
  std::vector<StaticObjectSpec> objects;  // in file order; valid only when ok()
  std::vector<ConfigError> errors;        // in line order
  std::string source;

  bool ok() const { return errors.empty(); }
  std::string error_report() const;  // one format_error() line per error
};

// Loads and checks the map for a zone of `config` (its world bounds and static.cell_size).
StaticMapResult load_static_map_file(const std::string& path, const ZoneConfig& config);
StaticMapResult load_static_map_string(std::string_view yaml, std::string source_name,
                                       const ZoneConfig& config);

}  // namespace zone::config
