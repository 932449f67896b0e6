// WorkerPool (shared/util/worker_pool.hpp): every chunk exactly once, run() waiting for
// chunks and not for workers, and a worker that wakes late doing nothing for a finished
// run. Labelled "threads": make test-tsan runs it under ThreadSanitizer.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "util/worker_pool.hpp"

using zone::util::WorkerPool;

namespace {

// A gate that a held-back worker waits at until the test opens it (or, so that a pool
// that waits for its workers fails the test rather than hanging it, 30 s pass).
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  std::atomic<bool> timed_out{false};
  std::atomic<bool> holding{false};  // a worker waits at the gate
  void wait() {
    holding = true;
    std::unique_lock lock(mutex);
    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return open; })) timed_out = true;
  }
  // Until a worker waits at the gate (it wakes for a run whenever the OS lets it).
  bool await_holding() {
    for (int i = 0; i < 30000 && !holding; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return holding;
  }
  void release() {
    {
      std::lock_guard lock(mutex);
      open = true;
    }
    cv.notify_all();
  }
};

}  // namespace

TEST_CASE("worker pool: every chunk runs exactly once on a worker below size()") {
  for (std::uint32_t workers : {1u, 2u, 3u, 8u}) {
    WorkerPool pool(workers);
    for (std::uint32_t chunks : {0u, 1u, 2u, 7u, 64u, 1000u}) {
      std::vector<std::atomic<int>> calls(chunks);
      std::atomic<bool> bad_worker{false};
      pool.run(chunks, [&](std::uint32_t c, std::uint32_t w) {
        calls[c].fetch_add(1, std::memory_order_relaxed);
        if (w >= pool.size()) bad_worker = true;
      });
      for (std::uint32_t c = 0; c < chunks; ++c) CHECK(calls[c].load() == 1);
      CHECK_FALSE(bad_worker.load());
    }
  }
}

TEST_CASE("worker pool: run() does not wait for a worker that has not woken") {
  // Worker 1 is held at its first wake-up (for run 0) until the test opens the gate; the
  // calling thread and worker 2 do every chunk meanwhile, and run() returns without it,
  // run after run.
  Gate gate;
  std::atomic<int> held_wakes{0};
  std::vector<std::atomic<int>> by_worker(3);
  WorkerPool pool(3, [&](std::uint32_t worker) {
    if (worker == 1 && held_wakes.fetch_add(1) == 0) gate.wait();
  });
  constexpr int kRuns = 50;
  constexpr std::uint32_t kChunks = 16;
  std::vector<std::vector<int>> calls(kRuns, std::vector<int>(kChunks, 0));
  std::mutex calls_mutex;
  for (int r = 0; r < kRuns; ++r) {
    pool.run(kChunks, [&](std::uint32_t c, std::uint32_t w) {
      by_worker[w].fetch_add(1);
      std::lock_guard lock(calls_mutex);
      ++calls[static_cast<std::size_t>(r)][c];
    });
    if (r == 0) REQUIRE(gate.await_holding());
  }
  // Every run finished with worker 1 still held at its first wake-up.
  CHECK_FALSE(gate.timed_out.load());
  CHECK(by_worker[1].load() == 0);
  CHECK(held_wakes.load() == 1);
  // Released, it finds its run long finished and claims nothing of it; the next runs
  // still call every chunk exactly once.
  gate.release();
  for (int r = 0; r < kRuns; ++r) {
    pool.run(kChunks, [&](std::uint32_t, std::uint32_t w) { by_worker[w].fetch_add(1); });
  }
  for (const auto& run : calls) {
    for (int n : run) CHECK(n == 1);
  }
  CHECK(by_worker[0].load() + by_worker[1].load() + by_worker[2].load() == 2 * kRuns * kChunks);
}

TEST_CASE("worker pool: a late worker never runs a chunk of a later run with a stale fn") {
  // Worker 1 is held at its first wake-up (for run 0) while runs go by with other fns and
  // chunk counts (their fns live on the stack of a loop iteration: a stale call would
  // touch a dead object, which ASan and TSan report, and would be counted here as a
  // call to the wrong run).
  Gate gate;
  std::atomic<bool> first{true};
  WorkerPool pool(4, [&](std::uint32_t worker) {
    if (worker == 1 && first.exchange(false)) gate.wait();
  });
  std::mt19937 rng(7);
  constexpr int kRuns = 200;
  std::vector<std::vector<std::atomic<int>>> calls;
  calls.reserve(kRuns);
  for (int r = 0; r < kRuns; ++r) {
    const std::uint32_t chunks = std::uniform_int_distribution<std::uint32_t>(2, 40)(rng);
    calls.emplace_back(chunks);
    auto& mine = calls.back();
    auto expected_run = std::make_unique<int>(r);
    std::atomic<int> wrong{0};
    pool.run(chunks, [&, expected = expected_run.get()](std::uint32_t c, std::uint32_t) {
      if (*expected != r) wrong.fetch_add(1);
      mine[c].fetch_add(1);
    });
    CHECK(wrong.load() == 0);
    if (r == 0) REQUIRE(gate.await_holding());
    if (r == kRuns / 2) gate.release();
  }
  CHECK_FALSE(gate.timed_out.load());
  for (const auto& run : calls) {
    for (const auto& n : run) CHECK(n.load() == 1);
  }
}

TEST_CASE("worker pool: many runs back to back with random chunk counts (stress)") {
  // More workers than this machine has cores, and runs with fewer chunks than workers:
  // workers routinely wake for a run that is over, or wake in the middle of the next.
  for (std::uint32_t workers : {2u, 5u, 9u}) {
    WorkerPool pool(workers);
    std::mt19937 rng(workers);
    std::vector<std::uint64_t> sums(workers);
    for (int r = 0; r < 3000; ++r) {
      const std::uint32_t chunks =
          std::uniform_int_distribution<std::uint32_t>(0, 3 * workers)(rng);
      std::vector<int> calls(chunks, 0);  // plain ints: run() must publish the writes
      std::vector<std::uint64_t> per_worker(workers, 0);
      pool.run(chunks, [&](std::uint32_t c, std::uint32_t w) {
        ++calls[c];
        per_worker[w] += c + 1;  // per-worker scratch, as the replicator's arenas
      });
      std::uint64_t total = 0;
      for (std::uint64_t v : per_worker) total += v;
      bool once = true;
      for (int n : calls) once = once && n == 1;
      REQUIRE(once);
      REQUIRE(total == std::uint64_t{chunks} * (chunks + 1) / 2);
    }
  }
}

TEST_CASE("worker pool: destroyed right after a run or without ever running") {
  for (int i = 0; i < 50; ++i) {
    WorkerPool idle(4);
    WorkerPool pool(4);
    std::atomic<int> n{0};
    pool.run(3, [&](std::uint32_t, std::uint32_t) { n.fetch_add(1); });
    CHECK(n.load() == 3);
  }
}
