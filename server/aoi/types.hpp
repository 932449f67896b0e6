// The AOI's vocabulary types, shared by GridAoi and CrowdTier.
#pragma once

#include <cstdint>

namespace zone::aoi {

// World position in metres. Double precision so that the enter/leave decisions are exact
// far from the origin.
struct Vec2 {
  double x = 0.0;
  double y = 0.0;
};

// Axis-aligned world rectangle [min, max]. Positions outside it are legal: the grid
// clamps them into its border cells for the broad phase, distances stay exact.
struct Bounds {
  Vec2 min;
  Vec2 max;
};
// Whether p lies in b, edges included.
inline bool contains(const Bounds& b, Vec2 p) {
  return p.x >= b.min.x && p.x <= b.max.x && p.y >= b.min.y && p.y <= b.max.y;
}

enum class EventKind : std::uint8_t { kEnter = 0, kLeave = 1 };

}  // namespace zone::aoi
