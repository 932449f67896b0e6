// The chunk layer's geometry (docs/architecture.md, "Chunk layer"): the world is cut into
// square chunks of a configured size, counted in columns and rows from the world's
// minimum corner. A player needs the chunks whose square lies within the load radius of
// it; it gives one back only once the chunk is farther than the unload radius (load
// radius plus hysteresis), so walking along a chunk border does not load and unload the
// same chunk over and over. Shared by the server, which decides, and client-sim, which
// checks the decisions.
#pragma once

#include <algorithm>
#include <cmath>
#include <compare>
#include <cstdint>
#include <vector>

namespace zone::util {

struct ChunkCoord {
  std::int32_t col = 0;
  std::int32_t row = 0;
  friend auto operator<=>(ChunkCoord, ChunkCoord) = default;
};

struct ChunkGrid {
  double min_x = 0.0, min_y = 0.0, max_x = 0.0, max_y = 0.0;  // the world
  double size = 512.0;                                        // metres

  std::int32_t cols() const { return count(max_x - min_x); }
  std::int32_t rows() const { return count(max_y - min_y); }

  // The chunk holding (x, y), clamped into the world's columns and rows (a point on the
  // world's maximum edge is in the last column or row).
  ChunkCoord cell_of(double x, double y) const {
    return {std::clamp<std::int32_t>(index((x - min_x) / size), 0, cols() - 1),
            std::clamp<std::int32_t>(index((y - min_y) / size), 0, rows() - 1)};
  }

  // Cells the bounding square of a circle of `radius` at (x, y) touches, its corners
  // clamped into the world's columns and rows: the entries the circle takes in the static
  // grid's collision lists (aoi::StaticGrid files it the same way), which the map loader
  // bounds without building the grid.
  std::uint64_t touched(double x, double y, double radius) const {
    const ChunkCoord lo = cell_of(x - radius, y - radius);
    const ChunkCoord hi = cell_of(x + radius, y + radius);
    return static_cast<std::uint64_t>(hi.col - lo.col + 1) *
           static_cast<std::uint64_t>(hi.row - lo.row + 1);
  }

  // Distance (metres) from (x, y) to the chunk's square; 0 inside it.
  double distance(ChunkCoord c, double x, double y) const {
    const double x0 = min_x + c.col * size, y0 = min_y + c.row * size;
    const double dx = std::max({x0 - x, 0.0, x - (x0 + size)});
    const double dy = std::max({y0 - y, 0.0, y - (y0 + size)});
    return std::hypot(dx, dy);
  }

  // Every chunk of the world within `radius` of (x, y), ascending by (col, row),
  // appended to out.
  void within(double x, double y, double radius, std::vector<ChunkCoord>& out) const {
    const auto clamp_col = [&](double v) {
      return std::clamp<std::int32_t>(index(v), 0, cols() - 1);
    };
    const auto clamp_row = [&](double v) {
      return std::clamp<std::int32_t>(index(v), 0, rows() - 1);
    };
    // One chunk more on each side than the disc's bounding box needs: a chunk whose edge
    // lies exactly at the radius is within it, and the distance test decides.
    const std::int32_t c0 = clamp_col((x - radius - min_x) / size - 1.0);
    const std::int32_t c1 = clamp_col((x + radius - min_x) / size + 1.0);
    const std::int32_t r0 = clamp_row((y - radius - min_y) / size - 1.0);
    const std::int32_t r1 = clamp_row((y + radius - min_y) / size + 1.0);
    for (std::int32_t c = c0; c <= c1; ++c) {
      for (std::int32_t r = r0; r <= r1; ++r) {
        if (distance({c, r}, x, y) <= radius) out.push_back({c, r});
      }
    }
  }

  // Brings a player's loaded chunks (`loaded`, ascending) up to date for its position:
  // every chunk within `load_radius` is loaded, and a loaded one farther than
  // `unload_radius` is unloaded. The changes are appended to `load` and `unload`
  // (ascending); `scratch` is working space.
  void update(double x, double y, double load_radius, double unload_radius,
              std::vector<ChunkCoord>& loaded, std::vector<ChunkCoord>& load,
              std::vector<ChunkCoord>& unload, std::vector<ChunkCoord>& scratch) const {
    scratch.clear();
    within(x, y, load_radius, scratch);
    std::set_difference(scratch.begin(), scratch.end(), loaded.begin(), loaded.end(),
                        std::back_inserter(load));
    for (const ChunkCoord c : loaded) {
      if (distance(c, x, y) > unload_radius) unload.push_back(c);
    }
    if (load.empty() && unload.empty()) return;
    std::vector<ChunkCoord> next;
    next.reserve(loaded.size() + load.size());
    std::set_difference(loaded.begin(), loaded.end(), unload.begin(), unload.end(),
                        std::back_inserter(next));
    const std::size_t kept = next.size();
    next.insert(next.end(), load.begin(), load.end());
    std::inplace_merge(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(kept), next.end());
    loaded.swap(next);
  }

  // Most chunks a player can hold at once: a bound on the chunks within the unload
  // radius of a point. Across either axis a closed disc of diameter d touches at most
  // floor(d / size) + 2 chunks (d a whole number of chunks from a corner: both ends touch).
  static std::uint64_t max_loaded(double size, double unload_radius) {
    const double across = std::floor(2.0 * unload_radius / size) + 2.0;
    return static_cast<std::uint64_t>(across * across);
  }

 private:
  std::int32_t count(double extent) const {
    return std::max<std::int32_t>(1, static_cast<std::int32_t>(std::ceil(extent / size)));
  }
  static std::int32_t index(double v) {
    return static_cast<std::int32_t>(std::clamp(std::floor(v), -2.0e9, 2.0e9));
  }
};

}  // namespace zone::util
