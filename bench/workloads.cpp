#include "workloads.hpp"

#include <cmath>
#include <cstring>
#include <numbers>

namespace zone::bench {
namespace {

// clang-format off
// The standard table, verbatim, plus our default cell size in the last column.
//
// Cell sizes: measured on the 2-core bench machine for the first core (Release,
// aoi-bench --cell-size X, 5-7 interleaved runs per size) and re-checked for each later
// one, where they only matter to list rebuilds and teleport notifications
// (docs/benchmarks.md). The grid walks each disc as one contiguous range per cell row, so
// smaller cells trim the corners of the scanned square but add rows (a sqrt and two cell
// lookups each) per query.
//  - sparse workloads (~7 neighbours): 96 m since lists live 32 ticks (a list of radius
//    r + 15.5 m then spans about one cell): pinned medians against 64 m: uniform-10k 0.95,
//    uniform-100k 0.96, teleport-10k 0.98, mixed-20k 0.95 (32 m 1.14, 48 m 1.04, 128 m
//    0.95). The first core: 64 m, 16 m 27-45% slower.
//  - hotspot-20k (~660 neighbours in the square): cost is per visible pair, the cell size
//    barely matters; 12 m measured best (35.3 ms; 8 m 36.0, 16 m 36.0, 32 m 39.5).
constexpr Workload kWorkloads[] = {
  // name            N       W       H       r     r2    h    speed turn dt    tele  hot  hsize T    seed cell
  {"uniform-10k",   10000,  2000.0, 2000.0, 30.0, 0.0,  2.0, 5.0, 0.5, 0.05, 0.0,  0.0, 0.0,   200, 1,   96.0},
  {"uniform-100k",  100000, 6400.0, 6400.0, 30.0, 0.0,  2.0, 5.0, 0.5, 0.05, 0.0,  0.0, 0.0,   100, 2,   96.0},
  {"hotspot-20k",   20000,  4000.0, 4000.0, 30.0, 0.0,  2.0, 5.0, 0.5, 0.05, 0.0,  0.5, 200.0, 50,  3,   12.0},
  {"teleport-10k",  10000,  2000.0, 2000.0, 30.0, 0.0,  2.0, 5.0, 0.5, 0.05, 0.01, 0.0, 0.0,   200, 4,   96.0},
  {"mixed-20k",     20000,  3000.0, 3000.0, 20.0, 60.0, 2.0, 5.0, 0.5, 0.05, 0.0,  0.0, 0.0,   100, 5,   96.0},
};
// Not in the standard table: hotspot-20k's crowd alone (10,000 entities in the same 200 m
// square at the same speeds; its own trajectories), for what a crowd costs without the
// sparse half (docs/benchmarks.md, "The crowd tier").
constexpr Workload kExtraWorkloads[] = {
  {"crowd-10k",     10000,  4000.0, 4000.0, 30.0, 0.0,  2.0, 5.0, 0.5, 0.05, 0.0,  1.0, 200.0, 50,  3,   12.0},
};
// clang-format on

}  // namespace

std::uint32_t Workload::hot_count() const {
  return static_cast<std::uint32_t>(std::floor(static_cast<double>(entities) * hot_frac));
}

std::span<const Workload> workloads() {
  return kWorkloads;
}

std::span<const Workload> extra_workloads() {
  return kExtraWorkloads;
}

const Workload* find_workload(std::string_view name) {
  for (const Workload& w : kWorkloads) {
    if (w.name == name) return &w;
  }
  for (const Workload& w : kExtraWorkloads) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

Trajectories::Trajectories(const Workload& w)
    : w_(w),
      rng_(w.seed),
      hot_count_(w.hot_count()),
      world_{0.0, w.width, 0.0, w.height},
      hot_{},
      x_(w.entities),
      y_(w.entities),
      heading_(w.entities) {
  const double hx0 = (w.width - w.hot_size) / 2;
  const double hy0 = (w.height - w.hot_size) / 2;
  hot_ = {hx0, hx0 + w.hot_size, hy0, hy0 + w.hot_size};
  // Placement: x, y, then heading, entity by entity.
  for (std::uint32_t i = 0; i < w.entities; ++i) {
    place(i);
    heading_[i] = rng_.u01() * 2 * std::numbers::pi;
  }
}

void Trajectories::place(std::uint32_t i) {
  // Two separate statements: the x draw must come before the y draw.
  if (i < hot_count_) {
    x_[i] = hot_.x_lo + rng_.u01() * w_.hot_size;
    y_[i] = hot_.y_lo + rng_.u01() * w_.hot_size;
  } else {
    x_[i] = rng_.u01() * w_.width;
    y_[i] = rng_.u01() * w_.height;
  }
}

void Trajectories::step() {
  constexpr double kPi = std::numbers::pi;
  const bool teleports = w_.teleport_p > 0.0;
  for (std::uint32_t i = 0; i < w_.entities; ++i) {
    if (teleports && rng_.u01() < w_.teleport_p) {
      // "x, y placed again exactly as in Placement": two draws, the heading is kept.
      place(i);
      continue;
    }
    double& heading = heading_[i];
    double& x = x_[i];
    double& y = y_[i];
    heading += (rng_.u01() - 0.5) * w_.turn;
    x += std::cos(heading) * w_.speed * w_.dt;
    y += std::sin(heading) * w_.speed * w_.dt;
    const Box& b = box(i);
    if (x < b.x_lo) {
      x = 2 * b.x_lo - x;
      heading = kPi - heading;
    } else if (x > b.x_hi) {
      x = 2 * b.x_hi - x;
      heading = kPi - heading;
    }
    if (y < b.y_lo) {
      y = 2 * b.y_lo - y;
      heading = -heading;
    } else if (y > b.y_hi) {
      y = 2 * b.y_hi - y;
      heading = -heading;
    }
  }
  ++tick_;
}

std::uint64_t Trajectories::checksum() const {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](double v) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    for (int k = 0; k < 8; ++k) {
      h ^= (bits >> (8 * k)) & 0xFFu;
      h *= 0x100000001b3ull;
    }
  };
  for (std::size_t i = 0; i < x_.size(); ++i) {
    mix(x_[i]);
    mix(y_[i]);
  }
  return h;
}

}  // namespace zone::bench
