#include "aoi/test_wheel.hpp"

#include <algorithm>

namespace zone::aoi {

void TestWheel::reset(std::uint32_t ticks) {
  std::uint32_t n = 1;
  while (n < ticks) n <<= 1;
  clear();
  buckets_.resize(n);
  mask_ = n - 1;
}

void TestWheel::clear() {
  for (Bucket& bucket : buckets_) release(bucket);
}

// A chunk's room at a time.
void TestWheel::append(Bucket& bucket, std::span<const PairTest> tests) {
  while (!tests.empty()) {
    if (bucket.next == bucket.end) add_chunk(bucket);
    const auto k = std::min(tests.size(), static_cast<std::size_t>(bucket.end - bucket.next));
    bucket.next = std::copy_n(tests.begin(), k, bucket.next);
    tests = tests.subspan(k);
  }
}

void TestWheel::forget(Bucket& bucket) {
  bucket.chunks.clear();
  bucket.next = nullptr;
  bucket.end = nullptr;
}

void TestWheel::release(Bucket& bucket) {
  free_.insert(free_.end(), bucket.chunks.begin(), bucket.chunks.end());
  forget(bucket);
}

void TestWheel::add_chunk(Bucket& bucket) {
  if (free_.empty()) {
    store_.push_back(std::make_unique<Chunk>());
    free_.push_back(store_.back().get());
  }
  Chunk* chunk = free_.back();
  free_.pop_back();
  bucket.chunks.push_back(chunk);
  bucket.next = chunk->tests;
  bucket.end = chunk->tests + kChunkTests;
}

}  // namespace zone::aoi
