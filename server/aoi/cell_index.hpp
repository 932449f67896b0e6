// An open-addressing map from a cell's 64-bit key to a 32-bit index: the crowd tier's
// lookup of cells by position (several dozen per cell created). Linear probing in flat
// arrays, deletion by shifting the following entries back, so that nothing is allocated
// once the table has grown to the number of cells in use.
#pragma once

#include <cstdint>
#include <vector>

namespace zone::aoi {

class CellIndex {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  // The index stored under key, or kNone.
  std::uint32_t find(std::uint64_t key) const {
    if (values_.empty()) return kNone;
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (values_[i] == kNone) return kNone;
      if (keys_[i] == key) return values_[i];
    }
  }
  // Stores value (not kNone) under a key that is not present.
  void insert(std::uint64_t key, std::uint32_t value) {
    if (2 * (size_ + 1) > values_.size()) rehash(values_.empty() ? 64 : 2 * values_.size());
    std::size_t i = slot(key);
    while (values_[i] != kNone) i = (i + 1) & mask_;
    keys_[i] = key;
    values_[i] = value;
    ++size_;
  }
  // Removes a key that is present.
  void erase(std::uint64_t key) {
    std::size_t i = slot(key);
    while (keys_[i] != key || values_[i] == kNone) i = (i + 1) & mask_;
    // Shift back every following entry of the run that may not stay behind the hole.
    for (std::size_t j = (i + 1) & mask_; values_[j] != kNone; j = (j + 1) & mask_) {
      const std::size_t home = slot(keys_[j]);
      // j may move to i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
      if (stays) continue;
      keys_[i] = keys_[j];
      values_[i] = values_[j];
      i = j;
    }
    values_[i] = kNone;
    --size_;
  }
  std::size_t size() const { return size_; }

 private:
  std::size_t slot(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void rehash(std::size_t capacity) {
    std::vector<std::uint64_t> keys(capacity);
    std::vector<std::uint32_t> values(capacity, kNone);
    keys.swap(keys_);
    values.swap(values_);
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (values[i] != kNone) insert(keys[i], values[i]);
    }
  }

  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> values_;  // kNone: an empty slot
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace zone::aoi
