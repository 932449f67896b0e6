// The AOI's timing wheel (aoi::TestWheel): tests come back from their bucket in the order
// they were filed, across chunk boundaries; buckets are told apart by tick modulo the
// wheel's size; chunks handed back are reused before new ones are made.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "aoi/test_wheel.hpp"

using zone::aoi::PairTest;
using zone::aoi::TestWheel;

namespace {

PairTest numbered(std::uint32_t k) {
  return {k, k ^ 0x5555u, static_cast<std::uint8_t>(k), static_cast<std::uint8_t>(k >> 8),
          static_cast<std::uint16_t>(k * 3)};
}

// Every test of a bucket, chunk by chunk.
std::vector<std::uint32_t> observers(const TestWheel::Bucket& bucket) {
  std::vector<std::uint32_t> out;
  for (std::size_t c = 0; c < bucket.chunks.size(); ++c) {
    for (const PairTest& t : bucket.chunk(c)) out.push_back(t.observer);
  }
  return out;
}

}  // namespace

TEST_CASE("test wheel: a bucket gives its tests back in filing order, across chunks") {
  TestWheel wheel;
  wheel.reset(20);
  CHECK(wheel.size() == 32);  // the next power of two
  CHECK(wheel.mask() == 31);
  const std::uint32_t n = 2 * TestWheel::kChunkTests + 5;
  std::vector<std::uint32_t> expected;
  for (std::uint32_t k = 0; k < n; ++k) {
    // One at a time and in runs: both ways of filing keep the order.
    if (k % 3 == 0) {
      const PairTest run[2] = {numbered(k), numbered(k + 1)};
      wheel.append(wheel.due(7), run);
      expected.push_back(k);
      expected.push_back(k + 1);
      ++k;
    } else {
      wheel.append(wheel.due(7), numbered(k));
      expected.push_back(k);
    }
  }
  const TestWheel::Bucket& bucket = wheel.bucket(7);
  CHECK(bucket.chunks.size() == 3);
  CHECK(observers(bucket) == expected);
  // Every field comes back as filed.
  const PairTest& last = bucket.chunk(2).back();
  const PairTest want = numbered(expected.back());
  CHECK(last.target == want.target);
  CHECK(last.observer_version == want.observer_version);
  CHECK(last.target_version == want.target_version);
  CHECK(last.view_index == want.view_index);
  // Tick 7 + 32 is the same bucket; tick 8 another one.
  CHECK(&wheel.due(7 + 32) == &bucket);
  CHECK(&wheel.due(8) != &bucket);
  CHECK(wheel.due(8).chunks.empty());
}

TEST_CASE("test wheel: chunks handed back are filled again before new ones are made") {
  TestWheel wheel;
  wheel.reset(4);
  for (std::uint32_t k = 0; k < 3 * TestWheel::kChunkTests; ++k) {
    wheel.append(wheel.due(1), numbered(k));
  }
  TestWheel::Bucket& due = wheel.due(1);
  REQUIRE(due.chunks.size() == 3);
  const std::set<TestWheel::Chunk*> first(due.chunks.begin(), due.chunks.end());
  // As the bucket runs, each chunk goes back once its tests are done.
  for (TestWheel::Chunk* chunk : due.chunks) wheel.recycle(chunk);
  wheel.forget(due);
  CHECK(due.chunks.empty());
  for (std::uint32_t k = 0; k < 3 * TestWheel::kChunkTests; ++k) {
    wheel.append(wheel.due(2), numbered(k));
  }
  const TestWheel::Bucket& next = wheel.due(2);
  CHECK(std::set<TestWheel::Chunk*>(next.chunks.begin(), next.chunks.end()) == first);
  // release() hands a whole bucket back; reset() empties them all.
  wheel.release(wheel.due(2));
  CHECK(wheel.due(2).chunks.empty());
  wheel.append(wheel.due(3), numbered(1));
  CHECK(first.count(wheel.due(3).chunks.front()) == 1);
  wheel.reset(4);
  CHECK(wheel.due(3).chunks.empty());
  CHECK(observers(wheel.due(3)).empty());
}
