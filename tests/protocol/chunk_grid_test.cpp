// The chunk layer's geometry (shared/util/chunk_grid.hpp): which chunks lie within a
// radius (against a brute-force scan of every chunk), and the load / unload rule with its
// hysteresis: walking along a chunk border never loads and unloads the same chunk over
// and over.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "util/chunk_grid.hpp"

using zone::util::ChunkCoord;
using zone::util::ChunkGrid;

namespace {

std::vector<ChunkCoord> brute_within(const ChunkGrid& g, double x, double y, double radius) {
  std::vector<ChunkCoord> out;
  for (std::int32_t c = 0; c < g.cols(); ++c) {
    for (std::int32_t r = 0; r < g.rows(); ++r) {
      // The chunk's nearest point, clamped coordinate by coordinate.
      const double x0 = g.min_x + c * g.size, y0 = g.min_y + r * g.size;
      const double nx = std::clamp(x, x0, x0 + g.size), ny = std::clamp(y, y0, y0 + g.size);
      if (std::hypot(nx - x, ny - y) <= radius) out.push_back({c, r});
    }
  }
  return out;
}

}  // namespace

TEST_CASE("chunk grid: the chunks within a radius are exactly those a full scan finds") {
  const ChunkGrid g{-300.0, 100.0, 1700.0, 1300.0, 128.0};
  CHECK(g.cols() == 16);  // 2000 / 128 = 15.6: the last column is cut by the world's edge
  CHECK(g.rows() == 10);  // 1200 / 128 = 9.4
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> px(-600.0, 2000.0), py(-200.0, 1600.0), pr(0.0, 500.0);
  for (int i = 0; i < 3000; ++i) {
    const double x = px(rng), y = py(rng), r = pr(rng);
    std::vector<ChunkCoord> fast;
    g.within(x, y, r, fast);
    REQUIRE(fast == brute_within(g, x, y, r));
  }
  // A point inside a chunk has that chunk at distance 0, even with radius 0.
  std::vector<ChunkCoord> own;
  g.within(-300.0 + 128.0 * 3 + 5.0, 100.0 + 128.0 * 7 + 60.0, 0.0, own);
  CHECK(own == std::vector<ChunkCoord>{{3, 7}});
}

TEST_CASE("chunk grid: load within the radius - unload only past radius plus hysteresis") {
  const ChunkGrid g{0.0, 0.0, 1024.0, 1024.0, 64.0};
  std::vector<ChunkCoord> loaded, load, unload, scratch;
  g.update(100.0, 100.0, 50.0, 70.0, loaded, load, unload, scratch);
  CHECK(unload.empty());
  CHECK(load == brute_within(g, 100.0, 100.0, 50.0));
  CHECK(loaded == load);
  // Pacing 10 m back and forth over the border between columns 1 and 2 (x = 128), less
  // than the 20 m hysteresis: what was loaded stays within the unload radius, what was
  // not stays beyond the load radius, so nothing changes after the first steps.
  std::uint64_t changes = 0;
  for (int step = 0; step < 200; ++step) {
    const double x = 128.0 + ((step % 2) ? 5.0 : -5.0);
    load.clear();
    unload.clear();
    g.update(x, 100.0, 50.0, 70.0, loaded, load, unload, scratch);
    if (step > 1) changes += load.size() + unload.size();
    // The rule holds after every update.
    for (const ChunkCoord c : brute_within(g, x, 100.0, 50.0)) {
      CHECK(std::binary_search(loaded.begin(), loaded.end(), c));
    }
    for (const ChunkCoord c : loaded) CHECK(g.distance(c, x, 100.0) <= 70.0);
    CHECK(std::is_sorted(loaded.begin(), loaded.end()));
  }
  CHECK(changes == 0);
  // Walking away: everything behind goes once it is past 70 m.
  load.clear();
  unload.clear();
  g.update(600.0, 600.0, 50.0, 70.0, loaded, load, unload, scratch);
  CHECK(!unload.empty());
  CHECK(loaded == brute_within(g, 600.0, 600.0, 50.0));
}

TEST_CASE("chunk grid: the most chunks a player can hold bounds every update") {
  const double size = 64.0, load_radius = 150.0, unload_radius = 190.0;
  const std::uint64_t most = ChunkGrid::max_loaded(size, unload_radius);
  const ChunkGrid g{0.0, 0.0, 4096.0, 4096.0, size};
  std::vector<ChunkCoord> loaded, load, unload, scratch;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> step(-40.0, 40.0);
  double x = 2000.0, y = 2000.0;
  for (int i = 0; i < 5000; ++i) {
    x = std::clamp(x + step(rng), 0.0, 4096.0);
    y = std::clamp(y + step(rng), 0.0, 4096.0);
    load.clear();
    unload.clear();
    g.update(x, y, load_radius, unload_radius, loaded, load, unload, scratch);
    REQUIRE(loaded.size() <= most);
  }
}

TEST_CASE("chunk grid: a chunk whose edge lies exactly at the radius is within it, on every side") {
  const ChunkGrid g{0.0, 0.0, 640.0, 640.0, 64.0};
  // From (320, 320) with radius 64: the chunks ending at x = 256 and starting at x = 384
  // (and the same in y) are exactly 64 m away.
  std::vector<ChunkCoord> got;
  g.within(320.0, 320.0, 64.0, got);
  CHECK(got == brute_within(g, 320.0, 320.0, 64.0));
  for (const ChunkCoord c :
       {ChunkCoord{3, 5}, ChunkCoord{6, 5}, ChunkCoord{5, 3}, ChunkCoord{5, 6}}) {
    CAPTURE(c.col);
    CAPTURE(c.row);
    CHECK(std::binary_search(got.begin(), got.end(), c));
  }
}
