// The rules' timers (game.after, game.cancel): each holds a Lua registry reference to its
// callback and a due time in rules seconds. They fire in order of due time, then of
// creation, so a run is reproducible. Plain C++: the Lua side (taking and letting go of
// the references, calling them) is the caller's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zone::game {

class TimerQueue {
 public:
  // Pending timers at most: a script that schedules without bound is refused, since the
  // queue lives outside the VM's memory budget.
  static constexpr std::uint32_t kMaxPending = 65536;

  struct Due {
    std::int64_t id = 0;
    int ref = 0;  // the callback's registry reference
  };

  // A new timer due at `due` seconds; its id (> 0), or 0 when kMaxPending are pending.
  std::int64_t add(double due, int ref);
  // Removes a pending timer; its reference, or nothing (not pending: fired, cancelled or
  // never given) as false.
  bool cancel(std::int64_t id, int& ref);
  // The next timer due at `now` or earlier that was created before `created_before` (a
  // sequence from next_sequence()), removed from the queue. Timers created while the
  // due ones fire wait for the next tick, even those due at once.
  bool pop_due(double now, std::uint64_t created_before, Due& out);
  std::uint64_t next_sequence() const { return next_seq_; }
  std::size_t pending() const { return pending_; }

 private:
  // Ids carry the slot in their low bits and the creation sequence above them, so a
  // stale id never names a later timer in the same slot.
  static constexpr unsigned kSlotBits = 16;
  struct Slot {
    std::uint64_t seq = 0;  // 0: free
    int ref = 0;
  };
  struct Item {
    double due = 0.0;
    std::uint64_t seq = 0;
    std::uint32_t slot = 0;
  };
  static bool later(const Item& a, const Item& b) {
    return a.due != b.due ? a.due > b.due : a.seq > b.seq;
  }
  // Drops cancelled items once they outnumber the pending ones.
  void compact();

  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;
  std::vector<Item> heap_;  // a min-heap by (due, seq); cancelled items stay until popped
  std::uint64_t next_seq_ = 1;
  std::size_t pending_ = 0;
};

}  // namespace zone::game
