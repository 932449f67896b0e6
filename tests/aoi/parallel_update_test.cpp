// GridAoi::set_parallel: the update's output does not depend on the number of workers.
//
// Three AOIs take the same seeded operations (walks within and beyond the displacement
// bound, teleports, spawns and despawns, radius changes, observers switched on and off,
// hysteresis and bound changes that rebuild every list): one on the calling thread alone,
// one whose runner runs the pieces in reverse order on three worker numbers (so any
// dependence on the order pieces run in, or on a worker's scratch, shows), one on two
// real threads, and one on the zone's own WorkerPool with four workers, more than CI's
// cores, so that workers often wake late for a run (all of which TSan checks in CI). Every tick's
// events must be equal byte for byte, and so must the stats and the views; the parallel AOIs'
// invariants must hold. The runners count the pieces they ran, so the test fails if the parallel
// paths were never taken.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "aoi/grid_aoi.hpp"
#include "util/worker_pool.hpp"

using zone::aoi::EntityHandle;
using zone::aoi::GridAoi;
using zone::aoi::GridConfig;
using zone::aoi::Vec2;
using zone::aoi::VisibilityEvent;

namespace {

struct Runners {
  std::uint32_t reverse_calls = 0;
  std::uint32_t reverse_pieces = 0;
  std::atomic<std::uint32_t> threaded_pieces{0};
  std::uint32_t pooled_pieces = 0;
};

// Pieces in reverse order, worker numbers 2, 1, 0, 2, ...
GridAoi::ParallelFor reverse_runner(Runners& counts) {
  return [&counts](std::uint32_t pieces, const GridAoi::PieceFn& fn) {
    for (std::uint32_t k = 0; k < pieces; ++k) {
      const std::uint32_t p = pieces - 1 - k;
      fn(p, 2 - k % 3);
    }
    counts.reverse_pieces += pieces;
    ++counts.reverse_calls;
  };
}

// Two threads taking pieces as they come.
GridAoi::ParallelFor threaded_runner(Runners& counts) {
  return [&counts](std::uint32_t pieces, const GridAoi::PieceFn& fn) {
    std::atomic<std::uint32_t> next{0};
    auto work = [&](std::uint32_t worker) {
      for (std::uint32_t p = next++; p < pieces; p = next++) fn(p, worker);
    };
    std::thread helper(work, 1u);
    work(0);
    helper.join();
    counts.threaded_pieces += pieces;
  };
}

bool same_events(std::span<const VisibilityEvent> a, std::span<const VisibilityEvent> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].observer != b[i].observer || a[i].target != b[i].target || a[i].kind != b[i].kind) {
      return false;
    }
  }
  return true;
}

// The zone's runner: a WorkerPool (shared/util/worker_pool.hpp).
GridAoi::ParallelFor pool_runner(Runners& counts, zone::util::WorkerPool& pool) {
  return [&counts, &pool](std::uint32_t pieces, const GridAoi::PieceFn& fn) {
    pool.run(pieces, fn);
    counts.pooled_pieces += pieces;
  };
}

// 1, 2, 3 and 4 workers on the same calls; crowd: GridConfig::crowd_min_in_view.
void same_for_any_workers(std::uint32_t crowd) {
  GridConfig config;
  config.crowd_min_in_view = crowd;
  config.bounds = {{0.0, 0.0}, {320.0, 320.0}};
  config.cell_size = 10.0;
  config.hysteresis = 2.0;
  config.max_step = 0.5;
  GridAoi serial(config);
  GridAoi reversed(config);
  GridAoi threaded(config);
  GridAoi pooled(config);
  Runners counts;
  zone::util::WorkerPool pool(4);
  reversed.set_parallel(reverse_runner(counts), 3);
  threaded.set_parallel(threaded_runner(counts), 2);
  pooled.set_parallel(pool_runner(counts, pool), pool.size());
  GridAoi* const all[] = {&serial, &reversed, &threaded, &pooled};

  std::mt19937_64 rng(20261202);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<EntityHandle> live;
  auto spawn = [&] {
    const Vec2 p{unit(rng) * 320.0, unit(rng) * 320.0};
    const double r = unit(rng) < 0.7 ? 24.0 : 10.0 + unit(rng) * 30.0;
    const bool observer = unit(rng) < 0.9;
    EntityHandle h;
    for (GridAoi* aoi : all) h = aoi->add(p, r, observer);
    live.push_back(h);
  };
  for (int i = 0; i < 2500; ++i) spawn();

  std::vector<EntityHandle> probe;
  std::vector<EntityHandle> other;
  std::uint32_t crowd_peak = 0;
  for (int tick = 0; tick < 60; ++tick) {
    if (tick > 0) {
      for (const EntityHandle h : live) {
        const Vec2 p = serial.position(h);
        // Mostly walks within the bound; now and then a step beyond it (a teleport).
        const double reach = unit(rng) < 0.01 ? 5.0 : 0.35;
        const Vec2 to{p.x + (unit(rng) - 0.5) * reach, p.y + (unit(rng) - 0.5) * reach};
        for (GridAoi* aoi : all) aoi->move(h, to);
      }
      for (int k = 0; k < 5; ++k) {
        const EntityHandle h = live[rng() % live.size()];
        const Vec2 to{unit(rng) * 320.0, unit(rng) * 320.0};
        for (GridAoi* aoi : all) aoi->move(h, to);
      }
      for (int k = 0; k < 4; ++k) {  // despawns and spawns
        const std::size_t i = rng() % live.size();
        for (GridAoi* aoi : all) aoi->remove(live[i]);
        live[i] = live.back();
        live.pop_back();
        spawn();
      }
      for (int k = 0; k < 6; ++k) {
        const EntityHandle h = live[rng() % live.size()];
        const double r = unit(rng) < 0.5 ? 24.0 : 5.0 + unit(rng) * 40.0;
        for (GridAoi* aoi : all) aoi->set_view_radius(h, r);
      }
      for (int k = 0; k < 3; ++k) {
        const EntityHandle h = live[rng() % live.size()];
        const bool on = !serial.is_observer(h);
        for (GridAoi* aoi : all) aoi->set_observer(h, on);
      }
      if (tick % 20 == 10) {  // every list is rebuilt at the next update
        for (GridAoi* aoi : all)
          REQUIRE(aoi->set_hysteresis(tick % 40 == 10 ? 3.0 : 2.0) ==
                  zone::aoi::GridConfigError::kNone);
      }
    }
    const auto expected = serial.update();
    for (GridAoi* aoi : {&reversed, &threaded, &pooled}) {
      const auto got = aoi->update();
      INFO("tick " << tick << ": " << got.size() << " events against " << expected.size());
      REQUIRE(same_events(expected, got));
      const auto s = serial.stats();
      const auto p = aoi->stats();
      CHECK(s.visible_pairs == p.visible_pairs);
      CHECK(s.mutual_observers == p.mutual_observers);
      CHECK(s.occupied_cells == p.occupied_cells);
      CHECK(s.crowd_members == p.crowd_members);
    }
    crowd_peak = std::max(crowd_peak, serial.stats().crowd_members);
    if (tick % 15 == 0) {
      for (GridAoi* aoi : {&reversed, &threaded, &pooled}) {
        const std::string broken = aoi->check_invariants();
        INFO("tick " << tick << ": " << broken);
        CHECK(broken.empty());
      }
      for (std::size_t i = 0; i < live.size(); i += 97) {
        probe.clear();
        serial.view_set(live[i], probe);
        for (GridAoi* aoi : {&reversed, &threaded, &pooled}) {
          other.clear();
          aoi->view_set(live[i], other);
          CHECK(probe == other);
        }
      }
    }
  }
  // Both phases ran on the workers: every list is rebuilt at 4 updates (the first and
  // after each hysteresis change), 40 pieces each; the crowd's pair tests fill 8 chunks
  // or more on most ticks (55 parallel phases when this was written).
  CHECK(counts.reverse_calls > 4 + 30);
  CHECK(counts.reverse_pieces > 4 * 40);
  CHECK(counts.threaded_pieces.load() == counts.reverse_pieces);
  CHECK(counts.pooled_pieces == counts.reverse_pieces);
  if (crowd > 0) {
    CHECK(crowd_peak > 100);
  } else {
    CHECK(crowd_peak == 0);
  }
}

}  // namespace

TEST_CASE("parallel update: the same events, views and stats for 1, 2 and 3 workers") {
  same_for_any_workers(0);
}

TEST_CASE("parallel update: the same with crowds forming and dissolving") {
  same_for_any_workers(40);
}
