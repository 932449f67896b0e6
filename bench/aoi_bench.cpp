// aoi-bench: the grid AOI core on the standard workloads (/work/shared/bench/aoi-workloads.md).
//
//   aoi-bench [--workload NAME|all] [--ticks N] [--cell-size X] [--repeat K]
//             [--baseline brute|naive-grid] [--threads N] [--engine grid|crowd-tier]
//             [--verify] [--list]
//
// Prints one JSON object per line: per workload and implementation ("impl": "grid",
// "brute" or "naive-grid") the event counts and the per-tick latency distribution; with
// --baseline also a {"speedup_vs_<baseline>": ...} line per workload. The AOI and the
// baseline run in turn, repeat by repeat (grid, baseline, grid, baseline, ...), so that a
// drift in the machine's speed hits both. --verify runs grid and brute in lockstep and
// compares every tick's events exactly; it exits 1 on any mismatch.
//
// Timed per tick: GridAoi::move_batch() with the tick's positions, update(), and a consumer
// that counts every event. Not timed: trajectory generation and filling the move buffer.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "aoi/crowd_tier.hpp"
#include "aoi/grid_aoi.hpp"
#include "aoi/simd.hpp"
#include "brute_aoi.hpp"
#include "naive_grid.hpp"
#include "util/worker_pool.hpp"
#include "workloads.hpp"

namespace {

using zone::aoi::EntityHandle;
using zone::aoi::EventKind;
using zone::aoi::GridAoi;
using zone::aoi::GridConfig;
using zone::bench::BruteAoi;
using zone::bench::NaiveGridAoi;
using zone::bench::Trajectories;
using zone::bench::Workload;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

// --- Peak RSS -----------------------------------------------------------------------------

// Resets the kernel's high-water mark so that each run reports its own peak (Linux >= 4.0).
// Heap pages the previous run freed but malloc kept are handed back first, or they would
// count towards this run's peak.
void reset_peak_rss() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  std::ofstream f("/proc/self/clear_refs");
  if (f) f << "5";
}

std::uint64_t peak_rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream in(line.substr(6));
      std::uint64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;
}

// --- Event consumers ----------------------------------------------------------------------

struct CountingSink {
  std::uint64_t counts[2] = {0, 0};  // [0] enters, [1] leaves
  void operator()(std::uint32_t, std::uint32_t, bool leave) { ++counts[leave ? 1 : 0]; }
};

// Packs (observer, target, kind) into one sortable word, for exact comparisons.
struct RecordingSink {
  std::vector<std::uint64_t>* out;
  void operator()(std::uint32_t a, std::uint32_t b, bool leave) {
    out->push_back((std::uint64_t{a} << 33) | (std::uint64_t{b} << 1) | (leave ? 1u : 0u));
  }
};

// --- The two implementations behind one interface -----------------------------------------

// Whether the grid is told the workload's displacement bound (speed * dt: the most any
// entity walks in one tick; reflection at the bounds only shortens a step, and teleports,
// which exceed it, are detected by the AOI). Set once by main() from --unbounded.
bool g_bounded = true;
std::uint32_t g_threads = 1;  // --threads: workers of the grid's update (1: the calling thread)
std::uint32_t g_crowd = 100;  // --crowd: GridConfig::crowd_min_in_view (the zone's default)

GridConfig grid_config(const Workload& w, double cell_size) {
  GridConfig c{{{0.0, 0.0}, {w.width, w.height}}, cell_size, w.hysteresis};
  if (g_bounded) c.max_step = w.speed * w.dt;
  c.crowd_min_in_view = g_crowd;
  return c;
}

class GridEngine {
 public:
  static constexpr const char* kName = "grid";

  GridEngine(const Workload& w, double cell_size, const Trajectories& t)
      : pool_(g_threads), aoi_(grid_config(w, cell_size)) {
    aoi_.set_parallel(
        [this](std::uint32_t pieces, const GridAoi::PieceFn& fn) { pool_.run(pieces, fn); },
        pool_.size());
    moves_.reserve(w.entities);
    for (std::uint32_t i = 0; i < w.entities; ++i) {
      const EntityHandle h = aoi_.add({t.x()[i], t.y()[i]}, w.view_radius(i), true);
      if (h.index != i) throw std::runtime_error("unexpected slot assignment");
      moves_.push_back({h, {t.x()[i], t.y()[i]}});
    }
  }

  // Untimed: fills the move buffer with the tick's positions.
  void stage(const Trajectories& t) {
    const auto xs = t.x();
    const auto ys = t.y();
    for (std::size_t i = 0; i < moves_.size(); ++i) moves_[i].position = {xs[i], ys[i]};
  }
  // Timed: applies the moves, runs the tick, hands every event to the sink.
  template <typename Sink>
  void tick(Sink& sink, bool apply_moves) {
    if (apply_moves) aoi_.move_batch(moves_);
    for (const auto& e : aoi_.update()) {
      sink(e.observer.index, e.target.index, e.kind == EventKind::kLeave);
    }
  }
  std::uint64_t visible_pairs() const { return aoi_.stats().visible_pairs; }
  std::vector<std::uint32_t> sorted_view(std::uint32_t a) const {
    std::vector<zone::aoi::EntityHandle> v;
    aoi_.view_set(aoi_.handle_at(a), v);
    std::vector<std::uint32_t> out;
    for (const auto h : v) out.push_back(h.index);
    std::sort(out.begin(), out.end());
    return out;
  }
  void describe(Json& j) const {
    const auto s = aoi_.stats();
    j["grid_cells"] = s.cells;
    j["occupied_cells"] = s.occupied_cells;
    j["max_cell_population"] = s.max_cell_population;
    j["kernels"] = zone::aoi::simd::kernel_name();
    j["threads"] = pool_.size();
  }

 private:
  zone::util::WorkerPool pool_;
  GridAoi aoi_;
  std::vector<GridAoi::Move> moves_;
};

// CrowdTier alone (--engine crowd-tier): every entity a member, for the workloads with one
// view radius. Each of its pair events is both directions' event.
class CrowdEngine {
 public:
  static constexpr const char* kName = "crowd-tier";

  CrowdEngine(const Workload& w, double cell_size, const Trajectories& t)
      : tier_(cell_size, w.radius, w.hysteresis),
        x_(t.x().begin(), t.x().end()),
        y_(t.y().begin(), t.y().end()) {
    for (std::uint32_t i = 0; i < w.entities; ++i) tier_.insert(i, {x_[i], y_[i]});
  }

  void stage(const Trajectories& t) {
    std::copy(t.x().begin(), t.x().end(), x_.begin());
    std::copy(t.y().begin(), t.y().end(), y_.begin());
  }
  template <typename Sink>
  void tick(Sink& sink, bool apply_moves) {
    if (apply_moves) {
      for (std::uint32_t i = 0; i < x_.size(); ++i) tier_.move(i, {x_[i], y_[i]});
    }
    for (const auto& e : tier_.update()) {
      const bool leave = e.kind == EventKind::kLeave;
      sink(e.a, e.b, leave);
      sink(e.b, e.a, leave);
    }
  }
  std::uint64_t visible_pairs() const { return 2 * tier_.visible_pairs(); }
  std::vector<std::uint32_t> sorted_view(std::uint32_t a) const {
    std::vector<std::uint32_t> out;
    tier_.partners(a, out);
    std::sort(out.begin(), out.end());
    return out;
  }
  void describe(Json& j) const {
    j["crowd_cells"] = tier_.cells();
    j["crowd_cell_offsets"] = tier_.offsets();
    j["kernels"] = zone::aoi::simd::kernel_name();
  }

 private:
  zone::aoi::CrowdTier tier_;
  std::vector<double> x_;
  std::vector<double> y_;
};

// The two references share one shape: set_positions(x, y), update(sink), view(a).
template <typename Impl>
class ReferenceEngine {
 public:
  static constexpr const char* kName = Impl::kName;

  ReferenceEngine(const Workload& w, double, const Trajectories& t)
      : aoi_(radii(w), w.hysteresis),
        x_(t.x().begin(), t.x().end()),
        y_(t.y().begin(), t.y().end()) {}

  void stage(const Trajectories& t) {
    std::copy(t.x().begin(), t.x().end(), x_.begin());
    std::copy(t.y().begin(), t.y().end(), y_.begin());
  }
  template <typename Sink>
  void tick(Sink& sink, bool) {
    aoi_.set_positions(x_, y_);
    aoi_.update(sink);
  }
  std::uint64_t visible_pairs() const { return aoi_.visible_pairs(); }
  std::vector<std::uint32_t> sorted_view(std::uint32_t a) const {
    const auto v = aoi_.view(a);
    return {v.begin(), v.end()};
  }
  void describe(Json&) const {}

 private:
  static std::vector<double> radii(const Workload& w) {
    std::vector<double> r(w.entities);
    for (std::uint32_t i = 0; i < w.entities; ++i) r[i] = w.view_radius(i);
    return r;
  }
  Impl aoi_;
  std::vector<double> x_;
  std::vector<double> y_;
};

struct NamedBrute : BruteAoi {
  static constexpr const char* kName = "brute";
  using BruteAoi::BruteAoi;
};
struct NamedNaiveGrid : NaiveGridAoi {
  static constexpr const char* kName = "naive-grid";
  using NaiveGridAoi::NaiveGridAoi;
};
using BruteEngine = ReferenceEngine<NamedBrute>;
using NaiveGridEngine = ReferenceEngine<NamedNaiveGrid>;

// --- Timed runs -----------------------------------------------------------------------------

struct RunResult {
  std::string impl;
  std::uint64_t initial_pairs = 0;
  std::uint64_t enters = 0;
  std::uint64_t leaves = 0;
  std::uint64_t final_pairs = 0;
  std::vector<std::int64_t> tick_ns;  // every timed tick of every repeat
  std::int64_t initial_ns = 0;        // tick-0 update (first repeat)
  std::uint64_t peak_rss = 0;
  std::uint64_t checksum = 0;  // trajectory checksum after the last tick
  Json extra = Json::object();
};

std::int64_t elapsed_ns(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

// One fresh run (placement, tick 0, ticks 1..T) of one engine, added to res. The peak RSS
// is this run's own (reset first), and res keeps the largest over its runs.
template <typename Engine>
void run_once(const Workload& w, std::uint32_t ticks, double cell_size, RunResult& res) {
  const bool first = res.impl.empty();
  res.impl = Engine::kName;
  reset_peak_rss();
  Trajectories traj(w);
  Engine engine(w, cell_size, traj);
  CountingSink initial;
  const auto i0 = Clock::now();
  engine.tick(initial, false);
  const auto i1 = Clock::now();
  if (initial.counts[1] != 0) throw std::runtime_error("leave events at tick 0");

  CountingSink sink;
  for (std::uint32_t t = 1; t <= ticks; ++t) {
    traj.step();
    engine.stage(traj);
    const auto t0 = Clock::now();
    engine.tick(sink, true);
    const auto t1 = Clock::now();
    res.tick_ns.push_back(elapsed_ns(t0, t1));
  }
  const std::uint64_t final_pairs = engine.visible_pairs();
  if (first) {
    res.initial_pairs = initial.counts[0];
    res.enters = sink.counts[0];
    res.leaves = sink.counts[1];
    res.final_pairs = final_pairs;
    res.initial_ns = elapsed_ns(i0, i1);
    res.checksum = traj.checksum();
    engine.describe(res.extra);
  } else if (res.initial_pairs != initial.counts[0] || res.enters != sink.counts[0] ||
             res.leaves != sink.counts[1] || res.final_pairs != final_pairs) {
    throw std::runtime_error("repeats of one workload disagree: nondeterminism");
  }
  // Event accounting: every pair that is in view at the end entered exactly once more
  // often than it left.
  if (initial.counts[0] + sink.counts[0] - sink.counts[1] != final_pairs) {
    throw std::runtime_error(std::string(Engine::kName) +
                             ": initial_pairs + enters - leaves != final_pairs");
  }
  res.peak_rss = std::max(res.peak_rss, peak_rss_bytes());
}

struct Summary {
  double median = 0;
  double p99 = 0;
  double mean = 0;
  double min = 0;
  double max = 0;
};

Summary summarize(std::vector<std::int64_t> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = n % 2 ? static_cast<double>(v[n / 2])
                   : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2;
  // Nearest-rank 99th percentile.
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)));
  s.p99 = static_cast<double>(v[std::max<std::size_t>(rank, 1) - 1]);
  double sum = 0;
  for (const auto x : v) sum += static_cast<double>(x);
  s.mean = sum / static_cast<double>(n);
  s.min = static_cast<double>(v.front());
  s.max = static_cast<double>(v.back());
  return s;
}

std::string hex(std::uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

Json to_json(const Workload& w, std::uint32_t ticks, double cell_size, std::uint32_t repeat,
             const RunResult& r) {
  const Summary s = summarize(r.tick_ns);
  Json j;
  j["workload"] = w.name;
  j["impl"] = r.impl;
  j["entities"] = w.entities;
  j["ticks"] = ticks;
  j["repeat"] = repeat;
  j["cell_size"] = cell_size;
  if (r.impl == "grid") {
    j["max_step"] = g_bounded ? w.speed * w.dt : -1.0;
    j["crowd_min_in_view"] = g_crowd;
  }
  j["initial_pairs"] = r.initial_pairs;
  j["enters"] = r.enters;
  j["leaves"] = r.leaves;
  j["final_pairs"] = r.final_pairs;
  j["ns_per_tick_median"] = std::llround(s.median);
  j["ns_per_tick_p99"] = std::llround(s.p99);
  j["ns_per_tick_mean"] = std::llround(s.mean);
  j["ns_per_tick_min"] = std::llround(s.min);
  j["ns_per_tick_max"] = std::llround(s.max);
  j["initial_update_ns"] = r.initial_ns;
  j["peak_rss_bytes"] = r.peak_rss;
  j["trajectory_fnv1a"] = hex(r.checksum);
  for (const auto& [k, v] : r.extra.items()) j[k] = v;
  return j;
}

void emit(const Json& j) {
  std::cout << j.dump() << std::endl;
}

// --- Lockstep verification ------------------------------------------------------------------

// Runs the engine (the grid, or the crowd tier) and brute side by side on one trajectory and
// compares every tick's event set and, at the end, every view set. Returns true when they
// agree.
template <typename Engine>
bool verify(const Workload& w, std::uint32_t ticks, double cell_size) {
  Trajectories traj(w);
  Engine grid(w, cell_size, traj);
  BruteEngine brute(w, cell_size, traj);
  std::vector<std::uint64_t> ge;
  std::vector<std::uint64_t> be;
  std::uint64_t initial_pairs = 0;
  std::uint64_t enters = 0;
  std::uint64_t leaves = 0;
  Json j;
  j["workload"] = w.name;
  j["verify"] = "ok";
  j["impl"] = Engine::kName;
  j["entities"] = w.entities;
  j["ticks"] = ticks;
  j["cell_size"] = cell_size;
  auto fail = [&](std::uint32_t tick, const std::string& what) {
    j["verify"] = "mismatch";
    j["mismatch_tick"] = tick;
    j["detail"] = what;
    emit(j);
    return false;
  };
  auto describe = [](std::uint64_t e) {
    std::ostringstream o;
    o << ((e & 1) ? "leave" : "enter") << " observer " << (e >> 33) << " target "
      << ((e >> 1) & 0xFFFFFFFFu);
    return o.str();
  };
  for (std::uint32_t t = 0; t <= ticks; ++t) {
    if (t > 0) {
      traj.step();
      grid.stage(traj);
      brute.stage(traj);
    }
    ge.clear();
    be.clear();
    RecordingSink gs{&ge};
    RecordingSink bs{&be};
    grid.tick(gs, t > 0);
    brute.tick(bs, t > 0);
    std::sort(ge.begin(), ge.end());
    std::sort(be.begin(), be.end());
    if (ge != be) {
      const auto [gi, bi] = std::mismatch(ge.begin(), ge.end(), be.begin(), be.end());
      std::string what = "grid " + std::to_string(ge.size()) + " events, brute " +
                         std::to_string(be.size()) + "; first difference: ";
      if (gi != ge.end() && (bi == be.end() || *gi < *bi)) {
        what += "grid only: " + describe(*gi);
      } else {
        what += "brute only: " + describe(*bi);
      }
      return fail(t, what);
    }
    const auto nl = static_cast<std::uint64_t>(
        std::count_if(ge.begin(), ge.end(), [](std::uint64_t e) { return (e & 1) != 0; }));
    if (t == 0) {
      initial_pairs = ge.size() - nl;
    } else {
      enters += ge.size() - nl;
      leaves += nl;
    }
  }
  for (std::uint32_t a = 0; a < w.entities; ++a) {
    if (grid.sorted_view(a) != brute.sorted_view(a)) {
      return fail(ticks, "view set of observer " + std::to_string(a) + " differs");
    }
  }
  if (grid.visible_pairs() != brute.visible_pairs()) {
    return fail(ticks, "visible pair totals differ");
  }
  j["initial_pairs"] = initial_pairs;
  j["enters"] = enters;
  j["leaves"] = leaves;
  j["final_pairs"] = grid.visible_pairs();
  j["trajectory_fnv1a"] = hex(traj.checksum());
  emit(j);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Grid AOI benchmark on the standard AOI workloads"};
  std::vector<std::string> names;
  for (const Workload& w : zone::bench::workloads()) names.emplace_back(w.name);
  for (const Workload& w : zone::bench::extra_workloads()) names.emplace_back(w.name);
  std::vector<std::string> choices = names;
  choices.emplace_back("all");

  std::string workload = "all";
  std::optional<std::uint32_t> ticks;
  std::optional<double> cell_size;
  std::uint32_t repeat = 1;
  std::string baseline;
  bool verify_mode = false;
  bool list = false;
  std::string engine = "grid";
  app.add_option(
         "--workload", workload,
         "Workload name, or all (the five standard ones; crowd-10k is hotspot-20k's crowd alone)")
      ->check(CLI::IsMember(choices))
      ->capture_default_str();
  app.add_option("--ticks", ticks, "Override the workload's tick count T")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--cell-size", cell_size, "Override the per-workload grid cell size (m)")
      ->check(CLI::PositiveNumber);
  app.add_option("--repeat", repeat, "Run each workload K times; tick timings are pooled")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  app.add_option("--baseline", baseline,
                 "Also run a reference on the same ticks, in turn with the grid, and print the "
                 "speedup: brute (all pairs, O(N^2)) or naive-grid (a plain double-precision "
                 "grid that rebuilds and sorts each tick)")
      ->check(CLI::IsMember({"brute", "naive-grid"}));
  app.add_option("--engine", engine,
                 "The AOI timed (and verified): grid (GridAoi) or crowd-tier (CrowdTier alone, "
                 "workloads with one view radius)")
      ->check(CLI::IsMember({"grid", "crowd-tier"}))
      ->capture_default_str();
  app.add_flag("--verify", verify_mode,
               "Compare grid and brute event by event (default 5 ticks); exit 1 on mismatch");
  bool unbounded = false;
  app.add_flag("--unbounded", unbounded,
               "Do not tell the grid the workload's displacement bound (speed * dt): every "
               "candidate list is then rebuilt every tick");
  bool cell_scaling = false;
  app.add_flag("--cell-scaling", cell_scaling,
               "Time 100 entities in a 2000 m world with cells from 64 m down to 0.5 m (16 Mi "
               "cells): the update time must not depend on the number of cells");
  app.add_option("--threads", g_threads,
                 "Threads of the grid's update (the calling thread included); the events are "
                 "the same for any number")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  app.add_option("--crowd", g_crowd,
                 "The grid's crowd threshold (GridConfig::crowd_min_in_view: entities expected "
                 "in view from which an observer's classmate pairs go to a crowd tier; 0: none; "
                 "100 is the zone's default, aoi.crowd_min_in_view)")
      ->capture_default_str();
  app.add_flag("--list", list, "Print the workload table as JSON lines and exit");
  CLI11_PARSE(app, argc, argv);
  g_bounded = !unbounded;

  if (cell_scaling) {
    // The standard generator on a small, sparse population: same speeds and radius as
    // uniform-10k, 100 entities in the same 2000 m world.
    constexpr Workload kSparse{"sparse-100", 100,  2000.0, 2000.0, 30.0, 0.0, 2.0, 5.0,
                               0.5,          0.05, 0.0,    0.0,    0.0,  200, 7,   64.0};
    try {
      for (const double cs : {64.0, 8.0, 2.0, 1.0, 0.5}) {
        RunResult r;
        for (std::uint32_t rep = 0; rep < repeat; ++rep) {
          run_once<GridEngine>(kSparse, ticks.value_or(kSparse.ticks), cs, r);
        }
        emit(to_json(kSparse, ticks.value_or(kSparse.ticks), cs, repeat, r));
      }
    } catch (const std::exception& e) {
      std::cerr << "aoi-bench: " << e.what() << "\n";
      return 1;
    }
    return 0;
  }

  if (list) {
    for (const Workload& w : zone::bench::workloads()) {
      Json j;
      j["workload"] = w.name;
      j["entities"] = w.entities;
      j["width"] = w.width;
      j["height"] = w.height;
      j["radius"] = w.radius;
      if (w.mixed()) j["radius2"] = w.radius2;
      j["hysteresis"] = w.hysteresis;
      j["speed"] = w.speed;
      j["turn"] = w.turn;
      j["dt"] = w.dt;
      j["teleport_p"] = w.teleport_p;
      j["hot_frac"] = w.hot_frac;
      if (w.hot_frac > 0) j["hot_size"] = w.hot_size;
      j["ticks"] = w.ticks;
      j["seed"] = w.seed;
      j["cell_size"] = w.cell_size;
      emit(j);
    }
    return 0;
  }

  std::vector<const Workload*> selected;
  for (const Workload& w : zone::bench::workloads()) {
    if (workload == "all" || w.name == workload) selected.push_back(&w);
  }
  if (workload != "all") {
    for (const Workload& w : zone::bench::extra_workloads()) {
      if (w.name == workload) selected.push_back(&w);
    }
  }

  bool ok = true;
  try {
    for (const Workload* w : selected) {
      const double cs = cell_size.value_or(w->cell_size);
      GridConfig probe{{{0.0, 0.0}, {w->width, w->height}}, cs, w->hysteresis};
      if (const auto e = GridAoi::validate(probe); e != zone::aoi::GridConfigError::kNone) {
        std::cerr << "aoi-bench: " << w->name << ": " << zone::aoi::to_string(e) << "\n";
        return 2;
      }
      const bool crowd = engine == "crowd-tier";
      if (crowd && w->mixed()) {
        std::cerr << "aoi-bench: --engine crowd-tier needs one view radius; " << w->name
                  << " has two\n";
        return 2;
      }
      if (verify_mode) {
        ok = (crowd ? verify<CrowdEngine>(*w, ticks.value_or(5), cs)
                    : verify<GridEngine>(*w, ticks.value_or(5), cs)) &&
             ok;
        continue;
      }
      const std::uint32_t t = ticks.value_or(w->ticks);
      RunResult g;
      RunResult b;
      for (std::uint32_t rep = 0; rep < repeat; ++rep) {
        if (crowd) {
          run_once<CrowdEngine>(*w, t, cs, g);
        } else {
          run_once<GridEngine>(*w, t, cs, g);
        }
        if (baseline == "brute") run_once<BruteEngine>(*w, t, cs, b);
        if (baseline == "naive-grid") run_once<NaiveGridEngine>(*w, t, cs, b);
      }
      emit(to_json(*w, t, cs, repeat, g));
      if (!baseline.empty()) {
        emit(to_json(*w, t, cs, repeat, b));
        const bool match = g.initial_pairs == b.initial_pairs && g.enters == b.enters &&
                           g.leaves == b.leaves && g.final_pairs == b.final_pairs;
        const Summary gs = summarize(g.tick_ns);
        const Summary bs = summarize(b.tick_ns);
        const std::string tag = baseline == "brute" ? "brute" : "naive_grid";
        Json j;
        j["workload"] = w->name;
        j["ticks"] = t;
        j["repeat"] = repeat;
        j["cell_size"] = cs;
        j[crowd ? "crowd_tier_ns_per_tick_median" : "grid_ns_per_tick_median"] =
            std::llround(gs.median);
        j[tag + "_ns_per_tick_median"] = std::llround(bs.median);
        j["speedup_vs_" + tag] = gs.median > 0 ? bs.median / gs.median : 0.0;
        j["speedup_vs_" + tag + "_mean"] = gs.mean > 0 ? bs.mean / gs.mean : 0.0;
        // Fastest tick against fastest tick: the least disturbed by other load.
        j["speedup_vs_" + tag + "_min"] = gs.min > 0 ? bs.min / gs.min : 0.0;
        j["counts_match"] = match;
        emit(j);
        ok = match && ok;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "aoi-bench: " << e.what() << "\n";
    return 1;
  }
  return ok ? 0 : 1;
}
