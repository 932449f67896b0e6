// A fixed pool of worker threads for data-parallel phases of the tick: run() splits a
// range into chunks that the workers (the calling thread included) take in turn, and
// returns when every chunk is done. Which worker runs a chunk varies from run to run, so
// callers make each chunk's result independent of the worker (per-worker scratch only).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace zone::util {

class WorkerPool {
 public:
  using ChunkFn = std::function<void(std::uint32_t chunk, std::uint32_t worker)>;

  // `workers` counts the calling thread: 1 runs everything inline, N starts N - 1 threads.
  explicit WorkerPool(std::uint32_t workers) : workers_(workers < 1 ? 1 : workers) {
    for (std::uint32_t w = 1; w < workers_; ++w) threads_.emplace_back([this, w] { loop(w); });
  }
  ~WorkerPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    start_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  std::uint32_t size() const { return workers_; }

  // Calls fn(chunk, worker) once for every chunk in [0, chunks); worker < size().
  void run(std::uint32_t chunks, const ChunkFn& fn) {
    if (workers_ == 1 || chunks <= 1) {
      for (std::uint32_t c = 0; c < chunks; ++c) fn(c, 0);
      return;
    }
    {
      std::lock_guard lock(mutex_);
      fn_ = &fn;
      chunks_ = chunks;
      next_.store(0);
      busy_ = workers_ - 1;
      ++generation_;
    }
    start_cv_.notify_all();
    work(0);
    std::unique_lock lock(mutex_);
    done_cv_.wait(lock, [&] { return busy_ == 0; });
    fn_ = nullptr;
  }

 private:
  void work(std::uint32_t worker) {
    for (std::uint32_t c = next_.fetch_add(1); c < chunks_; c = next_.fetch_add(1)) {
      (*fn_)(c, worker);
    }
  }
  void loop(std::uint32_t worker) {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        start_cv_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
      }
      work(worker);
      std::lock_guard lock(mutex_);
      if (--busy_ == 0) done_cv_.notify_one();
    }
  }

  const std::uint32_t workers_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  const ChunkFn* fn_ = nullptr;
  std::uint32_t chunks_ = 0;
  std::atomic<std::uint32_t> next_{0};
  std::uint32_t busy_ = 0;
};

}  // namespace zone::util
