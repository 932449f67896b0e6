// TimerQueue on its own: order by due time then creation, cancelled timers skipped,
// stale ids refused after their slot is reused, the pending bound.
#include <doctest/doctest.h>

#include <vector>

#include "game/timer_queue.hpp"

using zone::game::TimerQueue;

TEST_CASE("timer queue: due timers pop by due time, then by creation, later ones wait") {
  TimerQueue q;
  const auto b = q.add(2.0, 102);
  const auto a = q.add(1.0, 101);
  q.add(2.0, 103);
  const auto late = q.add(9.0, 109);
  CHECK(a != b);
  CHECK(q.pending() == 4);
  std::vector<int> refs;
  TimerQueue::Due due;
  while (q.pop_due(2.0, q.next_sequence(), due)) refs.push_back(due.ref);
  CHECK(refs == std::vector<int>{101, 102, 103});
  CHECK(q.pending() == 1);
  int ref = 0;
  CHECK(q.cancel(late, ref));
  CHECK(ref == 109);
  CHECK_FALSE(q.cancel(late, ref));
  CHECK_FALSE(q.pop_due(100.0, q.next_sequence(), due));
  CHECK(q.pending() == 0);
}

TEST_CASE("timer queue: a timer made during a round waits for the next, even when due") {
  TimerQueue q;
  q.add(0.0, 1);
  const std::uint64_t round = q.next_sequence();
  TimerQueue::Due due;
  REQUIRE(q.pop_due(0.0, round, due));
  q.add(0.0, 2);  // as a firing timer would
  CHECK_FALSE(q.pop_due(0.0, round, due));
  REQUIRE(q.pop_due(0.0, q.next_sequence(), due));
  CHECK(due.ref == 2);
}

TEST_CASE("timer queue: a stale id never names the timer that reuses its slot") {
  TimerQueue q;
  const auto first = q.add(5.0, 1);
  int ref = 0;
  REQUIRE(q.cancel(first, ref));
  const auto second = q.add(5.0, 2);  // the same slot
  CHECK(second != first);
  CHECK_FALSE(q.cancel(first, ref));
  CHECK_FALSE(q.cancel(0, ref));
  CHECK_FALSE(q.cancel(-7, ref));
  TimerQueue::Due due;
  REQUIRE(q.pop_due(5.0, q.next_sequence(), due));
  CHECK(due.id == second);
  CHECK(due.ref == 2);
}

TEST_CASE("timer queue: at most kMaxPending, and cancelled items do not pile up") {
  TimerQueue q;
  for (std::uint32_t i = 0; i < TimerQueue::kMaxPending; ++i) REQUIRE(q.add(1.0 + i, 0) != 0);
  CHECK(q.add(1.0, 0) == 0);
  // Cancel and re-add far more than the bound: compaction keeps the queue small, and
  // the due order still holds.
  TimerQueue r;
  for (int i = 0; i < 200000; ++i) {
    int ref = 0;
    const auto id = r.add(100.0 + i, i);
    REQUIRE(id != 0);
    if (i % 4 != 0) REQUIRE(r.cancel(id, ref));
  }
  CHECK(r.pending() == 50000);
  TimerQueue::Due due;
  int last = -1;
  int count = 0;
  while (r.pop_due(1e9, r.next_sequence(), due)) {
    CHECK(due.ref % 4 == 0);
    CHECK(due.ref > last);
    last = due.ref;
    ++count;
  }
  CHECK(count == 50000);
}
