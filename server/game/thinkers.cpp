#include "game/thinkers.hpp"

namespace zone::game {

void Thinkers::set(std::uint32_t slot, world::EntityId id, double radius) {
  if (slot >= index_of_slot_.size()) index_of_slot_.resize(slot + 1, kNone);
  std::uint32_t& index = index_of_slot_[slot];
  if (index != kNone) {
    list_[index] = {slot, id, radius, true};
    return;
  }
  index = static_cast<std::uint32_t>(list_.size());
  list_.push_back({slot, id, radius, true});
}

void Thinkers::stop(std::uint32_t slot) {
  if (slot >= index_of_slot_.size() || index_of_slot_[slot] == kNone) return;
  list_[index_of_slot_[slot]].active = false;
  dirty_ = true;
}

const Thinker* Thinkers::find(std::uint32_t slot) const {
  if (slot >= index_of_slot_.size() || index_of_slot_[slot] == kNone) return nullptr;
  const Thinker& t = list_[index_of_slot_[slot]];
  return t.active ? &t : nullptr;
}

void Thinkers::compact() {
  if (!dirty_) return;
  dirty_ = false;
  std::size_t kept = 0;
  for (const Thinker& t : list_) {
    if (t.active) {
      list_[kept++] = t;
    } else {
      index_of_slot_[t.slot] = kNone;
    }
  }
  list_.resize(kept);
  for (std::size_t i = 0; i < kept; ++i)
    index_of_slot_[list_[i].slot] = static_cast<std::uint32_t>(i);
}

}  // namespace zone::game
