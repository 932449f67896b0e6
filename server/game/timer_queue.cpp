#include "game/timer_queue.hpp"

#include <algorithm>

namespace zone::game {

std::int64_t TimerQueue::add(double due, int ref) {
  if (pending_ >= kMaxPending) return 0;
  std::uint32_t slot = 0;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back({});
  }
  const std::uint64_t seq = next_seq_++;
  slots_[slot] = {seq, ref};
  heap_.push_back({due, seq, slot});
  std::push_heap(heap_.begin(), heap_.end(), later);
  ++pending_;
  compact();
  return static_cast<std::int64_t>((seq << kSlotBits) | slot);
}

bool TimerQueue::cancel(std::int64_t id, int& ref) {
  if (id <= 0) return false;
  const auto bits = static_cast<std::uint64_t>(id);
  const auto slot = static_cast<std::uint32_t>(bits & ((1u << kSlotBits) - 1));
  const std::uint64_t seq = bits >> kSlotBits;
  if (slot >= slots_.size() || slots_[slot].seq != seq || seq == 0) return false;
  ref = slots_[slot].ref;
  slots_[slot] = {};
  free_.push_back(slot);
  --pending_;
  return true;
}

bool TimerQueue::pop_due(double now, std::uint64_t created_before, Due& out) {
  while (!heap_.empty()) {
    const Item top = heap_.front();
    Slot& s = slots_[top.slot];
    if (s.seq != top.seq) {  // cancelled
      std::pop_heap(heap_.begin(), heap_.end(), later);
      heap_.pop_back();
      continue;
    }
    // Items pop in (due, seq) order: once the first pending one is not due, or was
    // created during this round (a later seq at an equal or later due), none is.
    if (top.due > now || top.seq >= created_before) return false;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
    out.id = static_cast<std::int64_t>((top.seq << kSlotBits) | top.slot);
    out.ref = s.ref;
    s = {};
    free_.push_back(top.slot);
    --pending_;
    return true;
  }
  return false;
}

void TimerQueue::compact() {
  if (heap_.size() <= 2 * pending_ + 64) return;
  std::erase_if(heap_, [this](const Item& i) { return slots_[i.slot].seq != i.seq; });
  std::make_heap(heap_.begin(), heap_.end(), later);
}

}  // namespace zone::game
