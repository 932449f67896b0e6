// cell-pair-probe: what the pair evaluation of a cell-pair AOI scheme would cost, timed
// against GridAoi's whole update on the same ticks of a standard workload.
//
//   cell-pair-probe [--workload NAME] [--cell-size C] [--ticks N]
//
// The scheme probed (docs/benchmarks.md, "A cell-pair probe"): entities sorted into cells
// of side C; for every pair of occupied cells that can hold a pair within r + h (each
// unordered pair of cells once, a cell with itself too), every pair of their members is
// tested every tick, eight at a time in float arithmetic, and the pair's visibility is a bit
// in a word kept per (cell pair, member): found by position, with no search and no schedule.
// A pair is an event candidate when its bit must change (in view and beyond r + h, or out of
// view and within r, with a margin that covers the float rounding).
//
// What the probe leaves out, so its figure is a lower bound of such a scheme's cost: it
// re-sorts every entity into its cell each tick and lays the state words out afresh, so the
// words do not follow the entities (a real scheme moves an entity's bits when it changes
// cells: the probe counts those entities); the candidates are counted, not checked in double
// precision nor delivered as events. One radius per workload only (no mixed workloads).
//
// Prints one JSON line: GridAoi's median update, the probe's median sort and evaluation, the
// lane tests and candidates per tick, and the entities that changed cells per tick.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "aoi/grid_aoi.hpp"
#include "workloads.hpp"

namespace {

using zone::aoi::GridAoi;
using zone::bench::Trajectories;
using zone::bench::Workload;
using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kMaxPopulation = 64;  // one state word per (cell pair, member)
constexpr std::uint32_t kNone = 0xFFFFFFFFu;

class CellPairProbe {
 public:
  CellPairProbe(const Workload& w, double cell_size)
      : cell_(cell_size),
        cols_(static_cast<std::uint32_t>(std::ceil(w.width / cell_size)) + 1),
        rows_(static_cast<std::uint32_t>(std::ceil(w.height / cell_size)) + 1),
        r2_(static_cast<float>(w.radius * w.radius)),
        outer2_(static_cast<float>((w.radius + w.hysteresis) * (w.radius + w.hysteresis))),
        index_(static_cast<std::size_t>(cols_) * rows_, kNone),
        cell_of_(w.entities, kNone) {
    // Offsets of the cells that can hold a pair within r + h, one of each +-pair.
    const double reach = w.radius + w.hysteresis;
    const auto k = static_cast<int>(std::ceil(reach / cell_size)) + 1;
    for (int dy = 0; dy <= k; ++dy) {
      for (int dx = -k; dx <= k; ++dx) {
        if (dy == 0 && dx < 0) continue;
        const double gx = std::max(0, std::abs(dx) - 1) * cell_size;
        const double gy = std::max(0, std::abs(dy) - 1) * cell_size;
        if (gx * gx + gy * gy <= reach * reach) offsets_.push_back({dx, dy});
      }
    }
  }

  std::size_t offsets() const { return offsets_.size(); }

  // Sorts the entities into their cells (counting sort over the occupied cells) and lays out
  // each cell's coordinates relative to its corner, padded to eight lanes. Returns how many
  // entities changed cells; throws when a cell holds more than kMaxPopulation.
  std::uint32_t sort(std::span<const double> xs, std::span<const double> ys) {
    const auto n = static_cast<std::uint32_t>(xs.size());
    for (const std::uint32_t c : occupied_) index_[c] = kNone;
    occupied_.clear();
    key_.resize(n);
    std::uint32_t changed = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto col = static_cast<std::uint32_t>(xs[i] / cell_);
      const auto row = static_cast<std::uint32_t>(ys[i] / cell_);
      const std::uint32_t c = row * cols_ + col;
      changed += cell_of_[i] != c;
      cell_of_[i] = key_[i] = c;
      if (index_[c] == kNone) {
        index_[c] = static_cast<std::uint32_t>(occupied_.size());
        occupied_.push_back(c);
      }
    }
    std::sort(occupied_.begin(), occupied_.end());
    begin_.assign(occupied_.size() + 1, 0);
    for (std::uint32_t k = 0; k < occupied_.size(); ++k) index_[occupied_[k]] = k;
    for (std::uint32_t i = 0; i < n; ++i) ++begin_[index_[key_[i]] + 1];
    // Each cell padded to a multiple of eight lanes, far away so that padding tests nothing.
    for (std::size_t k = 0; k < occupied_.size(); ++k) {
      if (begin_[k + 1] > kMaxPopulation) throw std::runtime_error("a cell holds more than 64");
      begin_[k + 1] = begin_[k] + ((begin_[k + 1] + 7) & ~7u);
    }
    count_.assign(occupied_.size(), 0);
    x_.assign(begin_.back(), 1e9f);
    y_.assign(begin_.back(), 1e9f);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t k = index_[key_[i]];
      const std::uint32_t at = begin_[k] + count_[k]++;
      const std::uint32_t c = key_[i];
      x_[at] = static_cast<float>(xs[i] - (c % cols_) * cell_);
      y_[at] = static_cast<float>(ys[i] - (c / cols_) * cell_);
    }
    return changed;
  }

  struct Counts {
    std::uint64_t lane_tests = 0;
    std::uint64_t candidates = 0;
  };

  // Tests every pair of members of every pair of cells within reach, updates the state
  // words and counts the candidates.
  __attribute__((target("avx2,fma"))) Counts evaluate() {
    Counts counts;
    std::size_t word = 0;
    // The float margin: coordinates within a cell are exact to ~1e-6 m, so d^2 to ~1e-4.
    const __m256 enter2 = _mm256_set1_ps(r2_ + 1e-2f);
    const __m256 stay2 = _mm256_set1_ps(outer2_ - 1e-2f);
    std::uint64_t enters[kMaxPopulation];
    std::uint64_t stays[kMaxPopulation];
    for (std::uint32_t ka = 0; ka < occupied_.size(); ++ka) {
      const std::uint32_t a = occupied_[ka];
      const auto acol = static_cast<int>(a % cols_);
      const auto arow = static_cast<int>(a / cols_);
      const std::uint32_t na = count_[ka];
      const std::uint32_t chunks = (na + 7) / 8;
      const float* ax = x_.data() + begin_[ka];
      const float* ay = y_.data() + begin_[ka];
      for (std::size_t o = 0; o < offsets_.size(); ++o) {
        const int bcol = acol + offsets_[o].dx;
        const int brow = arow + offsets_[o].dy;
        if (bcol < 0 || bcol >= static_cast<int>(cols_) || brow >= static_cast<int>(rows_)) {
          continue;
        }
        const std::uint32_t kb = index_[static_cast<std::uint32_t>(brow) * cols_ + bcol];
        if (kb == kNone) continue;
        const std::uint32_t nb = count_[kb];
        const float* bx = x_.data() + begin_[kb];
        const float* by = y_.data() + begin_[kb];
        const auto sx = static_cast<float>(offsets_[o].dx * cell_);
        const auto sy = static_cast<float>(offsets_[o].dy * cell_);
        for (std::uint32_t v = 0; v < chunks; ++v) {
          // A's members in B's frame.
          const __m256 px = _mm256_sub_ps(_mm256_loadu_ps(ax + 8 * v), _mm256_set1_ps(sx));
          const __m256 py = _mm256_sub_ps(_mm256_loadu_ps(ay + 8 * v), _mm256_set1_ps(sy));
          for (std::uint32_t j = 0; j < nb; ++j) {
            const __m256 dx = _mm256_sub_ps(px, _mm256_broadcast_ss(bx + j));
            const __m256 dy = _mm256_sub_ps(py, _mm256_broadcast_ss(by + j));
            const __m256 d2 = _mm256_fmadd_ps(dy, dy, _mm256_mul_ps(dx, dx));
            const auto e = static_cast<std::uint64_t>(
                _mm256_movemask_ps(_mm256_cmp_ps(d2, enter2, _CMP_LE_OQ)));
            const auto s = static_cast<std::uint64_t>(
                _mm256_movemask_ps(_mm256_cmp_ps(d2, stay2, _CMP_LE_OQ)));
            enters[j] = (v ? enters[j] : 0) | e << (8 * v);
            stays[j] = (v ? stays[j] : 0) | s << (8 * v);
          }
        }
        counts.lane_tests += std::uint64_t{chunks} * 8 * nb;
        if (state_.size() < word + nb) state_.resize(2 * (word + nb));
        std::uint64_t* bits = state_.data() + word;
        word += nb;
        const std::uint64_t members = na == 64 ? ~0ull : (1ull << na) - 1;
        for (std::uint32_t j = 0; j < nb; ++j) {
          // Within one cell, each pair once: B's member j with A's members below it.
          const std::uint64_t valid = o == 0 ? members & ((1ull << j) - 1) : members;
          const std::uint64_t old = bits[j];
          const std::uint64_t change = ((enters[j] & ~old) | (old & ~stays[j])) & valid;
          bits[j] = old ^ change;
          counts.candidates += static_cast<std::uint64_t>(__builtin_popcountll(change));
        }
      }
    }
    return counts;
  }

 private:
  struct Offset {
    int dx;
    int dy;
  };
  double cell_;
  std::uint32_t cols_;
  std::uint32_t rows_;
  float r2_;
  float outer2_;
  std::vector<Offset> offsets_;
  std::vector<std::uint32_t> index_;     // grid cell -> its rank among the occupied, or kNone
  std::vector<std::uint32_t> occupied_;  // occupied grid cells, ascending
  std::vector<std::uint32_t> begin_;     // per occupied cell: its first lane, plus a sentinel
  std::vector<std::uint32_t> count_;     // per occupied cell: its members
  std::vector<std::uint32_t> key_;       // per entity: its cell this tick
  std::vector<std::uint32_t> cell_of_;   // per entity: its cell, to count the changes
  std::vector<float> x_;                 // per lane: x relative to the cell's corner
  std::vector<float> y_;
  std::vector<std::uint64_t> state_;  // one word per (cell pair, member of the second cell)
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Cost of a cell-pair evaluation against GridAoi's update, on one workload"};
  std::string name = "hotspot-20k";
  double cell_size = 12.0;
  std::optional<std::uint32_t> ticks;
  app.add_option("--workload", name, "Workload name (one view radius)");
  app.add_option("--cell-size", cell_size, "The probe's cell size (m)")->check(CLI::PositiveNumber);
  app.add_option("--ticks", ticks, "Override the workload's tick count T");
  CLI11_PARSE(app, argc, argv);
  const Workload* w = zone::bench::find_workload(name);
  if (w == nullptr || w->mixed()) {
    std::cerr << "cell-pair-probe: --workload must name a workload with one view radius\n";
    return 2;
  }
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    std::cerr << "cell-pair-probe: needs a CPU with AVX2 and FMA\n";
    return 2;
  }

  Trajectories traj(*w);
  zone::aoi::GridConfig config{{{0.0, 0.0}, {w->width, w->height}}, w->cell_size, w->hysteresis};
  config.max_step = w->speed * w->dt;
  GridAoi grid(config);
  std::vector<GridAoi::Move> moves;
  for (std::uint32_t i = 0; i < w->entities; ++i) {
    moves.push_back({grid.add({traj.x()[i], traj.y()[i]}, w->radius, true), {}});
  }
  grid.update();
  CellPairProbe probe(*w, cell_size);
  probe.sort(traj.x(), traj.y());
  probe.evaluate();  // tick 0 fills the state words

  std::vector<double> grid_ms, sort_ms, evaluate_ms;
  std::uint64_t events = 0, lane_tests = 0, candidates = 0, changed = 0;
  const std::uint32_t t_end = ticks.value_or(w->ticks);
  for (std::uint32_t t = 1; t <= t_end; ++t) {
    traj.step();
    for (std::uint32_t i = 0; i < w->entities; ++i) {
      moves[i].position = {traj.x()[i], traj.y()[i]};
    }
    const auto t0 = Clock::now();
    grid.move_batch(moves);
    events += grid.update().size();
    const auto t1 = Clock::now();
    changed += probe.sort(traj.x(), traj.y());
    const auto t2 = Clock::now();
    const CellPairProbe::Counts c = probe.evaluate();
    const auto t3 = Clock::now();
    lane_tests += c.lane_tests;
    candidates += c.candidates;
    auto ms = [](Clock::duration d) {
      return std::chrono::duration<double, std::milli>(d).count();
    };
    grid_ms.push_back(ms(t1 - t0));
    sort_ms.push_back(ms(t2 - t1));
    evaluate_ms.push_back(ms(t3 - t2));
  }
  const double per_tick = t_end > 0 ? 1.0 / t_end : 0.0;
  nlohmann::ordered_json j;
  j["workload"] = w->name;
  j["ticks"] = t_end;
  j["probe_cell_size"] = cell_size;
  j["probe_cell_offsets"] = probe.offsets();
  j["grid_update_ms_median"] = median(grid_ms);
  j["probe_sort_ms_median"] = median(sort_ms);
  j["probe_evaluate_ms_median"] = median(evaluate_ms);
  j["evaluate_over_grid"] = median(evaluate_ms) / median(grid_ms);
  j["grid_events_per_tick"] = static_cast<double>(events) * per_tick;
  j["lane_tests_per_tick"] = static_cast<double>(lane_tests) * per_tick;
  j["candidates_per_tick"] = static_cast<double>(candidates) * per_tick;
  j["entities_changing_cells_per_tick"] = static_cast<double>(changed) * per_tick;
  std::cout << j.dump() << '\n';
}
