// A fixed pool of worker threads for data-parallel phases of the tick: run() splits a
// range into chunks that the workers (the calling thread included) take in turn, and
// returns when every chunk is done. Which worker runs a chunk varies from run to run, so
// callers make each chunk's result independent of the worker (per-worker scratch only).
//
// run() waits for chunks, not for workers: it returns as soon as every chunk has been
// run, whether or not every worker thread woke up for it. A worker the OS has not
// scheduled costs the run nothing (the others, the calling thread included, take its
// chunks); when it wakes late it finds the run finished, or a later run, and takes part
// only in the run that is current when it claims a chunk.
//
// How (docs/architecture.md, "Threads"): one 64-bit word, state_, holds the run's
// generation (high 32 bits) and how many of its chunks are still unclaimed (low 32 bits;
// the chunk claimed is chunks_ minus that). A worker claims a chunk with a compare-and-
// swap that lowers the count only if the generation is still the one it woke for, so a
// claim proves that the run is current and not finished: run() cannot return before that
// chunk is done, and fn_ stays valid while the claimer calls it. Only a claimer reads fn_
// and chunks_. pending_ counts the chunks not yet done; the thread that does the last one
// wakes run().
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace zone::util {

class WorkerPool {
 public:
  using ChunkFn = std::function<void(std::uint32_t chunk, std::uint32_t worker)>;
  // Test seam: runs on a worker thread each time it wakes for a run, before it claims a
  // chunk (tests hold a worker back there to show that run() does not wait for it).
  using WakeHook = std::function<void(std::uint32_t worker)>;

  // `workers` counts the calling thread: 1 runs everything inline, N starts N - 1 threads.
  explicit WorkerPool(std::uint32_t workers, WakeHook on_wake = nullptr)
      : workers_(workers < 1 ? 1 : workers), on_wake_(std::move(on_wake)) {
    for (std::uint32_t w = 1; w < workers_; ++w) threads_.emplace_back([this, w] { loop(w); });
  }
  // Not while a run() is under way (the owner's thread calls both).
  ~WorkerPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    start_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  std::uint32_t size() const { return workers_; }

  // Calls fn(chunk, worker) once for every chunk in [0, chunks); worker < size(). Chunks
  // are claimed in order. One run at a time (run() is not reentrant).
  void run(std::uint32_t chunks, const ChunkFn& fn) {
    if (workers_ == 1 || chunks <= 1) {
      for (std::uint32_t c = 0; c < chunks; ++c) fn(c, 0);
      return;
    }
    std::uint32_t generation;
    {
      std::lock_guard lock(mutex_);
      // Every claim of the previous run happened before it returned (its pending_ reached
      // 0), so no thread reads fn_ or pending_ for it any more.
      fn_ = &fn;
      chunks_ = chunks;
      pending_.store(chunks, std::memory_order_relaxed);
      generation = generation_of(state_.load(std::memory_order_relaxed)) + 1;
      // Release: a worker whose claim reads this (or a later claim in its release
      // sequence) sees fn_, chunks_ and pending_ above.
      state_.store(pack(generation, chunks), std::memory_order_release);
    }
    start_cv_.notify_all();
    work(0, generation);
    // Acquire: pairs with every claimer's release decrement, so their chunks' writes are
    // visible to the caller once this returns.
    if (pending_.load(std::memory_order_acquire) != 0) {
      std::unique_lock lock(mutex_);
      done_cv_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
    }
  }

 private:
  static constexpr std::uint64_t pack(std::uint32_t generation, std::uint32_t unclaimed) {
    return (std::uint64_t{generation} << 32) | unclaimed;
  }
  static constexpr std::uint32_t generation_of(std::uint64_t s) {
    return static_cast<std::uint32_t>(s >> 32);
  }
  static constexpr std::uint32_t unclaimed_of(std::uint64_t s) {
    return static_cast<std::uint32_t>(s);
  }

  // Claims and runs chunks of run `generation` until none is left or a later run has
  // started. (A stale compare-and-swap could succeed only if the generation had wrapped
  // around 2^32 runs, with the same count unclaimed, while this thread stood between its
  // load and its compare-and-swap.)
  void work(std::uint32_t worker, std::uint32_t generation) {
    std::uint64_t s = state_.load(std::memory_order_relaxed);
    for (;;) {
      if (generation_of(s) != generation || unclaimed_of(s) == 0) return;
      // Acquire on success: synchronises with run()'s release store of this generation.
      if (!state_.compare_exchange_weak(s, s - 1, std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
        continue;  // s holds the fresh value
      }
      (*fn_)(chunks_ - unclaimed_of(s), worker);
      // Release: publishes the chunk's writes to run(); acquire (for the last one) so the
      // notification below follows every other chunk's decrement.
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        // The last chunk: wake run() (unless this is run()'s own thread). Under the mutex:
        // run() checks pending_ under it before it sleeps, so the wake-up cannot fall
        // between its check and its wait. The mutex and condition variable belong to the
        // pool, not to the run, so touching them after run() has returned is harmless.
        if (worker != 0) {
          std::lock_guard lock(mutex_);
          done_cv_.notify_one();
        }
        return;
      }
      s = state_.load(std::memory_order_relaxed);
    }
  }

  void loop(std::uint32_t worker) {
    std::uint32_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        start_cv_.wait(lock, [&] {
          return stop_ || generation_of(state_.load(std::memory_order_relaxed)) != seen;
        });
        if (stop_) return;
        seen = generation_of(state_.load(std::memory_order_relaxed));
      }
      if (on_wake_) on_wake_(worker);
      work(worker, seen);
    }
  }

  const std::uint32_t workers_;
  const WakeHook on_wake_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  bool stop_ = false;  // under mutex_
  // (generation, chunks unclaimed); written by run() under mutex_, claimed without it.
  std::atomic<std::uint64_t> state_{0};
  // The current run's fn and chunk count: written by run() before it publishes the
  // generation, read only by a thread that has claimed a chunk of that generation.
  const ChunkFn* fn_ = nullptr;
  std::uint32_t chunks_ = 0;
  std::atomic<std::uint32_t> pending_{0};  // chunks of the current run not yet done
};

}  // namespace zone::util
