// Generational slot map: O(1) handle validation and lookup without hashing.
//
// A handle is a dense slot index plus the generation the slot had when the handle was
// issued. Freeing a slot bumps its generation, so stale handles are detected instead of
// silently aliasing the next entity that reuses the slot.
#pragma once

#include <cstdint>
#include <vector>

namespace zone::aoi {

struct EntityHandle {
  static constexpr std::uint32_t kInvalidIndex = 0xFFFFFFFFu;
  std::uint32_t index = kInvalidIndex;
  std::uint32_t generation = 0;

  bool valid() const { return index != kInvalidIndex; }
  friend bool operator==(EntityHandle, EntityHandle) = default;
};

class SlotMap {
 public:
  // Returns a handle to a fresh or recycled slot. Recycling is LIFO, so the order of
  // allocations is fully determined by the order of allocate/free calls.
  EntityHandle allocate() {
    if (!free_.empty()) {
      const std::uint32_t index = free_.back();
      free_.pop_back();
      live_[index] = 1;
      return {index, generation_[index]};
    }
    const auto index = static_cast<std::uint32_t>(generation_.size());
    generation_.push_back(0);
    live_.push_back(1);
    return {index, 0};
  }

  // Precondition: contains(h).
  void free(EntityHandle h) {
    live_[h.index] = 0;
    ++generation_[h.index];
    free_.push_back(h.index);
  }

  bool contains(EntityHandle h) const {
    return h.index < generation_.size() && live_[h.index] && generation_[h.index] == h.generation;
  }
  bool live(std::uint32_t index) const { return index < live_.size() && live_[index]; }
  EntityHandle handle_at(std::uint32_t index) const { return {index, generation_[index]}; }
  // One past the highest slot index ever allocated.
  std::uint32_t capacity() const { return static_cast<std::uint32_t>(generation_.size()); }
  std::uint32_t size() const { return capacity() - static_cast<std::uint32_t>(free_.size()); }

 private:
  std::vector<std::uint32_t> generation_;
  std::vector<std::uint8_t> live_;
  std::vector<std::uint32_t> free_;
};

}  // namespace zone::aoi
