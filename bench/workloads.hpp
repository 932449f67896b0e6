// The standard AOI benchmark workloads (/work/shared/bench/aoi-workloads.md) and their
// exact trajectory generator.
//
// Every implementation that follows that page produces bit-identical trajectories, so
// event counts can be compared between AOI implementations and against an oracle. The
// generator is therefore written literally after the page: SplitMix64, IEEE double,
// std::cos/std::sin, and the draws in exactly the documented order. workloads.cpp is
// compiled with -ffp-contract=off so that no multiply-add is fused behind our back.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "util/splitmix64.hpp"

namespace zone::bench {

// The page's generator (SplitMix64, u01() = (next() >> 11) * 2^-53) is the project's own.
using SplitMix64 = util::SplitMix64;

// One row of the workload table. Distances in metres, times in seconds.
struct Workload {
  std::string_view name;
  std::uint32_t entities;  // N
  double width;            // W
  double height;           // H
  double radius;           // view radius (of even ids in mixed workloads)
  double radius2;          // view radius of odd ids; 0 means "-" (not a mixed workload)
  double hysteresis;       // h
  double speed;
  double turn;  // heading change per tick is (u01() - 0.5) * turn
  double dt;
  double teleport_p;    // per entity and tick; the draw happens only when > 0
  double hot_frac;      // fraction of entities confined to the central hotspot square
  double hot_size;      // side of the hotspot square; meaningless when hot_frac == 0
  std::uint32_t ticks;  // T
  std::uint64_t seed;
  // Not part of the standard table: this implementation's default broad-phase cell size,
  // chosen per workload by measurement (see the table in workloads.cpp).
  double cell_size;

  bool mixed() const { return radius2 > 0.0; }
  double view_radius(std::uint32_t id) const { return mixed() && (id & 1u) ? radius2 : radius; }
  double max_radius() const { return mixed() && radius2 > radius ? radius2 : radius; }
  // floor(N * hot_frac): ids below it live in the hotspot square for ever.
  std::uint32_t hot_count() const;
};

// All five standard workloads, in the order of the page.
std::span<const Workload> workloads();
// Workloads of this project's own, built with the same generator (not part of `all`).
std::span<const Workload> extra_workloads();
// A standard or extra workload by name; nullptr when the name is unknown.
const Workload* find_workload(std::string_view name);

// The trajectories of one workload. The constructor performs the Placement (tick 0);
// every step() advances one tick. Entity id i is index i of x()/y().
class Trajectories {
 public:
  explicit Trajectories(const Workload& w);

  void step();
  std::uint32_t tick() const { return tick_; }
  std::span<const double> x() const { return x_; }
  std::span<const double> y() const { return y_; }
  // FNV-1a over the bit patterns of every (x, y), for comparing generators.
  std::uint64_t checksum() const;

 private:
  struct Box {
    double x_lo, x_hi, y_lo, y_hi;
  };
  const Box& box(std::uint32_t i) const { return i < hot_count_ ? hot_ : world_; }
  void place(std::uint32_t i);  // draws x then y inside the entity's bounds

  Workload w_;
  SplitMix64 rng_;
  std::uint32_t hot_count_;
  Box world_;
  Box hot_;
  std::vector<double> x_;
  std::vector<double> y_;
  std::vector<double> heading_;
  std::uint32_t tick_ = 0;
};

}  // namespace zone::bench
