// The grid AOI's timing wheel: the scheduled re-tests of (observer, target) pairs, filed
// under the tick at which each pair could first change.
//
// Bucket t & mask() holds the tests due at tick t; every test is filed less than a wheel's
// turn ahead. A bucket is a list of fixed-size chunks taken from a free list the buckets
// share, so a bucket grows without copying, the memory follows the number of tests in
// flight, and a chunk whose tests have just run is the next one filled (still in cache).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace zone::aoi {

// A scheduled re-test of one pair. It is stale (and skipped) when either version no longer
// matches the entity's: the observer's list was rebuilt or cleared since, or the target
// teleported or was removed. 12 bytes: the AVX2 pair-test kernel (simd.hpp) reads this
// layout.
struct PairTest {
  static constexpr std::uint32_t kVisibleBit = 0x80000000u;  // in target
  std::uint32_t observer;
  std::uint32_t target;  // kVisibleBit set: the target is in the observer's view
  std::uint8_t observer_version;
  std::uint8_t target_version;
  std::uint16_t view_index;  // where the target probably is in the view (visible only)
};

class TestWheel {
 public:
  static constexpr std::uint32_t kChunkTests = 2048;
  struct Chunk {
    PairTest tests[kChunkTests];
  };
  struct Bucket {
    std::vector<Chunk*> chunks;
    PairTest* next = nullptr;  // where the next test goes, in the last chunk
    PairTest* end = nullptr;   // the end of the last chunk
    // The tests of chunk c, in the order they were filed.
    std::span<const PairTest> chunk(std::size_t c) const {
      const std::size_t n =
          c + 1 == chunks.size() ? static_cast<std::size_t>(next - chunks[c]->tests) : kChunkTests;
      return {chunks[c]->tests, n};
    }
  };

  // Empties every bucket and makes the wheel one turn of at least `ticks` buckets (a power
  // of two).
  void reset(std::uint32_t ticks);
  // Empties every bucket.
  void clear();
  std::uint32_t size() const { return static_cast<std::uint32_t>(buckets_.size()); }
  std::uint32_t mask() const { return mask_; }
  Bucket& bucket(std::uint32_t index) { return buckets_[index]; }
  const Bucket& bucket(std::uint32_t index) const { return buckets_[index]; }
  Bucket& due(std::uint32_t tick) { return buckets_[tick & mask_]; }
  // The buckets, for a loop that files many tests (the wheel is not resized meanwhile).
  Bucket* buckets() { return buckets_.data(); }

  void append(Bucket& bucket, const PairTest& test) {
    if (bucket.next == bucket.end) add_chunk(bucket);
    *bucket.next++ = test;
  }
  void append(Bucket& bucket, std::span<const PairTest> tests);
  // Hands one chunk of a bucket that is being run back to the free list, so that the tests
  // filed from then on may reuse it; forget() then drops the bucket's chunk list.
  void recycle(Chunk* chunk) { free_.push_back(chunk); }
  void forget(Bucket& bucket);
  // Hands every chunk of a bucket back to the free list.
  void release(Bucket& bucket);

 private:
  void add_chunk(Bucket& bucket);

  std::vector<Bucket> buckets_;
  std::vector<std::unique_ptr<Chunk>> store_;
  std::vector<Chunk*> free_;
  std::uint32_t mask_ = 0;
};

}  // namespace zone::aoi
